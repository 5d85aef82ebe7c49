/** Timing (tinybench's), percentiles, targets and tables shared by the bench's measurements. */
import { Bench } from 'tinybench';

/** A line of the bench's progress, on stderr: stdout is the report. */
export const progress = (line: string) => void process.stderr.write(`[bench] ${line}\n`);

/**
 * Times every task `iterations` times, in blocks of `block` with the tasks in a new random order each round, so
 * that the machine's drift and what one task leaves the next hit every task alike; the first round warms each up.
 */
export async function interleaved(
  tasks: Record<string, () => Promise<unknown>>,
  iterations: number,
  { block = 20, warmup = 0 } = {},
): Promise<Record<string, number[]>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(tasks).map((name) => [name, []]));
  for (let done = 0; done < iterations; done += block) {
    const bench = new Bench({
      iterations: Math.min(block, iterations - done),
      time: 0,
      warmup: done === 0 && warmup > 0,
      warmupIterations: warmup,
      warmupTime: 0,
      retainSamples: true,
      throws: true,
    });
    const order = Object.keys(tasks).map((name) => ({ name, key: Math.random() }));
    // Each an async function: tinybench calls any other once, unawaited, to learn whether it returns a promise, and
    // that extra call would race the task's next one (two writes of one pet in flight).
    for (const { name } of order.sort((a, b) => a.key - b.key)) {
      const task = tasks[name] as () => Promise<unknown>;
      bench.add(name, async () => task());
    }
    await bench.run();
    for (const task of bench.tasks) {
      if (task.result.state !== 'completed') throw new Error(`${task.name}: ${task.result.state}`);
      samples[task.name]?.push(...(task.result.latency.samples ?? []));
    }
  }
  return samples;
}

/** The value at quantile `q` (0..1) of `values`, by the nearest-rank method. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

export const round = (value: number, decimals = 1) => Math.round(value * 10 ** decimals) / 10 ** decimals;

/** Each named set of samples' p50 and p99, in ms to 2 decimals. */
export const percentiles = (name: string, samples: readonly number[]): [string, number, number] => [
  name,
  round(quantile(samples, 0.5), 2),
  round(quantile(samples, 0.99), 2),
];

/** `value / baseline`, rounded to 2 decimals: the figure every target is stated in. */
export const ratio = (value: number, baseline: number) => round(value / baseline, 2);

/** A figure that meets its target when it is at most `limit` (at least, when `atLeast`). */
export const target = (name: string, value: number, limit: number, atLeast = false) => ({
  target: name,
  value,
  limit,
  met: atLeast ? value >= limit : value <= limit,
});
export type Target = ReturnType<typeof target>;

/** A section of the report and of the results file: a note, a table of figures, the targets they are held to. */
export interface Section {
  note?: string;
  columns?: string[];
  rows?: (string | number)[][];
  targets?: Target[];
}

/** The section as Markdown (a table also readable in a terminal). */
export function renderSection({ note, columns = [], rows = [] }: Section): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.join(' | ')} |`;
  const table = [line(columns), line(columns.map(() => '---')), ...rows.map(line)].join('\n');
  return [note, columns.length > 0 ? table : undefined].filter((part) => part !== undefined).join('\n\n');
}
