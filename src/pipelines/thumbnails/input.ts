/**
 * The input of a `thumbnails` run: which asset and version, where its bytes come from (an upload
 * already in the artifact store, or `import:<relative path>` under a configured import root), and
 * optionally which profiles to render. Submitted by the routes and `kiln assets add`; checked
 * again here because anyone may submit a run through `POST /v1/runs`.
 */
import { ValidationError, type JsonValue } from '../../index.ts';

/** Where the bytes come from. */
export type AssetSource = { upload: string; declaredType?: string } | { import: string };

/** A checked run input. */
export interface ThumbnailsInput {
  assetId: string;
  version: number;
  source: AssetSource;
  /** Profile names to render; absent = every configured profile. */
  profiles?: string[];
}

/** Asset ids: what fits in a URL path segment unescaped. */
export const ASSET_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const REF = /^sha256:[0-9a-f]{64}$/;
const FIELDS = ['assetId', 'version', 'source', 'profiles'];

function checkSource(raw: unknown, problems: string[]): AssetSource | undefined {
  const source = raw as Record<string, unknown> | null;
  if (typeof source !== 'object' || source === null) return void problems.push('source must be an object');
  if (typeof source['upload'] === 'string' && REF.test(source['upload'])) {
    const declared = source['declaredType'];
    if (declared !== undefined && (typeof declared !== 'string' || declared.length > 255)) problems.push('source.declaredType must be a string');
    return { upload: source['upload'], ...(typeof declared === 'string' ? { declaredType: declared } : {}) };
  }
  if (typeof source['import'] === 'string' && source['import'].startsWith('import:')) return { import: source['import'] };
  problems.push('source must be { upload: "sha256:<hex>" } or { import: "import:<relative path>" }');
  return undefined;
}

/** Validates and normalises a run input; throws `ValidationError` listing every problem. */
export function parseThumbnailsInput(raw: unknown): JsonValue {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ValidationError('thumbnails input must be an object');
  const input = raw as Record<string, unknown>;
  const problems = Object.keys(input)
    .filter((k) => !FIELDS.includes(k))
    .map((k) => `unknown field ${k}`);
  if (typeof input['assetId'] !== 'string' || !ASSET_ID.test(input['assetId'])) problems.push(`assetId must match ${ASSET_ID}`);
  const version = input['version'];
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) problems.push('version must be a positive integer');
  const source = checkSource(input['source'], problems);
  const profiles = input['profiles'];
  if (profiles !== undefined && (!Array.isArray(profiles) || profiles.length === 0 || !profiles.every((p) => typeof p === 'string'))) {
    problems.push('profiles must be a non-empty list of profile names');
  }
  if (problems.length > 0 || !source) throw new ValidationError(`invalid thumbnails input: ${problems.join('; ')}`, { details: { problems } });
  const out: ThumbnailsInput = { assetId: input['assetId'] as string, version: version as number, source, ...(profiles ? { profiles: profiles as string[] } : {}) };
  return out as unknown as JsonValue;
}

/** The input of a running stage (checked at submission). */
export function thumbnailsInput(value: JsonValue): ThumbnailsInput {
  return value as unknown as ThumbnailsInput;
}
