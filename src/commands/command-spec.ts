/**
 * A pipeline declared in kiln.yaml, resolved: plain, JSON-friendly data that `src/config` builds
 * from the file (durations in ms, paths absolute, templates kept as text) and
 * `createCommandPipeline` turns into a pipeline definition whose stages run commands.
 */
import { ErrorClass } from '../core/errors.ts';
import type { JsonValue } from '../core/model.ts';
import type { StagePolicyOverrides } from '../core/policy/stage-policy.ts';

/** How an exit status is treated: success, or one of kiln's error classes. */
export const ExitOutcome = { success: 'success', ...ErrorClass } as const;
export type ExitOutcome = (typeof ExitOutcome)[keyof typeof ExitOutcome];

/** The key of {@link CommandStageSpec.exitCodes} that maps death by a signal. */
export const SIGNAL_EXIT_KEY = 'signal';

/**
 * Exit statuses by default (sysexits.h): 0 success, 75 (EX_TEMPFAIL) transient, 64 (EX_USAGE) and
 * 65 (EX_DATAERR) permanent, 78 (EX_CONFIG) intervention, death by a signal transient. Any other
 * non-zero code is transient (like any other throw of a TypeScript stage).
 */
export const DEFAULT_EXIT_CODES: Readonly<Record<string, ExitOutcome>> = Object.freeze({
  0: ExitOutcome.success,
  75: ExitOutcome.transient,
  64: ExitOutcome.permanent,
  65: ExitOutcome.permanent,
  78: ExitOutcome.intervention,
  [SIGNAL_EXIT_KEY]: ExitOutcome.transient,
});

/** The outcome of an unlisted non-zero exit code. */
export const UNLISTED_EXIT_OUTCOME: ExitOutcome = ExitOutcome.transient;

/** One command: how to start it. */
export interface CommandSpec {
  /**
   * argv as template texts (no shell): the first is the program (absolute when it was written
   * with a `/`, else looked up on PATH), never a template. With `shell`, one element: the script
   * given to `/bin/sh -c`.
   */
  argv: readonly string[];
  shell: boolean;
  /** Extra environment, values as template texts. */
  env: Readonly<Record<string, string>>;
  /** Absolute working directory; null: the attempt's own directory. */
  cwd: string | null;
}

/** `cache:` of a command stage. */
export interface CommandCacheSpec {
  /** References (`input.url`, `stage.fetch.outputs.etag`) whose values make the key; null: the whole input and every earlier output. */
  key: readonly string[] | null;
  ttlMs: number;
  staleMs: number;
  /** Name of the per-process LRU in front of the shared cache, or null for none. */
  local: string | null;
}

/** `lock:` of a command stage, as declared (enforced by the locks sub-port; see createCommandPipeline). */
export interface CommandLockSpec {
  /** Template text, e.g. `render:{{input.assetId}}`. */
  key: string;
  /** null: `worker.lock.ttl`, else the locks default. */
  ttlMs: number | null;
}

/** `publish:` of a command stage: one file of its output dir becomes a publication in its commit. */
export interface CommandPublishSpec {
  /** File name relative to the output dir. */
  file: string;
  profile: string;
  /** Template text of the subject id; null: the run's subject id. */
  subject: string | null;
}

/** One stage. */
export interface CommandStageSpec {
  name: string;
  /** Queue of its jobs; null: `<pipeline>.<stage>`. */
  queue: string | null;
  run: CommandSpec;
  /** Compensation, run when the run fails for good (also when this stage itself failed). */
  rollback: CommandSpec | null;
  policy: StagePolicyOverrides;
  /** `"<code>"` or `"signal"` -> outcome, defaults included. */
  exitCodes: Readonly<Record<string, ExitOutcome>>;
  cache: CommandCacheSpec | null;
  lock: CommandLockSpec | null;
  publish: readonly CommandPublishSpec[];
  /** The command's own timeout (the stage's resolved timeoutMs): its process group dies then. */
  timeoutMs: number;
}

/** Types an input may declare. */
export const InputType = { string: 'string', number: 'number', integer: 'integer', boolean: 'boolean', object: 'object', array: 'array', any: 'any' } as const;
export type InputType = (typeof InputType)[keyof typeof InputType];

/** One declared input. */
export interface InputSpec {
  type: InputType;
  required: boolean;
  /** Filled in when the input is absent. */
  default?: JsonValue;
}

/** A pipeline declared in kiln.yaml. */
export interface CommandPipelineSpec {
  name: string;
  version: number;
  /** Declared inputs; null: any JSON object is accepted. */
  inputs: Readonly<Record<string, InputSpec>> | null;
  stages: readonly CommandStageSpec[];
  /** Absolute folder under which each attempt gets its own working directory. */
  workDir: string;
}
