/**
 * `npm run bench:doc [-- FILE]`: copies one run's results (default bench/results.json) to
 * docs/performance-results.json and rewrites docs/performance.md's tables from it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BenchResults, fillMarkedSections } from './report';

const ROOT = join(import.meta.dirname, '..');
const PERFORMANCE_DOC = join(ROOT, 'docs', 'performance.md');
const PERFORMANCE_RESULTS = join(ROOT, 'docs', 'performance-results.json');

function main(): void {
  const source = process.argv[2] ?? join(import.meta.dirname, 'results.json');
  const text = readFileSync(source, 'utf8');
  const results = JSON.parse(text) as BenchResults;
  if (results.meta?.profile === 'smoke') throw new Error(`${source} is a --smoke run: its figures are not figures`);
  writeFileSync(PERFORMANCE_DOC, fillMarkedSections(readFileSync(PERFORMANCE_DOC, 'utf8'), results));
  writeFileSync(PERFORMANCE_RESULTS, text);
  process.stdout.write(`docs/performance.md: tables from ${source} (run of ${results.meta.date})\n`);
}

main();
