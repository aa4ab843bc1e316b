/**
 * `kiln verify [--checks a,b] [--lease-grace 1m] [--temp-grace 1h] [--grace d] [--max-violations n] [--json]`:
 * audits the store's invariants (every publication and ready cache entry points to a whole
 * artifact, no lease left expired, every run held by its one job, a ledger entry exactly for each
 * succeeded stage, no orphaned temp file) and lists each violation with its ids. Exit 0 when
 * healthy, 1 when anything was found (or the audit was stopped by Ctrl-C before the end). Reads in
 * pages, with a progress line on stderr when it is a terminal.
 */
import type { Command } from 'commander';
import { SingleBar } from 'cli-progress';
import { ValidationError } from '../../core/errors.ts';
import { VERIFY_CHECKS, VerifyCheck, type VerifyProgress, type VerifyReport, type Violation } from '../../engine/verify/verify-types.ts';
import { verifyReportView } from '../../http/views.ts';
import type { CliContext } from '../cli-context.ts';
import { ExitCode } from '../exit-codes.ts';
import { withCommandRuntime, type GlobalOptions } from '../global-options.ts';
import { renderTable } from '../text-output.ts';
import { parseDurationOption, parseList } from './option-parsers.ts';

interface VerifyCommandOptions extends GlobalOptions {
  checks?: VerifyCheck[];
  grace?: number;
  leaseGrace?: number;
  tempGrace?: number;
  maxViolations?: number;
  json?: boolean;
}

/** Lease grace unless given: see `DEFAULT_VERIFY_LEASE_GRACE_MS`. */
const DEFAULT_LEASE_GRACE = '1m';

function parseChecks(raw: string): VerifyCheck[] {
  const checks = parseList(raw);
  const unknown = checks.filter((c) => !(VERIFY_CHECKS as readonly string[]).includes(c));
  if (unknown.length > 0) throw new ValidationError(`unknown checks ${unknown.join(', ')}: choose from ${VERIFY_CHECKS.join(', ')}`);
  return checks as VerifyCheck[];
}

function parseCount(raw: string): number {
  if (!/^\d+$/.test(raw)) throw new ValidationError(`expected a whole number, got "${raw}"`);
  return Number(raw);
}

/** A progress line on stderr while the audit reads (terminals only). */
function createProgressLine(ctx: CliContext, firstCheck: VerifyCheck): { update(progress: VerifyProgress): void; stop(): void } {
  if ((ctx.stderr as { isTTY?: boolean }).isTTY !== true) return { update: () => {}, stop: () => {} };
  const bar = new SingleBar({ stream: ctx.stderr, hideCursor: true, format: 'verify {check} | {value} read | {violations} violations | {duration_formatted}' });
  bar.start(0, 0, { check: firstCheck, violations: 0 });
  return {
    update: (p) => bar.update(p.scanned, { check: p.check, violations: p.violations }),
    stop: () => bar.stop(),
  };
}

/** The ids of a violation as `name=value` pairs. */
function formatIds(violation: Violation): string {
  return Object.entries(violation.ids)
    .map(([name, value]) => `${name}=${Array.isArray(value) ? value.join(',') : String(value)}`)
    .join(' ');
}

/** The report for people: each violation, a table per check, and the verdict. */
function formatReport(report: VerifyReport): string {
  const lines = report.violations.map((v) => `${v.kind}  ${v.message}\n  ${formatIds(v)}`);
  if (report.violationCount > report.violations.length) lines.push(`... and ${report.violationCount - report.violations.length} more (raise --max-violations to list them)`);
  if (lines.length > 0) lines.push('');
  const rows = report.checks.map((c) => [c.check, String(c.scanned), String(c.violations), c.complete ? 'yes' : 'no']);
  lines.push(renderTable(['CHECK', 'READ', 'VIOLATIONS', 'COMPLETE'], rows), '');
  if (!report.complete) lines.push('stopped before the end: the store was not read completely');
  lines.push(report.violationCount === 0 ? 'no violations' : `${report.violationCount} violation${report.violationCount === 1 ? '' : 's'}`);
  return lines.join('\n');
}

/** Registers `kiln verify`. */
export function registerVerifyCommand(program: Command, ctx: CliContext): void {
  program
    .command('verify')
    .description("audit the store's invariants and list each violation with its ids (exit 1 if any)")
    .option('--checks <checks>', `checks to run, comma-separated (default all): ${VERIFY_CHECKS.join(', ')}`, parseChecks)
    .option('--lease-grace <duration>', `a job still leased this long after its lease ended is a violation (default ${DEFAULT_LEASE_GRACE})`, parseDurationOption)
    .option('--temp-grace <duration>', 'a temp file last written this long ago is a violation (default worker.tempGraceMs, 1h)', parseDurationOption)
    .option('--grace <duration>', 'both graces at once (--lease-grace and --temp-grace win over it)', parseDurationOption)
    .option('--max-violations <n>', 'list at most n violations; all are counted (default 1000)', parseCount)
    .option('--json', 'print the report as JSON (the shape of GET /v1/verify)')
    .action((_o: VerifyCommandOptions, cmd: Command) => {
      const options = cmd.optsWithGlobals<VerifyCommandOptions>();
      return withCommandRuntime(ctx, options, async ({ kiln, config }) => {
        const stop = new AbortController();
        // A first Ctrl-C ends the audit with what it found so far; a second one exits at once.
        void ctx.shutdownRequested().then(() => stop.abort());
        const firstCheck = VERIFY_CHECKS.find((check) => options.checks?.includes(check) ?? true) ?? VerifyCheck.publications;
        const progress = createProgressLine(ctx, firstCheck);
        let report: VerifyReport;
        try {
          report = await kiln.verify({
            leaseGraceMs: options.leaseGrace ?? options.grace ?? parseDurationOption(DEFAULT_LEASE_GRACE),
            tempGraceMs: options.tempGrace ?? options.grace ?? config.worker.tempGraceMs,
            ...(options.checks === undefined ? {} : { checks: options.checks }),
            ...(options.maxViolations === undefined ? {} : { maxViolations: options.maxViolations }),
            signal: stop.signal,
            onProgress: (p) => progress.update(p),
          });
        } finally {
          progress.stop();
        }
        ctx.out(options.json ? JSON.stringify(verifyReportView(report), null, 2) : formatReport(report));
        if (!report.ok) ctx.exitCode = ExitCode.failure;
      });
    });
}
