/**
 * Named crash points of the worker, a test hook for the chaos harness (test/support/chaos/):
 * `crashPoint(name)` is a no-op unless the process was started with a crash plan in the
 * environment variable `KILN_CRASH_PLAN` (JSON: `{"point":"after-commit","pass":3,"file":"/tmp/hits"}`).
 * Then the plan's point, on its `pass`-th pass in this process, appends one line
 * `<point> <pass> <pid>` to `file` (synchronously, so the line is there before the process dies)
 * and SIGKILLs its own process: a crash at a known place, with no cleanup of any kind.
 * See docs/crash-points.md.
 */
import { appendFileSync } from 'node:fs';

/** The environment variable holding the crash plan (test hook; never set it in production). */
export const CRASH_PLAN_ENV = 'KILN_CRASH_PLAN';

/** The crash points, in the order a job passes them. */
export const CRASH_POINTS = ['after-claim', 'mid-handler', 'after-artifact-write', 'after-commit', 'mid-rollback'] as const;
export type CrashPointName = (typeof CRASH_POINTS)[number];

/** Where one process dies: the `pass`-th time it passes `point`; the hit is appended to `file`. */
export interface CrashPlan {
  point: CrashPointName;
  pass: number;
  file: string;
}

/** Parses a crash plan (the value of {@link CRASH_PLAN_ENV}); throws on anything malformed. */
export function parseCrashPlan(text: string): CrashPlan {
  const raw = JSON.parse(text) as Partial<CrashPlan> | null;
  if (typeof raw !== 'object' || raw === null) throw new TypeError(`${CRASH_PLAN_ENV} must be a JSON object`);
  if (!CRASH_POINTS.includes(raw.point as CrashPointName)) throw new TypeError(`${CRASH_PLAN_ENV}.point must be one of ${CRASH_POINTS.join(', ')}`);
  if (typeof raw.pass !== 'number' || !Number.isInteger(raw.pass) || raw.pass < 1) throw new TypeError(`${CRASH_PLAN_ENV}.pass must be an integer >= 1`);
  if (typeof raw.file !== 'string' || raw.file === '') throw new TypeError(`${CRASH_PLAN_ENV}.file must be a path`);
  return { point: raw.point as CrashPointName, pass: raw.pass, file: raw.file };
}

/** A crash point armed by `plan`: counts the passes of its point and kills the process on the planned one. */
export function armCrashPoint(plan: CrashPlan, kill: () => void = () => process.kill(process.pid, 'SIGKILL')): (name: CrashPointName) => void {
  let passes = 0;
  return (name) => {
    if (name !== plan.point || ++passes !== plan.pass) return;
    appendFileSync(plan.file, `${name} ${passes} ${process.pid}\n`);
    kill();
  };
}

const planText = process.env[CRASH_PLAN_ENV];

/**
 * Marks crash point `name`. Without a plan this is an empty function (decided once, at load);
 * with one, see {@link armCrashPoint}.
 */
export const crashPoint: (name: CrashPointName) => void = planText === undefined || planText === '' ? () => {} : armCrashPoint(parseCrashPlan(planText));

/** True when this process runs with a crash plan (the artifact store is then wrapped, see execute-job.ts). */
export const crashPlanned = planText !== undefined && planText !== '';
