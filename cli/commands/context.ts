import type { CliIo } from '../io';
import type { Target } from '../target';

/** What a command receives from `run`: its parsed arguments, the I/O, and the target (resolved on first use). */
export interface CommandContext {
  io: CliIo;
  options: Record<string, string | boolean | undefined>;
  positionals: string[];
  /** Resolves where the command acts; commands that need no table (a dry run) never call it. */
  target(): Promise<Target>;
}

/** Writes one line to a stream. */
export function writeLine(stream: CliIo['stdout'], line: string): void {
  stream.write(`${line}\n`);
}
