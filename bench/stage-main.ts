/** `npm run bench:stage -- --url … --pet …`: bench/stage.ts against a stage (docs/deploying.md). */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { checkedApiUrl } from '../cli/commands/context';
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
  const apiKey = values.key ?? process.env.PETSTORE_API_KEY;
  const problems: string[] = [];
  const checked = <T>(check: () => T): T | undefined => {
    try {
      return check();
    } catch (error) {
      problems.push((error as Error).message);
      return undefined;
    }
  };
  const petId = checked(() => parsePetId(values.pet, '--pet'));
  const url = values.url;
  const baseUrl = url ? checked(() => checkedApiUrl(url)) : undefined;
  if (!apiKey) problems.push('no write key: set PETSTORE_API_KEY (or pass --key, which shows in ps)');
  if (!baseUrl || !apiKey || petId === undefined || !(iterations >= 1)) {
    process.stderr.write(
      `${problems.map((line) => `${line}\n`).join('')}usage: PETSTORE_API_KEY=<write key> npm run bench:stage -- --url <https base URL ending in /v1> --pet <petId> [--key <write key>] [--iterations N] [--out FILE]\n`,
    );
    process.exitCode = 2;
    return;
  }
  const result = await measureStagePatch({
    baseUrl,
    apiKey,
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
