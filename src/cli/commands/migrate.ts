/** `kiln migrate`: brings the store schema up to date (every other command does it too). */
import type { Command } from 'commander';
import type { CliContext } from '../cli-context.ts';
import { withCommandRuntime, type GlobalOptions } from '../global-options.ts';

/** Registers `kiln migrate`. */
export function registerMigrateCommand(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description('apply pending store migrations and print the schema version')
    .action((_o: GlobalOptions, cmd: Command) =>
      withCommandRuntime(ctx, cmd.optsWithGlobals<GlobalOptions>(), async ({ migration, config }) => {
        const applied = migration.applied.length === 0 ? 'already up to date' : `applied ${migration.applied.join(', ')}`;
        ctx.out(`${config.store.path}: schema version ${migration.version} (${applied})`);
      }),
    );
}
