/** Statistics, alternation, targets and tables shared by the benchmark's measurements. */

/** A line of the bench's progress, on stderr: stdout is the report. */
export function progress(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}

/** The value at quantile `q` (0..1) of `values`, by the nearest-rank method. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

export const median = (values: readonly number[]) => quantile(values, 0.5);

export function round(value: number, decimals = 1): number {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
}

/** `value / baseline`, rounded to 2 decimals: the figure every target is stated in. */
export const ratio = (value: number, baseline: number) => round(value / baseline, 2);

/**
 * Runs every task once per round in a new random order (Fisher–Yates), so that drift and what one task leaves the
 * next (garbage, a busy DynamoDB Local) hit every task alike.
 */
export async function alternate(
  rounds: number,
  tasks: readonly (() => Promise<void>)[],
  random: () => number = Math.random,
): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    const order = [...tasks];
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j] as () => Promise<void>, order[i] as () => Promise<void>];
    }
    for (const task of order) await task();
  }
}

export interface Target {
  target: string;
  value: number;
  limit: number;
  met: boolean;
}

/** A figure that meets its target when it is at most `limit` (at least, when `atLeast`). */
export function target(name: string, value: number, limit: number, atLeast = false): Target {
  return { target: name, value, limit, met: atLeast ? value >= limit : value <= limit };
}

/** A Markdown table (also readable in a terminal) of `rows`, one column per `[header, cell]`; no cell shows `-`. */
export function columnsTable<T>(
  rows: readonly T[],
  columns: readonly (readonly [string, (row: T) => string | number | undefined])[],
): string {
  const line = (cells: readonly (string | number | undefined)[]) =>
    `| ${cells.map((cell) => String(cell ?? '-')).join(' | ')} |`;
  return [
    line(columns.map(([header]) => header)),
    line(columns.map(() => '---')),
    ...rows.map((row) => line(columns.map(([, cell]) => cell(row)))),
  ].join('\n');
}

/** The targets table: each target, its value, its limit and whether it is met. */
export function targetsTable(targets: readonly Target[]): string {
  return columnsTable(targets, [
    ['target', (t) => t.target],
    ['value', (t) => t.value],
    ['limit', (t) => t.limit],
    ['met', (t) => (t.met ? 'yes' : 'NO')],
  ]);
}
