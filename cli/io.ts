/** Where a stream of output goes: `process.stdout` and `process.stderr` fit, and so do test captures. */
export interface OutputStream {
  write(chunk: string): unknown;
  /** True when a person is watching (enables the progress bar). */
  isTTY?: boolean;
  columns?: number;
}

/** Everything a command touches outside itself, so tests can run the CLI in-process. */
export interface CliIo {
  /** Results only: the key of `keys create`, the table of `keys list`, export data, summaries. */
  stdout: OutputStream;
  /** Messages for the operator: notes, warnings, progress, errors. */
  stderr: OutputStream;
  env: Record<string, string | undefined>;
  /** Directory relative file paths are read from. */
  cwd: string;
  /** Waits this many milliseconds (`keys revoke`'s second flush). @default a timer */
  sleep?: (ms: number) => Promise<void>;
  /**
   * A signal the operator's Ctrl-C (SIGINT) aborts, for a command that ends cleanly on it (`inventory changes
   * --follow`); only a command that asks for it stops Ctrl-C ending the process. @default never aborted
   */
  interruptSignal?: () => AbortSignal;
}
