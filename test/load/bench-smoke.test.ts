import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../helpers/process';

/** A section of the results file: a note, a table, and the targets its figures are held to. */
interface Section {
  note?: string;
  columns?: string[];
  rows?: (string | number)[][];
  targets?: { target: string; value: number; limit: number; met: boolean }[];
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

/** The first column of every row, and whether every number in the rows is finite. */
const firstColumn = (section: Section | undefined) => (section?.rows ?? []).map((row) => row[0]);
const allFinite = (section: Section | undefined) =>
  (section?.rows ?? []).flat().every((cell) => typeof cell !== 'number' || Number.isFinite(cell));

describe('Benchmark: npm run bench -- --smoke', () => {
  let sections: Record<string, Section>;
  let run: { code: number | null; stdout: string; stderr: string };

  beforeAll(async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'bench-smoke-')), 'results.json');
    // The script `npm run bench` runs, under tsx's loader in one `node`, without npm's and tsx's wrapper processes.
    run = await runProcess(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--smoke', '--out', out]);
    sections = run.code === 0 ? JSON.parse(readFileSync(out, 'utf8')).sections : {};
  }, 420_000);

  it('exits 0 and prints every section', () => {
    expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr.slice(-2000) }).toEqual({ code: 0, stderr: '' });
    for (const heading of ['## Cold start', '## PATCH', '## GET /inventory', '## Peak memory', '## The change feed'])
      expect(run.stdout).toContain(heading);
    expect(run.stdout).toContain('## Targets');
  });

  it('reports bundle size, init and cold path for every deployed function, and the peak memory of each', () => {
    expect(firstColumn(sections['cold-start']).sort()).toEqual([...DEPLOYED_FUNCTIONS].sort());
    expect(firstColumn(sections.memory).sort()).toEqual([...DEPLOYED_FUNCTIONS].sort());
    expect(allFinite(sections['cold-start']) && allFinite(sections.memory)).toBe(true);
    expect(sections['cold-start']?.note).toMatch(/naive handler: init [\d.]+ ms, cold path [\d.]+ ms/);
    // A cold-path target per function a client waits on: the self-check serves none.
    const held = sections['cold-start']?.targets?.map((t) => /^cold path (.+): bundle \/ naive$/.exec(t.target)?.[1]);
    expect(held?.sort()).toEqual(DEPLOYED_FUNCTIONS.filter((name) => name !== 'self-check').sort());
  });

  it('reports PATCH p50 and p99 through npm start, in-process and raw, with the ratios that tell the shares apart', () => {
    const rows = new Map((sections.patch?.rows ?? []).map(([row, p50, p99]) => [row, [p50, p99]]));
    for (const row of [
      'PATCH quantity',
      'PATCH quantity, with expectedQuantity',
      'PATCH adjustBy',
      'PATCH adjustBy + Idempotency-Key',
      "Idempotency utility's two writes alone (claim, store the answer)",
      'the handler in-process',
      'raw UpdateItem',
    ])
      expect({ row, times: rows.get(row)?.map((value) => typeof value) }).toEqual({ row, times: ['number', 'number'] });
    expect(run.stdout).toMatch(/\| gateway \/ raw \| [\d.]+x \| [\d.]+x \|/);
    expect(run.stdout).toMatch(/\| handler in-process \/ raw: what a stage pays \| [\d.]+x \| [\d.]+x \|/);
    expect(run.stdout).toMatch(/\| gateway \/ handler in-process: the stand-in's share \| [\d.]+x \| [\d.]+x \|/);
    const targets = sections.patch?.targets?.map((t) => t.target);
    expect(targets).toEqual([
      'PATCH p50: gateway / raw UpdateItem',
      'PATCH p50: with expectedQuantity / without',
      'PATCH p50: adjustBy / plain PATCH',
    ]);
  });

  it('reports a 100-change batch against 100 sequential PATCHes (with its target) and a 1-change batch against one PATCH', () => {
    expect(firstColumn(sections.batch)).toContain('POST /inventory/changes, 100 adjustBy');
    expect(run.stdout).toMatch(/\| 1-change batch \/ one PATCH \(no target\) \| [\d.]+x \|/);
    expect(sections.batch?.targets?.map((t) => t.target)).toEqual([
      'PATCH p50: 100-change batch / 100 sequential PATCHes',
    ]);
  });

  it('reports the streamed list at three sizes, every answer exact, each against the naive handler', () => {
    expect(firstColumn(sections.list)).toEqual([20, 60, 150]);
    expect(allFinite(sections.list)).toBe(true);
    expect(sections.list?.rows?.map((row) => row[sections.list?.columns?.indexOf('exact') ?? -1])).toEqual([
      'yes',
      'yes',
      'yes',
    ]);
    const targets = sections.list?.targets?.map((t) => t.target) ?? [];
    for (const size of [20, 60, 150]) expect(targets).toContain(`list at ${size} entries: handler / naive (last byte)`);
  });

  it('reports read units per writer, the import rate and the change feed (or why the feed is not there)', () => {
    expect(firstColumn(sections['read-units'])).toHaveLength(3);
    expect(sections['import-rate']?.note).toMatch(/^\d+ rows in [\d.]+ s: \d+ rows\/s\.$/);
    const feed = sections.feed;
    const measured = firstColumn(feed).includes('write → visible on GET /v1/inventory/changes');
    expect(measured || /^feed not available: /.test(feed?.note ?? '')).toBe(true);
  });
});
