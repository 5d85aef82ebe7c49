/** Small statistics and formatting helpers of the benchmark. */

/** The value at quantile `q` (0..1) of `values`, by the nearest-rank method. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** `value / baseline`, rounded to 2 decimals: the figure every target is stated in. */
export function ratio(value: number, baseline: number): number {
  return Math.round((value / baseline) * 100) / 100;
}

export function round(value: number, decimals = 1): number {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
}

/**
 * Runs every task once per round, in a new random order each round, so that drift of the machine, and whatever one
 * task leaves behind for the next (a busy DynamoDB Local, garbage to collect), hit every task alike. A rotation
 * (each task leading in turn) kept the same neighbours every round: in the PATCH benchmark the plain PATCH always
 * came right after the idempotency utility's writes, and was the one PATCH that measured slower.
 */
export async function alternate(
  rounds: number,
  tasks: readonly (() => Promise<void>)[],
  random: () => number = Math.random,
): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    for (const task of shuffled(tasks, random)) await task();
  }
}

/** A copy of `items` in a uniformly random order (Fisher–Yates). */
export function shuffled<T>(items: readonly T[], random: () => number = Math.random): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

/** Renders rows as a Markdown table (also readable in a terminal). */
export function markdownTable(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.map(String).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
