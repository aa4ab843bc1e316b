/**
 * `kiln gc [--dry-run] [--grace 1h] [--json]`: removes (or lists) the artifacts that no
 * publication, cache entry or live run references and that were last written longer ago than the
 * grace period (the reaper does the same periodically; `worker.artifactGraceMs`).
 */
import type { Command } from 'commander';
import type { CliContext } from '../cli-context.ts';
import { withCommandRuntime, type GlobalOptions } from '../global-options.ts';
import { parseDurationOption } from './option-parsers.ts';

interface GcOptions extends GlobalOptions {
  dryRun?: boolean;
  grace?: number;
  json?: boolean;
}

/** Registers `kiln gc`. */
export function registerGcCommand(program: Command, ctx: CliContext): void {
  program
    .command('gc')
    .description('remove artifacts nothing references any more (--dry-run: only list them)')
    .option('--dry-run', 'list what would be removed; remove nothing')
    .option('--grace <duration>', 'only objects last written longer ago than this (default worker.artifactGraceMs, 1h)', parseDurationOption)
    .option('--json', 'print the report as JSON')
    .action((_o: GcOptions, cmd: Command) => {
      const options = cmd.optsWithGlobals<GcOptions>();
      return withCommandRuntime(ctx, options, async ({ kiln, config }) => {
        const dryRun = options.dryRun ?? false;
        const report = await kiln.collectArtifacts({ graceMs: options.grace ?? config.worker.artifactGraceMs, dryRun });
        if (options.json) {
          ctx.out(JSON.stringify(report));
          return;
        }
        for (const object of report.collected) ctx.out(`${dryRun ? 'would remove' : 'removed'} ${object.ref} (${object.size} bytes)`);
        const verb = dryRun ? 'would remove' : 'removed';
        ctx.out(`${report.scanned} objects: ${report.referenced} referenced, ${report.young} unreferenced but within the grace period, ${verb} ${report.collected.length}`);
      });
    });
}
