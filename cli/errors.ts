/** The command line itself is wrong (unknown command or option, missing value): exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A command ran and failed for a reason the operator can act on: exit code 1, `message` is the one line shown. */
export class CliError extends Error {
  override readonly name = 'CliError';
}

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** The first line of a message, trimmed: errors are shown on one line. */
export function firstLine(text: string): string {
  return (text.split(/\r?\n/, 1)[0] ?? '').trim();
}
