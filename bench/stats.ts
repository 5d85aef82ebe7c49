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

/** Runs `tasks` in a rotated order each round, so that drift of the machine hits every task alike. */
export async function alternate(rounds: number, tasks: readonly (() => Promise<void>)[]): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < tasks.length; i++) await (tasks[(r + i) % tasks.length] as () => Promise<void>)();
  }
}

/** Renders rows as a Markdown table (also readable in a terminal). */
export function markdownTable(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.map(String).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
