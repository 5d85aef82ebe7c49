/** Statistics, alternation, targets and tables shared by the benchmark's measurements. */

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
 * Runs every task once per round in a new random order, so that drift and what one task leaves the next (garbage,
 * a busy DynamoDB Local) hit every task alike.
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

/** p50 and p99 (ms) of each of a set of alternated calls. */
export interface Latencies<K extends string> {
  p50Ms: Record<K, number>;
  p99Ms: Record<K, number>;
}

/** Times each task in {@link alternate} rounds, `warmup` rounds first (not kept), then `iterations` rounds. */
export async function timeAlternating<K extends string>(
  tasks: Record<K, () => Promise<void>>,
  warmup: number,
  iterations: number,
): Promise<Latencies<K>> {
  const names = Object.keys(tasks) as K[];
  const samples = new Map<K, number[]>(names.map((name) => [name, []]));
  const timed = (name: K) => async () => {
    const started = performance.now();
    await tasks[name]();
    samples.get(name)?.push(performance.now() - started);
  };
  await alternate(warmup, names.map(timed));
  for (const list of samples.values()) list.length = 0;
  await alternate(iterations, names.map(timed));
  const at = (q: number) =>
    Object.fromEntries(names.map((name) => [name, round(quantile(samples.get(name) ?? [], q), 2)])) as Record<
      K,
      number
    >;
  return { p50Ms: at(0.5), p99Ms: at(0.99) };
}

export interface Target {
  target: string;
  value: number;
  limit: number;
  met: boolean;
}

/** A figure that meets its target when it is at most `limit`. */
export function targetAtMost(target: string, value: number, limit: number): Target {
  return { target, value, limit, met: value <= limit };
}

/** Renders rows as a Markdown table (also readable in a terminal); an absent cell shows as `-`. */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly (string | number | undefined)[])[],
): string {
  const line = (cells: readonly (string | number | undefined)[]) =>
    `| ${cells.map((cell) => String(cell ?? '-')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** A table of `rows`, one column per `[header, cell]` pair. */
export function columnsTable<T>(
  rows: readonly T[],
  columns: readonly (readonly [string, (row: T) => string | number | undefined])[],
): string {
  return markdownTable(
    columns.map(([header]) => header),
    rows.map((row) => columns.map(([, cell]) => cell(row))),
  );
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
