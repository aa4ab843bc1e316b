/**
 * One attempt of a command (a stage's `run`, or its `rollback`): its own working directory, the
 * run's input as a JSON file, the artifacts of earlier stages as files, argv and environment with
 * templates filled in (each value stays one argument: no shell unless `shell: true`), the command
 * run under its supervisor (run-tool.ts), stdout markers read as they come, the exit status mapped
 * to kiln's error classes, and the files of the output dir stored as content-addressed artifacts.
 */
import { writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { ErrorClass, StageFailure } from '../core/errors.ts';
import type { JsonValue } from '../core/model.ts';
import type { StageContext } from '../core/pipeline/define-pipeline.ts';
import { closeAttemptDir, collectOutputs, commandOutputOf, materializeInputs, openAttemptDir, type CommandStageOutput, type InputArtifact } from './attempt-dir.ts';
import { UNLISTED_EXIT_OUTCOME, SIGNAL_EXIT_KEY, type CommandPipelineSpec, type CommandSpec, type CommandStageSpec, type ExitOutcome } from './command-spec.ts';
import { runTool, type RunToolResult } from './run-tool.ts';
import { parseTemplate, renderTemplate, type TemplateRef } from './templates.ts';

/** The command's own timeout runs this much after the stage's, so the engine's timeout is what ends it. */
const TIMEOUT_MARGIN_MS = 1_000;
/** The end of stderr that goes into a failure's message. */
const STDERR_TAIL_LINES = 10;
const STDERR_TAIL_CHARS = 2_000;

/** Which command of a stage an attempt runs. */
export type CommandKind = 'stage' | 'rollback';

/** One attempt to run. */
export interface CommandAttempt {
  pipeline: CommandPipelineSpec;
  stage: CommandStageSpec;
  kind: CommandKind;
  ctx: StageContext;
  /** Aborts the command (kills its process group): the stage's signal, or a cache build's. */
  signal: AbortSignal;
}

/** Text of a JSON value inside an argument: strings as they are, null as nothing, the rest as JSON. */
function asText(value: JsonValue): string {
  if (typeof value === 'string') return value;
  if (value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function unresolved(expression: string, why: string): StageFailure {
  return StageFailure.permanent(`template {{${expression}}} cannot be filled in: ${why}`, { code: 'COMMAND_TEMPLATE_UNRESOLVED', details: { expression } });
}

/** The value of `input.a.b` in `input`, or undefined. */
function inputAt(input: JsonValue, path: readonly string[]): JsonValue | undefined {
  let node: JsonValue | undefined = input;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || Array.isArray(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

/**
 * Resolves references for one stage's templates. Artifacts resolve through `artifactText` (a local
 * path in arguments and environment values, the content ref in keys and subjects). A rollback may
 * name its own stage's outputs and artifacts: a stage that failed has none, which reads as empty.
 */
export function templateResolver(
  a: Pick<CommandAttempt, 'pipeline' | 'stage' | 'kind' | 'ctx'>,
  artifactText: (stage: string, file: string) => string | undefined,
): (ref: TemplateRef, expression: string) => string {
  const { ctx } = a;
  const ownAbsent = (stage: string): boolean => a.kind === 'rollback' && stage === a.stage.name;
  return (ref, expression) => {
    switch (ref.kind) {
      case 'input': {
        const value = inputAt(ctx.input, ref.path);
        if (value !== undefined) return asText(value);
        // A declared optional input without a default is simply absent.
        if (ref.path.length === 1 && a.pipeline.inputs?.[ref.path[0] ?? ''] !== undefined) return '';
        throw unresolved(expression, 'the run input has no such field');
      }
      case 'output': {
        const value = commandOutputOf(ctx.outputs[ref.stage])?.outputs[ref.key];
        if (value !== undefined) return value;
        if (ownAbsent(ref.stage)) return '';
        throw unresolved(expression, `stage ${ref.stage} printed no "::output ${ref.key}=..." line`);
      }
      case 'artifact': {
        const value = artifactText(ref.stage, ref.file);
        if (value !== undefined) return value;
        if (ownAbsent(ref.stage)) return '';
        throw unresolved(expression, `stage ${ref.stage} left no file ${ref.file} in its output dir`);
      }
      case 'run': {
        const run = ctx.run;
        const value = { id: run.id, subjectId: run.subjectId, subjectVersion: run.subjectVersion, pipeline: run.pipeline }[ref.field];
        return value === null ? '' : String(value);
      }
    }
  };
}

/** Fills in a template text. */
export function renderText(text: string, resolve: (ref: TemplateRef, expression: string) => string): string {
  return renderTemplate(parseTemplate(text), resolve);
}

/** The fence of the lock this attempt holds (the stage's `lock`), passed as KILN_LOCK_FENCE; null without one. */
function lockFenceOf(ctx: StageContext): string | null {
  return ctx.lock ? String(ctx.lock.fence) : null;
}

/** The worker's environment without kiln's own variables (a store URL may hold a password). */
function inheritedEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => typeof e[1] === 'string' && !e[0].startsWith('KILN_')));
}

/** What the command is told in KILN_INPUT. */
function inputDocument(a: CommandAttempt, inputs: Record<string, Record<string, InputArtifact>>): JsonValue {
  const { ctx } = a;
  const stages: Record<string, JsonValue> = {};
  for (const [name, value] of Object.entries(ctx.outputs)) {
    const output = commandOutputOf(value);
    if (output) stages[name] = { outputs: output.outputs, artifacts: (inputs[name] ?? {}) as unknown as JsonValue };
  }
  const run = ctx.run;
  return {
    run: { id: run.id, pipeline: run.pipeline, subjectId: run.subjectId, subjectVersion: run.subjectVersion },
    stage: a.stage.name,
    kind: a.kind,
    attempt: ctx.attempt,
    input: ctx.input,
    stages,
  };
}

/** Reads `::progress <percent> [text]` and `::output key=value` lines. */
function markerReader(ctx: StageContext, outputs: Record<string, string>): (line: string) => void {
  return (line) => {
    if (!line.startsWith('::')) return;
    const output = /^::output ([A-Za-z_][A-Za-z0-9_.-]*)=(.*)$/.exec(line);
    if (output) {
      outputs[output[1] as string] = output[2] as string;
      return;
    }
    const progress = /^::progress (\d{1,3}(?:\.\d+)?)(?:\s+(.*))?$/.exec(line);
    if (progress) ctx.progress({ percent: Math.min(100, Number(progress[1])), message: progress[2] ?? '' });
  };
}

/** How the exit status is treated. */
function outcomeOf(stage: CommandStageSpec, result: RunToolResult): ExitOutcome {
  const key = result.signal === null ? String(result.code) : SIGNAL_EXIT_KEY;
  return stage.exitCodes[key] ?? UNLISTED_EXIT_OUTCOME;
}

/** The failure a non-success exit status turns into, with the end of stderr in its message. */
function exitFailure(program: string, result: RunToolResult, outcome: Exclude<ExitOutcome, 'success'>): StageFailure {
  const lines = result.stderr.split('\n').filter((l) => l.trim() !== '');
  const tail = lines.slice(-STDERR_TAIL_LINES).join('\n').slice(-STDERR_TAIL_CHARS);
  const how = result.signal === null ? `exited with code ${result.code}` : `was killed by ${result.signal}`;
  const message = `${basename(program)} ${how}${tail === '' ? '' : `: ${tail}`}`;
  const options = { code: 'COMMAND_FAILED', details: { command: program, exitCode: result.code, signal: result.signal, stderr: tail } };
  if (outcome === ErrorClass.permanent) return StageFailure.permanent(message, options);
  if (outcome === ErrorClass.intervention) return StageFailure.intervention(message, options);
  return StageFailure.retryable(message, options);
}

/** argv and environment of the command, templates filled in. */
function commandLine(command: CommandSpec, resolve: (ref: TemplateRef, expression: string) => string): { program: string; args: string[]; env: Record<string, string> } {
  const env = Object.fromEntries(Object.entries(command.env).map(([k, v]) => [k, renderText(v, resolve)]));
  if (command.shell) return { program: '/bin/sh', args: ['-c', command.argv[0] ?? '', 'kiln-stage'], env };
  const [program = '', ...rest] = command.argv;
  return { program, args: rest.map((arg) => renderText(arg, resolve)), env };
}

/** Runs one attempt of a stage's command (or rollback) and returns the stage output. */
export async function runCommandAttempt(a: CommandAttempt): Promise<CommandStageOutput> {
  const { ctx, stage } = a;
  const command = a.kind === 'rollback' ? stage.rollback : stage.run;
  if (!command) throw new TypeError(`stage ${stage.name} has no ${a.kind} command`);
  const dir = await openAttemptDir(a.pipeline.workDir, ctx.run.id, stage.name, a.kind, ctx.attempt);
  try {
    const inputs = await materializeInputs(ctx.artifacts, dir, ctx.outputs);
    await writeFile(dir.inputFile, JSON.stringify(inputDocument(a, inputs)));
    const resolve = templateResolver(a, (s, file) => inputs[s]?.[file]?.path);
    const { program, args, env } = commandLine(command, resolve);
    const fence = lockFenceOf(ctx);
    const kilnEnv: Record<string, string> = {
      KILN_RUN_ID: ctx.run.id,
      KILN_PIPELINE: ctx.run.pipeline,
      KILN_STAGE: stage.name,
      KILN_JOB_KIND: a.kind,
      KILN_ATTEMPT: String(ctx.attempt),
      KILN_INPUT: dir.inputFile,
      KILN_INPUT_DIR: dir.inputDir,
      KILN_OUTPUT_DIR: dir.outputDir,
      KILN_WORK_DIR: dir.root,
      ...(fence === null ? {} : { KILN_LOCK_FENCE: fence }),
    };
    const outputs: Record<string, string> = {};
    const result = await runTool(program, args, {
      timeoutMs: stage.timeoutMs + TIMEOUT_MARGIN_MS,
      signal: a.signal,
      cwd: command.cwd ?? dir.root,
      env: { ...inheritedEnv(), ...env, ...kilnEnv },
      onLine: markerReader(ctx, outputs),
    });
    const outcome = outcomeOf(stage, result);
    if (outcome !== 'success') throw exitFailure(program, result, outcome);
    // A rollback's files are not artifacts: nothing consumes them.
    const artifacts = a.kind === 'stage' ? await collectOutputs(ctx.artifacts, dir) : {};
    return { outputs, artifacts };
  } finally {
    await closeAttemptDir(dir);
  }
}
