import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BenchResults, fillMarkedSections, renderSections } from '../../bench/report';

const ROOT = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(ROOT, 'docs', 'performance.md'), 'utf8');
const results = JSON.parse(readFileSync(join(ROOT, 'docs', 'performance-results.json'), 'utf8')) as BenchResults;

describe('docs/performance.md: its figure tables come from one bench run', () => {
  it('holds, in every marked section, exactly what bench/report.ts renders from docs/performance-results.json', () => {
    expect(fillMarkedSections(doc, results)).toBe(doc);
  });

  it('marks every section the report has, so no table of the run is left out', () => {
    const marked = [...doc.matchAll(/<!-- bench:begin ([a-z-]+) -->/g)].map((match) => match[1]);
    expect(marked.sort()).toEqual(Object.keys(renderSections(results)).sort());
  });

  it('cites a full run, not a smoke run', () => {
    expect(results.meta.profile).not.toBe('smoke');
  });
});
