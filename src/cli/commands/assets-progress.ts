/**
 * Progress of `kiln assets add` on stderr: two cli-progress bars (files finished, stages done)
 * when stderr is a terminal; otherwise one line per finished file, on stderr, or with `--json` one
 * JSON object per finished file on stdout. Log lines written while the bars are shown are printed
 * above them instead of through them.
 */
import { Writable } from 'node:stream';
import { MultiBar, Presets, type SingleBar } from 'cli-progress';
import type { CliContext } from '../cli-context.ts';
import { formatOutcomeLine, outcomeJson, type FileOutcome } from './assets-summary.ts';

/** How progress is shown. */
export const ProgressMode = {
  /** Two bars on stderr (stderr is a terminal). */
  bars: 'bars',
  /** One line per finished file on stderr. */
  lines: 'lines',
  /** One JSON object per finished file on stdout (`--json`). */
  json: 'json',
} as const;
/** One of {@link ProgressMode}'s values. */
export type ProgressMode = (typeof ProgressMode)[keyof typeof ProgressMode];

/** The progress display of one `assets add`. */
export interface AddProgress {
  readonly mode: ProgressMode;
  /** Where the runtime's log lines go (above the bars while they are shown). */
  readonly logStream: NodeJS.WritableStream;
  /** Shows the bars (bars mode); `stagesTotal` = files x stages per run. */
  start(filesTotal: number, stagesTotal: number): void;
  /** What is happening now (`uploading cat.png`), shown beside the files bar. */
  activity(text: string): void;
  /** Total stages done over all files so far. */
  stagesDone(count: number): void;
  /** A file is finished (its run ended, or it was rejected). */
  fileFinished(outcome: FileOutcome): void;
  /** Removes the bars' timer and leaves their last state on screen. Idempotent. */
  stop(): void;
}

/** Bars when stderr is a terminal and `--json` is off. */
export function progressModeFor(ctx: CliContext, json: boolean): ProgressMode {
  if (json) return ProgressMode.json;
  return (ctx.stderr as { isTTY?: boolean }).isTTY === true ? ProgressMode.bars : ProgressMode.lines;
}

/** Creates the display; nothing is drawn before `start`. */
export function createAddProgress(ctx: CliContext, mode: ProgressMode): AddProgress {
  let multibar: MultiBar | undefined;
  let filesBar: SingleBar | undefined;
  let stagesBar: SingleBar | undefined;
  let filesTotal = 0;
  let finished = 0;
  const logStream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      const text = chunk.toString();
      // MultiBar.log buffers the line and prints it above the bars on the next redraw.
      if (multibar) multibar.log(text.endsWith('\n') ? text : `${text}\n`);
      else ctx.stderr.write(text);
      callback();
    },
  });

  return {
    mode,
    logStream,
    start(files, stages) {
      filesTotal = files;
      if (mode !== ProgressMode.bars) return;
      multibar = new MultiBar({ stream: ctx.stderr, hideCursor: true, clearOnComplete: false, autopadding: true }, Presets.shades_classic);
      filesBar = multibar.create(files, 0, { activity: '' }, { format: 'files  {bar} {value}/{total} {activity}' });
      stagesBar = multibar.create(stages, 0, {}, { format: 'stages {bar} {value}/{total} | {duration_formatted}' });
    },
    activity(text) {
      filesBar?.update({ activity: text });
    },
    stagesDone(count) {
      stagesBar?.update(count);
    },
    fileFinished(outcome) {
      finished += 1;
      if (mode === ProgressMode.json) ctx.out(JSON.stringify(outcomeJson(outcome)));
      else if (mode === ProgressMode.lines) ctx.err(formatOutcomeLine(outcome, finished, filesTotal));
      else filesBar?.update(finished);
    },
    stop() {
      if (!multibar) return;
      // stop() redraws the bars but not the buffered log lines; update() flushes those first.
      multibar.update();
      multibar.stop();
      multibar = undefined;
    },
  };
}
