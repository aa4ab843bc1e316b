/**
 * `kiln migrate`: brings the store's schema up to date (every other command does it too on open)
 * and says exactly what happened: which versions this call applied and which version is in force.
 */
import type { Command } from 'commander';
import { describeStore } from '../../config/store-url.ts';
import type { CliContext } from '../cli-context.ts';
import { withCommandRuntime, type GlobalOptions } from '../global-options.ts';

interface MigrateOptions extends GlobalOptions {
  json?: boolean;
}

/** Registers `kiln migrate`. */
export function registerMigrateCommand(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description('apply pending store migrations; print the versions applied and the schema version in force')
    .option('--json', 'print {store, applied, version, latest} as JSON')
    .action((_o: MigrateOptions, cmd: Command) => {
      const options = cmd.optsWithGlobals<MigrateOptions>();
      return withCommandRuntime(ctx, options, async ({ migration, config, store }) => {
        // Read back rather than trust the open: another process may have migrated meanwhile.
        const { current, latest } = await store.schemaVersion();
        const storeName = describeStore(config.store);
        if (options.json) {
          ctx.out(JSON.stringify({ store: storeName, applied: migration.applied, version: current, latest }));
          return;
        }
        ctx.out(`store: ${storeName}`);
        ctx.out(`applied: ${migration.applied.length === 0 ? 'none (already up to date)' : migration.applied.join(', ')}`);
        ctx.out(`schema version ${current} in force (the latest this kiln knows: ${latest})`);
      });
    });
}
