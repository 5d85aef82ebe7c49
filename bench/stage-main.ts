/**
 * `npm run bench:stage -- --url https://<api>/v1 --pet <petId> [--key psk_…] [--iterations 200] [--out FILE]`: runs
 * bench/stage.ts against a deployed stage and prints its table (docs/deploying.md, "After the first deploy"). The
 * write key comes from `PETSTORE_API_KEY` unless `--key` gives one (a `--key` shows in `ps`), and the URL must be
 * HTTPS unless it is this machine, as in the CLI.
 */
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
