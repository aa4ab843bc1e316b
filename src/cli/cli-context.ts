/**
 * What a command may touch of its process: output streams, environment, working directory,
 * shutdown signals and the exit code. Commands never reach for `process` themselves, so the
 * process-level decisions (exit, signal policy) stay in `main.ts`.
 */

/** The process surface handed to every command. */
export interface CliContext {
  /** Writes `text` and a newline to stdout. */
  out(text: string): void;
  /** Writes `text` and a newline to stderr. */
  err(text: string): void;
  /** The stderr stream itself, for logs of commands whose stdout is their result. */
  readonly stderr: NodeJS.WritableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /**
   * Resolves with the signal name on the first SIGTERM or SIGINT. Handlers are installed on the
   * first call, so short commands keep the default Ctrl-C behaviour. A second signal exits at once.
   */
  shutdownRequested(): Promise<string>;
  /** Exit code used when the command returns normally; 0 unless a command sets it. */
  exitCode: number;
}
