/**
 * `npm run bench:stage -- --url https://<api>/v1 --key psk_… --pet <petId> [--iterations 200] [--out FILE]`: runs
 * bench/stage.ts against a deployed stage and prints its table (docs/performance.md, "Adjustments and
 * Idempotency-Key"; docs/deploying.md, "After the first deploy").
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parsePetId } from '../functions/inventory/pet-id';
import { measureStagePatch, renderStagePatch } from './stage';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      key: { type: 'string' },
      pet: { type: 'string' },
      iterations: { type: 'string', default: '200' },
      out: { type: 'string' },
    },
  });
  const iterations = Number(values.iterations);
  let petId: string | undefined;
  let problem = '';
  try {
    petId = parsePetId(values.pet, '--pet');
  } catch (error) {
    problem = `${(error as Error).message}\n`;
  }
  if (!values.url || !values.key || petId === undefined || !(iterations >= 1)) {
    process.stderr.write(
      `${problem}usage: npm run bench:stage -- --url <base URL ending in /v1> --key <write key> --pet <petId> [--iterations N] [--out FILE]\n`,
    );
    process.exitCode = 2;
    return;
  }
  const result = await measureStagePatch({
    baseUrl: values.url,
    apiKey: values.key,
    petId: BigInt(petId),
    iterations,
    warmup: Math.min(20, iterations),
  });
  process.stdout.write(`${renderStagePatch(result)}\n`);
  if (values.out) writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:stage: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
