/**
 * `npm run bench:doc [-- FILE]`: puts one run's figures into docs/performance.md. Copies the results file (default
 * bench/results.json, written by `npm run bench`) to docs/performance-results.json and rewrites every marked table
 * of the doc from it, so each figure in those tables comes from that one run (test/unit/performance-doc.test.ts
 * holds the doc to the copy).
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
