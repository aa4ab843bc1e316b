/**
 * Which artifact store a process opens: the filesystem store under `artifacts.root` (the default;
 * with its byte limit `artifacts.maxBytes`, when set), or the S3 store at `artifacts.url`; either
 * way small buffers (`artifacts.inlineMaxBytes`) are kept in the store itself. The
 * highest source (file < env) that names one wins, so
 * `KILN_ARTIFACTS=/dir` overrides an `artifacts.url` in kiln.yaml and `KILN_ARTIFACTS_URL` one's
 * `root`; within one source, `url` wins over `root`. The S3 connection fields (`endpoint`, `region`,
 * `forcePathStyle`, `accessKeyId`, `secretAccessKey`) are kiln.yaml's; what they leave unset comes
 * from the standard AWS environment when the client is built.
 */
import type { ResolvedS3Artifacts } from './schema.ts';

type ArtifactFields = Readonly<Record<string, unknown>>;

const S3_FIELDS = ['endpoint', 'region', 'forcePathStyle', 'accessKeyId', 'secretAccessKey'] as const;

/** The `artifacts` section from `merged` (every field) and `sources` (file, env: which one selects). */
export function resolveArtifacts(
  merged: ArtifactFields,
  sources: readonly (ArtifactFields | undefined)[],
): { root: string; maxBytes?: number; inlineMaxBytes: number; s3?: ResolvedS3Artifacts } {
  let url: string | undefined;
  for (const fields of sources) {
    if (typeof fields?.['url'] === 'string') url = fields['url'];
    else if (typeof fields?.['root'] === 'string') url = undefined;
  }
  const root = merged['root'] as string;
  // The inline tier sits in front of either store (its default comes from the schema).
  const inlineMaxBytes = merged['inlineMaxBytes'] as number;
  // The byte limit is the filesystem store's; an S3 bucket has none.
  if (url === undefined) return typeof merged['maxBytes'] === 'number' ? { root, maxBytes: merged['maxBytes'], inlineMaxBytes } : { root, inlineMaxBytes };
  const s3: ResolvedS3Artifacts = { url };
  for (const key of S3_FIELDS) if (merged[key] !== undefined) (s3 as unknown as Record<string, unknown>)[key] = merged[key];
  return { root, inlineMaxBytes, s3 };
}
