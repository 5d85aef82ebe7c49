import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BenchResults, benchTargets } from '../../bench/report';
import { runProcess } from '../helpers/process';

/**
 * `npm run bench -- --smoke` as a real process (it synthesizes the stack and runs its own `npm start`): the script
 * `npm run bench` runs, under tsx's loader in one `node`, without npm's and tsx's wrapper processes.
 */
function runBenchSmoke(out: string) {
  return runProcess(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--smoke', '--out', out]);
}

/** Every figure of a results section is present and a finite number. */
function expectFigures(section: Record<string, unknown>, names: readonly string[]): void {
  for (const name of names) {
    const value = section[name];
    expect({ name, type: typeof value }).toEqual({ name, type: 'number' });
    expect({ name, finite: Number.isFinite(value) }).toEqual({ name, finite: true });
  }
}

const DEPLOYED_FUNCTIONS = [
  'list-inventory',
  'update-inventory',
  'apply-inventory-changes',
  'get-inventory-entry',
  'list-inventory-history',
  'list-inventory-changes',
  'get-pet',
  'list-store-orders',
  'authorizer',
  'self-check',
  'record-history',
];

describe('Benchmark: npm run bench -- --smoke', () => {
  let results: Record<string, unknown>;
  let run: { code: number | null; stdout: string; stderr: string };

  beforeAll(async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'bench-smoke-')), 'results.json');
    run = await runBenchSmoke(out);
    results = run.code === 0 ? JSON.parse(readFileSync(out, 'utf8')) : {};
  }, 300_000);

  it('exits 0 and prints the table with every section', () => {
    expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr.slice(-2000) }).toEqual({ code: 0, stderr: '' });
    for (const heading of ['## Cold start', '## PATCH', '## GET /inventory', '## Peak memory', '## Targets']) {
      expect(run.stdout).toContain(heading);
    }
  });

  it('reports bundle size, init and cold path (init + first call) for every deployed function and the naive handler', () => {
    const coldStart = results.coldStart as { functions: Record<string, unknown>[] };
    expectFigures(coldStart as unknown as Record<string, unknown>, [
      'runs',
      'naiveInitMsMedian',
      'naiveColdPathMsMedian',
    ]);
    expect(coldStart.functions.map((f) => f.handler).sort()).toEqual([...DEPLOYED_FUNCTIONS].sort());
    for (const figure of coldStart.functions)
      expectFigures(figure, ['bundleBytes', 'initMsMedian', 'coldPathMsMedian']);
  });

  it("reports PATCH p50 and p99 through the gateway (plain, expectedQuantity, adjustBy, Idempotency-Key), as raw UpdateItem and the Idempotency utility's own writes, with ratios", () => {
    const patch = results.patch as { p50Ms: Record<string, unknown>; p99Ms: Record<string, unknown> };
    const paths = ['plain', 'expectedQuantity', 'adjustBy', 'idempotencyKey', 'rawUpdateItem', 'utilityWrites'];
    expectFigures(patch.p50Ms, paths);
    expectFigures(patch.p99Ms, paths);
    expect(run.stdout).toContain('| gateway / raw |');
    expect(run.stdout).toMatch(/\| adjustBy \+ Idempotency-Key \/ plain \(no target\) \| [\d.]+x \|/);
    expect(run.stdout).toContain("(adjustBy + the utility's two writes) / plain");
    const targets = benchTargets(results as unknown as BenchResults).map((target) => target.target);
    expect(targets).toContain('PATCH p50: with expectedQuantity / without');
    expect(targets).toContain('PATCH p50: adjustBy / plain PATCH');
    expect(targets.filter((target) => target.includes('Idempotency-Key'))).toEqual([]);
  });

  it('reports a 100-change batch against 100 sequential PATCHes (with its target) and a 1-change batch against one PATCH', () => {
    const batch = results.batch as { p50Ms: Record<string, unknown>; p99Ms: Record<string, unknown> };
    const paths = ['batch100', 'patches100', 'batch1', 'adjustBy'];
    expectFigures(batch.p50Ms, paths);
    expectFigures(batch.p99Ms, paths);
    expect(run.stdout).toContain('## POST /inventory/changes against sequential PATCHes');
    expect(run.stdout).toMatch(/\| 1-change batch \/ one PATCH \(no target\) \| [\d.]+x \|/);
    const targets = benchTargets(results as unknown as BenchResults).map((target) => target.target);
    expect(targets).toContain('PATCH p50: 100-change batch / 100 sequential PATCHes');
    expect(targets.filter((target) => target.includes('1-change'))).toEqual([]);
  });

  it('reports the streamed list at three sizes: first and last byte in-process, naive, via npm start with and without gzip, exact', () => {
    const list = results.list as Record<string, unknown>[];
    expect(list).toHaveLength(3);
    for (const figure of list) {
      expectFigures(figure, [
        'entries',
        'handlerTtfbMsMedian',
        'handlerMsMedian',
        'naiveMsMedian',
        'gatewayTtfbMsMedian',
        'gatewayMsMedian',
        'gatewayGzipTtfbMsMedian',
        'gatewayGzipMsMedian',
        'identityBytes',
        'gzipBytes',
        'naiveBodyBytes',
        'handlerPeakRssMb',
        'handlerPeakRssCappedMb',
        'naivePeakRssMb',
      ]);
      expect(figure.exact).toBe(true);
      // The naive path answers the same entries (in its own order), so the same number of bytes.
      expect(figure.identityBytes).toBe(figure.naiveBodyBytes);
      expect(figure.gzipBytes as number).toBeLessThan(figure.identityBytes as number);
    }
  });

  it('reports the peak memory of every deployed function and a verdict on every target', () => {
    const memory = results.memory as Record<string, unknown>[];
    expect(memory.map((m) => m.function).sort()).toEqual([...DEPLOYED_FUNCTIONS].sort());
    for (const figure of memory) expectFigures(figure, ['maxRssMb', 'maxRssAfterInitMb', 'heapUsedPeakMb']);
    const targets = benchTargets(results as unknown as BenchResults);
    const names = targets.map((target) => target.target);
    // A cold-path target per API function (the self-check serves no client) and none on init alone.
    for (const handler of DEPLOYED_FUNCTIONS.filter((name) => name !== 'self-check'))
      expect(names).toContain(`cold path ${handler}: bundle / naive`);
    expect(names).not.toContain('cold path self-check: bundle / naive');
    expect(names.filter((name) => String(name).startsWith('init '))).toEqual([]);
    for (const size of results.list as { entries: number }[])
      expect(names).toContain(`list at ${size.entries} entries: handler / naive (last byte)`);
    for (const target of targets) {
      expectFigures(target as unknown as Record<string, unknown>, ['value', 'limit']);
      expect(typeof target.met).toBe('boolean');
    }
  });
});
