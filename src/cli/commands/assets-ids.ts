/**
 * Asset ids of the files `kiln assets add` uploads: from the file name (readable, and a re-added
 * file becomes a new version of the same asset) or from the content (the same bytes always get the
 * same id, whatever the file is called).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { basename, extname } from 'node:path';
import { ASSET_ID } from '../../pipelines/thumbnails/input.ts';

/** How `--id-from` derives an asset id. */
export const IdFrom = {
  /** The file name without its extension, sanitized to the asset id pattern. */
  name: 'name',
  /** The first {@link HASH_ID_HEX_CHARS} hex characters of the file's sha256. */
  hash: 'hash',
} as const;
/** One of {@link IdFrom}'s values. */
export type IdFrom = (typeof IdFrom)[keyof typeof IdFrom];

/** Length of a content-derived id: 64 bits, so a collision needs billions of distinct files. */
export const HASH_ID_HEX_CHARS = 16;
/** Longest asset id ({@link ASSET_ID} allows 128 characters). */
const MAX_ID_CHARS = 128;

/**
 * The asset id of a file name without its extension: accents dropped (`café` -> `cafe`), every run
 * of characters outside `[A-Za-z0-9._-]` replaced by one `-`, leading characters that are not a
 * letter or digit removed, cut to 128 characters. Undefined when nothing is left (`---.png`).
 */
export function assetIdFromName(path: string): string | undefined {
  const name = basename(path, extname(path));
  const id = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, MAX_ID_CHARS)
    .replace(/-+$/, '');
  return ASSET_ID.test(id) ? id : undefined;
}

/** The content-derived id of a file: the first {@link HASH_ID_HEX_CHARS} hex of its sha256, streamed. */
export async function assetIdFromHash(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex').slice(0, HASH_ID_HEX_CHARS);
}

/** The id of a file; a name that sanitizes to nothing falls back to the content hash. */
export async function assetIdOf(path: string, idFrom: IdFrom): Promise<string> {
  return (idFrom === IdFrom.name ? assetIdFromName(path) : undefined) ?? assetIdFromHash(path);
}
