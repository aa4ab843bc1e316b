/**
 * `kiln prune [--dry-run] [--batch-size N] [--json]`: deletes now what retention (kiln.yaml
 * `retention:`) no longer keeps — ended runs past their period with their stage records, ledger
 * entries, jobs and attempt history, and old request records — in batches of short transactions,
 * as the workers' reaper does a batch at a time; `--dry-run` only counts. Artifacts that only the
 * pruned runs referenced are then left to `kiln gc` (or the reaper's GC) after its grace period.
 */
import type { Command } from 'commander';
import type { PruneCounts } from '../../core/ports/retention.ts';
import { pruneExpired } from '../../engine/retention.ts';
import type { ResolvedRetention } from '../../config/retention-settings.ts';
import type { CliContext } from '../cli-context.ts';
import { withCommandRuntime, type GlobalOptions } from '../global-options.ts';
import { renderTable } from '../text-output.ts';
import { parsePositiveInt } from './option-parsers.ts';

interface PruneOptions extends GlobalOptions {
  dryRun?: boolean;
  batchSize?: number;
  json?: boolean;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** A period as kiln.yaml would write it: `7d`, `36h`, `90s`... or `forever`. */
function formatPeriod(ms: number | null): string {
  if (ms === null) return 'forever';
  if (ms % DAY_MS === 0) return `${ms / DAY_MS}d`;
  if (ms % HOUR_MS === 0) return `${ms / HOUR_MS}h`;
  return ms % 1_000 === 0 ? `${ms / 1_000}s` : `${ms}ms`;
}

/** The kinds in print order, with their labels. */
const KINDS: readonly [keyof PruneCounts, string][] = [
  ['runs', 'runs'],
  ['stageRecords', 'stage records'],
  ['ledgerEntries', 'ledger entries'],
  ['jobs', 'jobs'],
  ['attempts', 'failed attempts'],
  ['requests', 'request records'],
];

/** The policy in one line. */
function describePolicy(r: ResolvedRetention): string {
  return `retention: succeeded ${formatPeriod(r.succeededMs)}, failed and dead-lettered ${formatPeriod(r.failedMs)}, cancelled and superseded ${formatPeriod(r.cancelledMs)}, requests ${formatPeriod(r.requestsMs)}`;
}

/** Registers `kiln prune`. */
export function registerPruneCommand(program: Command, ctx: CliContext): void {
  program
    .command('prune')
    .description('delete ended runs and request records past their retention period now (--dry-run: only count them)')
    .option('--dry-run', 'count what would be deleted; delete nothing')
    .option('--batch-size <n>', 'runs per transaction (default retention.batchSize, 100)', parsePositiveInt)
    .option('--json', 'print the counts as JSON')
    .action((_o: PruneOptions, cmd: Command) => {
      const options = cmd.optsWithGlobals<PruneOptions>();
      return withCommandRuntime(ctx, options, async ({ store, config }) => {
        const dryRun = options.dryRun ?? false;
        const settings = { ...config.retention, batchSize: options.batchSize ?? config.retention.batchSize };
        const counts = await pruneExpired(store, settings, { dryRun });
        if (options.json) {
          ctx.out(JSON.stringify({ dryRun, ...counts }));
          return;
        }
        ctx.out(describePolicy(config.retention));
        ctx.out(renderTable(['kind', dryRun ? 'would delete' : 'deleted'], KINDS.map(([kind, label]) => [label, String(counts[kind])])));
      });
    });
}
