import type { DeployedBundle } from '../infra/synthesized-assets';
import { functionCalls } from './events';
import { type ProbeOptions, probeFailure, runProbe } from './probe-child';
import { columnsTable, round } from './stats';

/** Peak memory of one function instance (a fresh process running its bundle), in MB. */
export interface MemoryFigure {
  function: string;
  scenario: string;
  maxRssMb: number;
  maxRssAfterInitMb: number;
  heapUsedPeakMb: number;
}

/** `file`'s peak memory over `options.events` in a fresh process; throws when an invocation failed. */
export async function probeMemory(
  fn: string,
  scenario: string,
  file: string,
  options: ProbeOptions,
): Promise<MemoryFigure> {
  const probe = await runProbe('invoke', file, options);
  const failure = probe.invocations.map(probeFailure).find((message) => message !== undefined);
  if (failure) throw new Error(`${fn} (${scenario}) failed in its probe: ${failure}`);
  const mb = (kb: number) => round(kb / 1024);
  return {
    function: fn,
    scenario,
    maxRssMb: mb(probe.maxRssKb),
    maxRssAfterInitMb: mb(probe.maxRssInitKb),
    heapUsedPeakMb: mb(probe.heapUsedPeakKb),
  };
}

/** Each function's peak memory but the list's, in a fresh process running its bundle as deployed. */
export async function measureFunctionMemory(
  bundles: readonly DeployedBundle[],
  env: Record<string, string>,
  key: string,
): Promise<MemoryFigure[]> {
  const scenarios = functionCalls(key);
  const figures: MemoryFigure[] = [];
  for (const bundle of bundles.filter((b) => b.handler !== 'list-inventory')) {
    const plan = scenarios[bundle.handler];
    if (!plan) throw new Error(`no memory scenario for ${bundle.handler}`);
    figures.push(await probeMemory(bundle.handler, plan.scenario, bundle.file, { env, events: plan.events }));
  }
  return figures;
}

export function memoryTable(memory: readonly MemoryFigure[]): string {
  return columnsTable(memory, [
    ['function', (m) => m.function],
    ['scenario', (m) => m.scenario],
    ['max RSS', (m) => `${m.maxRssMb} MB`],
    ['after init', (m) => `${m.maxRssAfterInitMb} MB`],
    ['heap peak', (m) => `${m.heapUsedPeakMb} MB`],
  ]);
}
