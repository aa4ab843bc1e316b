/**
 * Settings of the `thumbnails` pipeline (`pipelines.thumbnails.settings` in kiln.yaml): output
 * profiles, upload and pixel limits, and the directories `import:` sources may come from.
 *
 * ```yaml
 * pipelines:
 *   thumbnails:
 *     settings:
 *       maxUploadBytes: 52428800
 *       maxPixels: 100000000
 *       svgRenderBudgetMs: 30000
 *       importRoots: [/srv/images]
 *       profiles:
 *         thumb: { maxSidePx: 128, format: png }
 * ```
 */
import { isAbsolute } from 'node:path';
import { ValidationError, type JsonValue } from '../../index.ts';
import { DEFAULT_SVG_RENDER_BUDGET_MS } from './media/normalize.ts';
import { DEFAULT_PROFILES, parseProfiles, type RenderProfile } from './media/render-profile.ts';

/** The parsed settings. */
export interface ThumbnailsSettings {
  profiles: RenderProfile[];
  /** Largest accepted upload or import. */
  maxUploadBytes: number;
  /** Largest accepted width x height (x frames); checked from the header before decoding. */
  maxPixels: number;
  /** Absolute directories `import:<relative path>` sources are resolved in. */
  importRoots: string[];
  /** Longest an SVG may take to rasterize; past it the asset fails as permanent `ASSET_TOO_COMPLEX`. */
  svgRenderBudgetMs: number;
}

const DEFAULTS = { maxUploadBytes: 50 * 1024 * 1024, maxPixels: 100_000_000, svgRenderBudgetMs: DEFAULT_SVG_RENDER_BUDGET_MS } as const;
const FIELDS = ['profiles', 'maxUploadBytes', 'maxPixels', 'importRoots', 'svgRenderBudgetMs'];

function positiveInteger(raw: Record<string, unknown>, field: keyof typeof DEFAULTS, problems: string[]): number {
  const value = raw[field] ?? DEFAULTS[field];
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  problems.push(`${field} must be a positive integer`);
  return DEFAULTS[field];
}

function importRoots(raw: unknown, problems: string[]): string[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || !raw.every((r) => typeof r === 'string' && isAbsolute(r))) {
    problems.push('importRoots must be a list of absolute directory paths');
    return [];
  }
  return raw as string[];
}

/** kiln.yaml writes profiles as a mapping by name; parsed settings hold a list (accepted back). */
function asMapping(profiles: unknown): unknown {
  if (!Array.isArray(profiles)) return profiles;
  return Object.fromEntries(profiles.map((p: RenderProfile) => [p.name, { maxSidePx: p.maxSidePx, format: p.format, ...(p.quality === undefined ? {} : { quality: p.quality }) }]));
}

/** Validates kiln.yaml's settings (undefined: all defaults); accepts its own output. */
export function parseThumbnailsSettings(raw: unknown): JsonValue {
  const input = raw ?? {};
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new ValidationError('thumbnails settings must be a mapping');
  const record = input as Record<string, unknown>;
  const problems = Object.keys(record)
    .filter((k) => !FIELDS.includes(k))
    .map((k) => `unknown field ${k} (known: ${FIELDS.join(', ')})`);
  const settings: ThumbnailsSettings = {
    profiles: record['profiles'] === undefined ? DEFAULT_PROFILES.map((p) => ({ ...p })) : parseProfiles(asMapping(record['profiles'])),
    maxUploadBytes: positiveInteger(record, 'maxUploadBytes', problems),
    maxPixels: positiveInteger(record, 'maxPixels', problems),
    importRoots: importRoots(record['importRoots'], problems),
    svgRenderBudgetMs: positiveInteger(record, 'svgRenderBudgetMs', problems),
  };
  if (problems.length > 0) throw new ValidationError(`invalid thumbnails settings: ${problems.join('; ')}`, { details: { problems } });
  return settings as unknown as JsonValue;
}

/** The settings a stage or route got from the engine (parsed at start-up). */
export function thumbnailsSettings(value: JsonValue): ThumbnailsSettings {
  return value as unknown as ThumbnailsSettings;
}
