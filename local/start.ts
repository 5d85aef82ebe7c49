// `npm start`: DynamoDB Local, the tables, a demo inventory, a key, the gateway on http://127.0.0.1:${PORT:-3000}/v1
// and the history function on the stream (docs/development.md).
import { join } from 'node:path';
import { numberEnv, PORT_NUMBER } from '../functions/config';
import { createDynamoClient } from '../functions/store/dynamo-client';
import { LOCAL_DYNAMODB_PORT, LOCAL_TABLE_NAMES } from '../service/local-dynamodb';
import { AUTHORIZER_CACHE_TTL_SECONDS, STAGE_THROTTLING } from '../service/stage-limits';
import { createDocsHandler, DOCS_PATH } from './docs';
import { startDynamoDbLocal } from './dynamodb-local';
import { configureFunctionEnvironment, registerLocalKey, seedDemoInventory } from './environment';
import { type LocalGateway, startLocalGateway } from './gateway';
import { type StreamPoller, startStreamPoller } from './lambda/stream-poller';
import { ensureTables, tableStreamArn } from './tables';
import { throttlingFromEnv } from './throttle';
import { WEBHOOK_ENV, webhookStreamHandler, webhookTargetFromEnv } from './webhooks';

const tables = LOCAL_TABLE_NAMES;

async function main(): Promise<void> {
  const started = Date.now();
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
  // Tracing is off outside Lambda, but in automatic mode the X-Ray SDK the functions load puts an async hook on every
  // promise of this process, the gateway's too; manual mode leaves it off, as in the tests.
  process.env.AWS_XRAY_MANUAL_MODE ??= 'true';
  const inMemory = process.env.PETSTORE_IN_MEMORY === '1';
  const dataDir = inMemory ? undefined : join(import.meta.dirname, '..', '.local', 'dynamodb');
  const recordHistory = process.env.PETSTORE_HISTORY !== '0';
  const webhookTarget = webhookTargetFromEnv();
  if (webhookTarget && !recordHistory)
    throw new Error(`${WEBHOOK_ENV.url} sends the history's changes: unset PETSTORE_HISTORY=0`);
  const port = numberEnv(LOCAL_DYNAMODB_PORT.variable, LOCAL_DYNAMODB_PORT.fallback, PORT_NUMBER);
  const dynamo = await startDynamoDbLocal({ port, dataDir });
  const client = createDynamoClient({ endpoint: dynamo.endpoint, requestTimeoutMs: 10_000 });
  let gateway: LocalGateway | undefined;
  let history: StreamPoller | undefined;
  let webhooks: StreamPoller | undefined;
  const stop = async () => {
    await gateway?.close();
    await history?.stop();
    await webhooks?.stop();
    client.destroy();
    await dynamo.stop();
  };
  const shutdown = async (signal: string) => {
    console.log(`\n${signal}: stopping the gateway and DynamoDB Local`);
    await stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  try {
    await ensureTables(client, tables);
    configureFunctionEnvironment(dynamo.endpoint, tables);
    // From the stream's oldest record, so the demo inventory is on record too; imported now that the environment is
    // set (Powertools reads it at import). PETSTORE_HISTORY=0: the bench's seeding would compete with it for the CPU.
    if (recordHistory) {
      const streamArn = await tableStreamArn(client, tables.inventory);
      const { handler } = await import('../functions/handlers/record-history');
      history = startStreamPoller({ endpoint: dynamo.endpoint, streamArn, handler });
    }
    if (webhookTarget) {
      const streamArn = await tableStreamArn(client, tables.history);
      const log = (line: string) => process.stderr.write(`${line}\n`);
      webhooks = startStreamPoller({
        endpoint: dynamo.endpoint,
        streamArn,
        handler: webhookStreamHandler(webhookTarget, log),
        log,
      });
    }
    // PETSTORE_SEED=0 starts with an empty inventory (the benchmark loads its own).
    const seeded = process.env.PETSTORE_SEED === '0' ? 0 : await seedDemoInventory(client, tables.inventory);
    const { key, created } = await registerLocalKey(client, tables.apiKeys, process.env.PETSTORE_API_KEY);
    // Staging's limits, so a client meets 429 locally as it would on the stage; 0 turns throttling off.
    const throttling = throttlingFromEnv(STAGE_THROTTLING.staging);
    gateway = await startLocalGateway(numberEnv('PORT', 3000, PORT_NUMBER), {
      authorizerCacheTtlSeconds: numberEnv('AUTHORIZER_CACHE_TTL_SECONDS', AUTHORIZER_CACHE_TTL_SECONDS),
      throttling,
      serveExtra: createDocsHandler(),
    });
    console.log(`DynamoDB Local: ${dynamo.endpoint} (${inMemory ? 'in memory' : `data in ${dataDir}`})`);
    if (seeded > 0) console.log(`Seeded ${seeded} demo inventory entries.`);
    console.log(
      recordHistory
        ? `History: every stock change into ${tables.history} (npm run cli -- inventory history PETID)`
        : 'History: off (PETSTORE_HISTORY=0)',
    );
    console.log(
      webhookTarget
        ? `Webhooks: every change, signed, to ${webhookTarget.url}`
        : `Webhooks: off (set ${WEBHOOK_ENV.url} and ${WEBHOOK_ENV.secret} to send them)`,
    );
    console.log(`API key${created ? ' (new)' : ''}: ${key}`);
    console.log(
      throttling
        ? `Throttling: ${throttling.rateLimit} requests/s, burst ${throttling.burstLimit}, per method ` +
            "(staging's unless PETSTORE_RATE_LIMIT / PETSTORE_BURST_LIMIT say otherwise; 0 turns it off)"
        : 'Throttling: off',
    );
    console.log(`API docs: ${new URL(gateway.url).origin}${DOCS_PATH}`);
    console.log(`Try: curl -H "Authorization: Bearer ${key}" ${gateway.url}/inventory`);
    console.log(`Pet Store Inventory API ready on ${gateway.url} in ${Date.now() - started} ms (Ctrl-C to stop)`);
  } catch (error) {
    // A failure to stop must not hide why the start failed.
    await stop().catch(() => undefined);
    throw error;
  }
}

main().catch((error: Error) => {
  console.error(`npm start failed: ${error.message}`);
  process.exit(1);
});
