/**
 * `kiln assets add|get|show`: the `thumbnails` pipeline from the command line, against the store
 * directly (no server needed). `add` uploads files and runs a worker in this process until their
 * runs end; `get` writes a published output to a file; `show` lists an asset's versions and
 * publications.
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { PipelineError, ValidationError } from '../../core/errors.ts';
import { checkTenantName } from '../../core/tenant-keys.ts';
import { createAssetService, type AssetService, type AssetView } from '../../pipelines/thumbnails/asset-service.ts';
import { THUMBNAILS_PIPELINE } from '../../pipelines/thumbnails/pipeline.ts';
import { thumbnailsSettings } from '../../pipelines/thumbnails/settings.ts';
import type { CliContext } from '../cli-context.ts';
import { ExitCode } from '../exit-codes.ts';
import { openCommandRuntime, withCommandRuntime, type GlobalOptions } from '../global-options.ts';
import type { Runtime } from '../runtime.ts';
import { formatTime, renderTable } from '../text-output.ts';
import { addAssets } from './assets-add.ts';
import { expandFileArguments } from './assets-glob.ts';
import { IdFrom } from './assets-ids.ts';
import { createAddProgress, progressModeFor } from './assets-progress.ts';
import { formatAddSummary, isOutcomeOk, isUnfinished } from './assets-summary.ts';
import { parseDurationOption, parseList } from './option-parsers.ts';

/** `--tenant` of `kiln assets`: whose assets (ids are per tenant once API tokens are in use). */
interface TenantOption {
  tenant?: string;
}

interface AddOptions extends GlobalOptions, TenantOption {
  profile: string[];
  profiles?: string[];
  idFrom: IdFrom;
  timeout?: number;
  json?: boolean;
}

interface GetOptions extends GlobalOptions, TenantOption {
  output: string;
}

interface ShowOptions extends GlobalOptions, TenantOption {
  json?: boolean;
}

/** The tenant of `--tenant` (null without it); a name holding the key separator is refused. */
function tenantOf(opts: TenantOption): string | null {
  return opts.tenant === undefined ? null : checkTenantName('--tenant', opts.tenant);
}

/** The profiles asked for by `--profile` and `--profiles` (undefined: all), checked against the configured ones. */
function wantedProfiles(rt: Runtime, opts: AddOptions): string[] | undefined {
  const wanted = [...new Set([...opts.profile, ...(opts.profiles ?? [])])];
  if (wanted.length === 0) return undefined;
  const known = thumbnailsSettings(rt.kiln.settingsOf(THUMBNAILS_PIPELINE)).profiles.map((p) => p.name);
  const unknown = wanted.filter((p) => !known.includes(p));
  if (unknown.length > 0) throw new ValidationError(`unknown profile ${unknown.join(', ')} (configured: ${known.join(', ')})`, { details: { unknown, known } });
  return wanted;
}

async function add(ctx: CliContext, patterns: string[], opts: AddOptions): Promise<void> {
  // Every argument must match before the store is even opened: a typo adds nothing.
  const files = await expandFileArguments(patterns, ctx.cwd);
  const progress = createAddProgress(ctx, progressModeFor(ctx, opts.json === true));
  const rt = await openCommandRuntime(ctx, opts, { logDestination: progress.logStream });
  try {
    if (!rt.kiln.pipelines.has(THUMBNAILS_PIPELINE)) throw new ValidationError(`pipeline ${THUMBNAILS_PIPELINE} is not registered`);
    const profiles = wantedProfiles(rt, opts);
    const outcomes = await addAssets(
      rt,
      files,
      {
        idFrom: opts.idFrom,
        tenant: tenantOf(opts),
        ...(profiles ? { profiles } : {}),
        ...(opts.timeout === undefined ? {} : { deadlineAt: Date.now() + opts.timeout }),
        interrupted: ctx.shutdownRequested(),
      },
      progress,
    ).finally(() => progress.stop());
    // With --json the per-file lines already are the result; a table would break the stream.
    if (!opts.json) ctx.out(formatAddSummary(outcomes));
    const unfinished = outcomes.filter(isUnfinished).length;
    if (unfinished > 0) ctx.err(`kiln: stopped waiting with ${unfinished} run(s) unfinished; they stay in the store and any worker (kiln worker, kiln serve) completes them`);
    ctx.exitCode = outcomes.every(isOutcomeOk) ? ExitCode.ok : ExitCode.failure;
  } finally {
    await rt.close();
  }
}

/** The NOT_FOUND of `get`, saying whether the asset is unknown or only that profile is unpublished. */
async function notPublished(service: AssetService, assetId: string, profile: string): Promise<PipelineError> {
  const view = await service.describe(assetId).catch(() => undefined);
  const message = view
    ? `asset ${assetId} has no published ${profile} output (published: ${Object.keys(view.publications).join(', ') || 'none'}; see kiln assets show ${assetId})`
    : `no asset ${assetId} in this store (check --db / --store)`;
  return new PipelineError('NOT_FOUND', message, false, { details: { assetId, profile } });
}

async function get(ctx: CliContext, assetId: string, profile: string, opts: GetOptions): Promise<void> {
  await withCommandRuntime(ctx, opts, async (rt) => {
    const service = createAssetService(rt.kiln, tenantOf(opts));
    const found = await service.read(assetId, profile).catch(async (err: unknown) => {
      throw err instanceof PipelineError && err.code === 'NOT_FOUND' ? await notPublished(service, assetId, profile) : err;
    });
    const path = resolve(ctx.cwd, opts.output);
    await writeFile(path, found.bytes);
    const { subjectVersion, artifactRef } = found.publication;
    ctx.err(`kiln: wrote ${found.bytes.byteLength} bytes (${assetId} v${subjectVersion} ${profile}, ${artifactRef}) to ${path}`);
  });
}

/** `kiln assets show` as text: the versions, newest first, then the publications. */
function formatAssetView(view: AssetView): string {
  const versions = renderTable(
    ['VERSION', 'RUN', 'STATUS', 'ERROR'],
    view.versions.map((v) => {
      const error = v.error as { code?: string; message?: string } | null;
      return [String(v.version), v.run_id, v.status, error ? `${error.code ?? ''}: ${error.message ?? ''}` : ''];
    }),
  );
  const entries = Object.entries(view.publications);
  const publications =
    entries.length === 0
      ? 'no publications'
      : renderTable(
          ['PROFILE', 'VERSION', 'ARTIFACT', 'UPDATED'],
          entries.map(([profile, p]) => [profile, String(p.version), p.artifact, formatTime(p.updated_at)]),
        );
  // The listing is one page: say that older versions exist rather than drop them silently.
  const more = view.next_before === null ? '' : `\n(newest ${view.versions.length} versions shown; older ones: GET /v1/assets/${view.asset_id}?before=${view.next_before})`;
  return `asset ${view.asset_id}\n\n${versions}${more}\n\n${publications}`;
}

const ADD_HELP = `
Files and globs:
  kiln expands globs itself (quote them so the shell passes them on): * and ? match
  within one path segment, a ** segment matches any number of directories. Names
  starting with . match only a segment that starts with . too; ** skips hidden
  directories and does not follow links to directories. An argument that matches
  nothing adds nothing at all (exit 2).

Asset ids:
  --id-from name   the file name without extension, accents dropped, other characters
                   outside A-Z a-z 0-9 . _ - replaced by -  (Café photo (1).png -> Cafe-photo-1)
  --id-from hash   the first 16 hex characters of the file's sha256 (same bytes, same id)
  Files that map to one id become its versions 1, 2, ... in argument order; only the
  newest is published and the older runs end superseded (not a failure).

Output:
  On a terminal, two progress bars on stderr (files, stages); otherwise one line per
  finished file on stderr. Then a table on stdout: file, asset id, version, status,
  profiles published or the error code. Exit 1 if any file failed or did not finish.`;

function registerAdd(assets: Command, ctx: CliContext): void {
  assets
    .command('add <files...>')
    .description('upload image files (paths or quoted globs: * ? and ** for any depth) and wait until every run ended; exit 1 if any failed')
    .addOption(
      new Option('--profile <name>', 'render only this profile (repeatable)').argParser((v: string, acc: string[]) => [...acc, v]).default([], 'every configured profile'),
    )
    .option('--profiles <a,b>', 'render only these profiles, comma-separated', parseList)
    .addOption(new Option('--id-from <how>', 'asset id from the file name (sanitized) or the first 16 hex of its sha256').choices(Object.values(IdFrom)).default(IdFrom.name))
    .option('--timeout <duration>', 'stop waiting after this long (e.g. 10m); unfinished runs stay in the store', parseDurationOption)
    .option('--json', 'print one JSON object per file as it finishes (no bars, no table)')
    .addHelpText('after', ADD_HELP)
    .action((patterns: string[], _o: AddOptions, cmd: Command) => add(ctx, patterns, cmd.optsWithGlobals<AddOptions>()));
}

/** Registers `kiln assets add`, `kiln assets get` and `kiln assets show`. */
export function registerAssetsCommands(program: Command, ctx: CliContext): void {
  const assets = program
    .command('assets')
    .description('image assets through the thumbnails pipeline (no server needed)')
    .option('--tenant <tenant>', "act on this tenant's assets (asset ids are per tenant, as a token of that tenant sees them over HTTP); default: assets without a tenant");
  registerAdd(assets, ctx);
  assets
    .command('get <id> <profile>')
    .description('write the published output of a profile to a file (exit 3 when nothing is published)')
    .requiredOption('-o, --output <file>', 'where to write the bytes')
    .action((id: string, profile: string, _o: GetOptions, cmd: Command) => get(ctx, id, profile, cmd.optsWithGlobals<GetOptions>()));
  assets
    .command('show <id>')
    .description("an asset's versions (with run status) and publications")
    .option('--json', 'print JSON (the same shape as GET /v1/assets/:id)')
    .action((id: string, _o: ShowOptions, cmd: Command) => {
      const opts = cmd.optsWithGlobals<ShowOptions>();
      return withCommandRuntime(ctx, opts, async (rt) => {
        const view = await createAssetService(rt.kiln, tenantOf(opts)).describe(id);
        ctx.out(opts.json ? JSON.stringify(view, null, 2) : formatAssetView(view));
      });
    });
}
