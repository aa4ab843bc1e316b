/**
 * `kiln tokens create|list|revoke`: API tokens of the HTTP API. `create` prints the secret once
 * (the store keeps only its sha256); `list` never shows a secret, only its last four characters.
 */
import type { Command } from 'commander';
import { ValidationError } from '../../core/errors.ts';
import type { ApiToken } from '../../core/ports/tokens.ts';
import { newTokenSecret, parseTokenScopes, TOKEN_PREFIX, tokenRefusal } from '../../core/tokens.ts';
import { checkTenantName } from '../../core/tenant-keys.ts';
import type { CliContext } from '../cli-context.ts';
import { withCommandRuntime, type GlobalOptions } from '../global-options.ts';
import { formatTime, renderTable } from '../text-output.ts';
import { parseDurationOption } from './option-parsers.ts';

interface CreateOptions extends GlobalOptions {
  tenant: string;
  scopes: string;
  expires?: number;
  name?: string;
  json?: boolean;
}

interface ListOptions extends GlobalOptions {
  json?: boolean;
}

const DAY_MS = 86_400_000;
/** Tenants and names: printable, no control characters, at most this long. */
const MAX_LABEL = 200;
const LABEL = /^[^\p{Cc}]+$/u;

/** `--expires`: `30d`, or a duration such as `12h`, `90m`; must be positive. */
export function parseExpires(raw: string): number {
  const refuse = () => new ValidationError(`--expires must be a positive duration such as 30d, 12h or 90m, got ${JSON.stringify(raw)}`);
  const days = /^([1-9][0-9]{0,4})d$/.exec(raw);
  let ms: number;
  try {
    ms = days ? Number(days[1]) * DAY_MS : parseDurationOption(raw);
  } catch {
    throw refuse();
  }
  if (ms <= 0) throw refuse();
  return ms;
}

/** A tenant or name: 1 to 200 characters, no control characters. */
function checkLabel(flag: string, value: string): string {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.length > MAX_LABEL || !LABEL.test(trimmed)) {
    throw new ValidationError(`${flag} must be 1 to ${MAX_LABEL} characters without control characters, got ${JSON.stringify(value)}`);
  }
  return trimmed;
}

/** A token as `kiln tokens list --json` prints it (never a secret). */
function tokenView(token: ApiToken, now: number) {
  return { ...token, status: tokenRefusal(token, now) ?? 'active' };
}

/** Registers `kiln tokens create`, `kiln tokens list` and `kiln tokens revoke`. */
export function registerTokensCommands(program: Command, ctx: CliContext): void {
  const tokens = program.command('tokens').description('API tokens of the HTTP API: create (the secret is shown once), list, revoke');

  tokens
    .command('create')
    .description('create a token; prints its id and its secret, which is never shown again')
    .requiredOption('--tenant <tenant>', 'the tenant the token acts for')
    .requiredOption('--scopes <scopes>', 'comma-separated: read, submit, operate, admin (admin allows everything)')
    .option('--expires <duration>', 'refused after this long: 30d, 12h, 90m (default: never)', parseExpires)
    .option('--name <name>', 'a label, e.g. ci or dashboard')
    .option('--json', 'print JSON: the token record and its secret')
    .action((_o: CreateOptions, cmd: Command) => {
      const opts = cmd.optsWithGlobals<CreateOptions>();
      // Checked before the store is opened: bad input changes nothing.
      // A tenant's own ids are kept as `<tenant>/<id>` (src/core/tenant-keys.ts): the name cannot hold the separator.
      const tenant = checkTenantName('--tenant', checkLabel('--tenant', opts.tenant));
      const scopes = parseTokenScopes(opts.scopes);
      const name = opts.name === undefined ? null : checkLabel('--name', opts.name);
      return withCommandRuntime(ctx, opts, async ({ store }) => {
        const { secret, secretHash, last4 } = newTokenSecret();
        const expiresAt = opts.expires === undefined ? null : (await store.now()) + opts.expires;
        const token = await store.tokens.create({ tenant, name, scopes, secretHash, last4, expiresAt });
        if (opts.json) return ctx.out(JSON.stringify({ ...token, token: secret }, null, 2));
        ctx.out(`id       ${token.id}`);
        ctx.out(`tenant   ${token.tenant}`);
        ctx.out(`scopes   ${token.scopes.join(',')}`);
        ctx.out(`expires  ${token.expiresAt === null ? 'never' : formatTime(token.expiresAt)}`);
        ctx.out(`token    ${secret}`);
        ctx.out('Keep the token now: kiln stores only its hash and cannot show it again. Send it as "Authorization: Bearer <token>".');
      });
    });

  tokens
    .command('list')
    .description('every token, oldest first, with its status (active, expired, revoked); never a secret')
    .option('--json', 'print JSON')
    .action((_o: ListOptions, cmd: Command) => {
      const opts = cmd.optsWithGlobals<ListOptions>();
      return withCommandRuntime(ctx, opts, async ({ store }) => {
        const [all, now] = await Promise.all([store.tokens.list(), store.now()]);
        const views = all.map((t) => tokenView(t, now));
        if (opts.json) return ctx.out(JSON.stringify(views, null, 2));
        const rows = views.map((t) => [
          t.id,
          t.tenant,
          t.name ?? '-',
          t.scopes.join(','),
          `${TOKEN_PREFIX}…${t.last4}`,
          formatTime(t.createdAt),
          t.expiresAt === null ? 'never' : formatTime(t.expiresAt),
          t.status,
        ]);
        ctx.out(renderTable(['ID', 'TENANT', 'NAME', 'SCOPES', 'TOKEN', 'CREATED', 'EXPIRES', 'STATUS'], rows));
      });
    });

  tokens
    .command('revoke <id>')
    .description('revoke a token: servers refuse it within a few seconds (their cache of verified tokens expires)')
    .action((id: string, _o: GlobalOptions, cmd: Command) =>
      withCommandRuntime(ctx, cmd.optsWithGlobals<GlobalOptions>(), async ({ store }) => {
        const token = await store.tokens.revoke(id);
        ctx.out(`token ${token.id} revoked at ${formatTime(token.revokedAt)}`);
      }),
    );
}
