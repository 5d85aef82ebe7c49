import { randomUUID } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { type PreTrafficDeps, type ProbeTarget, runPreTrafficCheck } from '../../functions/deploy/pre-traffic';
import { ApiKeyTable } from '../../functions/store/api-key-table';
import { importHandler } from '../../local/gateway';
import { lambdaContext } from '../../local/lambda/events';
import { invokeStreamingHandler, isStreamingHandler } from '../../local/lambda/streaming';
import { AUTHORIZER_HANDLER, ROUTES } from '../../service/routes';
import { codeDeployStandIn } from '../helpers/codedeploy';
import { snapshotTable, startTestStack, type TestStack } from '../helpers/local-stack';

/**
 * The hook's probe of every function the stack deploys, answered by the real handlers over DynamoDB Local: a probe
 * a working version fails would fail every deployment of that function (CodeDeploy rolls it back). Only Lambda's
 * and CodeDeploy's APIs are stand-ins, as documented: Invoke returns the result, or FunctionError `Unhandled` with
 * `{errorMessage, errorType}` when the function throws (https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html);
 * InvokeWithResponseStream returns PayloadChunk items (the HTTP prelude, 8 zero bytes, the body), then InvokeComplete
 * (https://docs.aws.amazon.com/lambda/latest/api/API_InvokeWithResponseStream.html).
 */

/** Every function of the stack with its probe, as infra/inventory-stack.ts builds the hook's targets, and its module. */
const FUNCTIONS: { name: string; module: string; probe: ProbeTarget }[] = [
  ...ROUTES.map((route) => ({ name: route.operationId, module: route.handler, probe: { route: route.operationId } })),
  { name: AUTHORIZER_HANDLER, module: AUTHORIZER_HANDLER, probe: { authorizer: true } },
  { name: 'history', module: 'record-history', probe: { history: true } },
];

const decode = (payload: Uint8Array | undefined) => JSON.parse(new TextDecoder().decode(payload)) as unknown;
const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

/** Lambda's Invoke and InvokeWithResponseStream over the real handler modules, by function name (without version). */
function realLambda(): PreTrafficDeps['lambda'] & { events: unknown[] } {
  const events: unknown[] = [];
  const send = async (command: {
    constructor: { name: string };
    input: { FunctionName?: string; Payload?: Uint8Array };
  }) => {
    const name = String(command.input.FunctionName).split(':')[0];
    const fn = FUNCTIONS.find((candidate) => candidate.name === name);
    if (!fn) throw new Error(`no function ${name}`);
    const handler = await importHandler(fn.module);
    const event = decode(command.input.Payload);
    events.push(event);
    const context = lambdaContext({ functionName: name, requestId: randomUUID() });
    if (command.constructor.name === 'InvokeWithResponseStreamCommand') {
      if (!isStreamingHandler(handler)) throw new Error(`${name} is not a streaming function`);
      const response = await invokeStreamingHandler(handler, event, context).response;
      const prelude = JSON.stringify({ statusCode: response.statusCode, headers: response.headers });
      async function* stream() {
        yield { PayloadChunk: { Payload: Buffer.concat([Buffer.from(prelude), Buffer.alloc(8)]) } };
        for await (const chunk of response.body) yield { PayloadChunk: { Payload: chunk as Buffer } };
        yield { InvokeComplete: {} };
      }
      return { EventStream: stream() };
    }
    try {
      return { Payload: encode(await handler(event, context)), ExecutedVersion: '7' };
    } catch (error) {
      const { message, name: errorType } = error as Error;
      return { Payload: encode({ errorMessage: message, errorType }), FunctionError: 'Unhandled' };
    }
  };
  return { events, send: send as unknown as PreTrafficDeps['lambda']['send'] };
}

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

describe('Pre-traffic hook: the probe of every deployed function, answered by the real handlers', () => {
  const targets = Object.fromEntries(FUNCTIONS.map(({ name, probe }) => [name, probe]));
  const keys = () => new ApiKeyTable({ client: stack.client, tableName: stack.tables.apiKeys });

  it.each(FUNCTIONS.map(({ name }) => [name]))(
    'reports Succeeded for a working version of %s, so its deployment goes on, and leaves no probe key',
    async (name) => {
      // Prepare
      const deploy = codeDeployStandIn(name);
      const keysBefore = await snapshotTable(stack.client, stack.tables.apiKeys);
      // Act
      const verdict = await runPreTrafficCheck(
        { DeploymentId: 'd-1', LifecycleEventHookExecutionId: 'hook-1' },
        { codeDeploy: deploy, lambda: realLambda(), targets, keys: keys() },
      );
      // Assess
      expect(verdict).toMatchObject({ status: 'Succeeded' });
      expect(deploy.reported.map(({ status }) => status)).toEqual(['Succeeded']);
      expect(await snapshotTable(stack.client, stack.tables.apiKeys)).toBe(keysBefore);
    },
  );

  it('sends the PATCH checks through the idempotency store under keys of their own, and changes no entry', async () => {
    // Prepare
    const lambda = realLambda();
    const before = await snapshotTable(stack.client, stack.tables.inventory);
    // Act
    const verdict = await runPreTrafficCheck(
      { DeploymentId: 'd-1', LifecycleEventHookExecutionId: 'hook-1' },
      { codeDeploy: codeDeployStandIn('updateInventory'), lambda, targets },
    );
    // Assess
    expect(verdict.status).toBe('Succeeded');
    const [event] = lambda.events as { headers: Record<string, string> }[];
    expect(event?.headers['Idempotency-Key']).toMatch(/^deploy-check-[0-9a-f]{16}$/);
    const kept = await stack.client.send(new ScanCommand({ TableName: stack.tables.idempotency }));
    expect(kept.Items?.map((item) => item.status?.S)).toContain('COMPLETED');
    expect(await snapshotTable(stack.client, stack.tables.inventory)).toBe(before);
  });
});
