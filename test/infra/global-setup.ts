import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Names the directory where synthesizeApp (test/infra/synth.ts) keeps one cloud assembly per context for the run. */
export const SYNTH_CACHE_ENV = 'PETSTORE_INFRA_SYNTH_CACHE';

/**
 * Creates the run's synth cache before any infra test file loads; the workers Jest starts after this inherit the
 * variable. Most files synthesize the same context, and a synth costs seconds of CPU each time.
 */
export default function globalSetup(): void {
  process.env[SYNTH_CACHE_ENV] = mkdtempSync(join(tmpdir(), 'petstore-infra-synth-'));
}
