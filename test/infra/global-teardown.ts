import { rmSync } from 'node:fs';
import { SYNTH_CACHE_ENV } from './global-setup';

/** Removes the run's synth cache (test/infra/global-setup.ts). */
export default function globalTeardown(): void {
  const dir = process.env[SYNTH_CACHE_ENV];
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  delete process.env[SYNTH_CACHE_ENV];
}
