import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKeyAdminTable } from '../../cli/api-key-admin-table';
import { COMMANDS, run } from '../../cli/run';
import { generateApiKey } from '../../functions/api-keys/key';
import { runApiChecks } from '../../functions/self-check/checks';
import { PROJECT_ROOT } from '../../infra/bundling';
import { ensureTables } from '../../local/tables';
import { STACK_OUTPUTS, stackName } from '../../service/names';
import { aCapturedIo } from '../fixtures/cli/capture-io';
import { startTestStack, type TestStack, testClient, testEndpoint } from '../helpers/local-stack';
import { serveOnLoopback } from '../helpers/loopback-server';
import { evaluate, type PolicyDocument } from '../infra/policy-evaluation';

/**
 * docs/operator-policy.json against what the CLI really sends: each command runs with `--stage staging`, its AWS SDK
 * clients pointed (AWS_ENDPOINT_URL_<SERVICE>, "Service-specific endpoints",
 * https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html) at a recorder that passes DynamoDB's calls
 * on to DynamoDB Local and answers CloudFormation's and API Gateway's itself. Each recorded call becomes the IAM
 * request AWS authorizes for it, and the operator's policy must allow every one.
 */

const REGION = 'eu-west-1';
const ACCOUNT = '000000000000';
const STAGE = 'staging';
const CFN_NS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';

/** One IAM request: action, resource, and the condition keys AWS sets for it. */
interface IamRequest {
  action: string;
  resource: string;
  context?: Record<string, string[]>;
}

/**
 * The IAM requests of one DynamoDB call: the operation on its table (an index's Query or Scan on the index); each table
 * of a batch; each item of a transaction as its own action with the transaction as `dynamodb:EnclosingOperation`
 * ("Using IAM with DynamoDB transactions",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
 */
function dynamoRequests(operation: string, body: Record<string, unknown>): IamRequest[] {
  const table = (name: unknown) => `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${String(name)}`;
  if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    const items = (body.TransactItems ?? []) as Record<string, { TableName: string }>[];
    return items.flatMap((item) =>
      Object.entries(item).map(([kind, { TableName }]) => ({
        action: `dynamodb:${kind === 'ConditionCheck' ? 'ConditionCheckItem' : `${kind}Item`}`,
        resource: table(TableName),
        context: { 'dynamodb:EnclosingOperation': [operation] },
      })),
    );
  }
  if (operation === 'BatchWriteItem' || operation === 'BatchGetItem')
    return Object.keys(body.RequestItems ?? {}).map((name) => ({
      action: `dynamodb:${operation}`,
      resource: table(name),
    }));
  const index = body.IndexName === undefined ? '' : `/index/${String(body.IndexName)}`;
  return [{ action: `dynamodb:${operation}`, resource: `${table(body.TableName)}${index}` }];
}

/**
 * Records every call the SDK makes, as IAM requests: DynamoDB (JSON, `X-Amz-Target`) passed on to DynamoDB Local;
 * CloudFormation (Query, `Action=`) answered with the stack's outputs; API Gateway (REST) answered 202, its IAM action
 * the HTTP method on the path ("Control access for invoking an API",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-control-access-using-iam-policies-to-create-and-manage-api.html).
 */
async function startRecorder(outputs: () => Record<string, string>) {
  const recorded: IamRequest[] = [];
  const dynamo = new URL(testEndpoint());
  const server = await serveOnLoopback(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const target = req.headers['x-amz-target'];
    if (typeof target === 'string' && target.startsWith('DynamoDB_')) {
      recorded.push(...dynamoRequests(target.split('.')[1] ?? '', JSON.parse(body.toString('utf8'))));
      const upstream = httpRequest(
        { host: dynamo.hostname, port: dynamo.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.end(body);
      return;
    }
    const form = new URLSearchParams(body.toString('utf8'));
    if (form.get('Action') === 'DescribeStacks') {
      const name = form.get('StackName');
      recorded.push({
        action: 'cloudformation:DescribeStacks',
        resource: `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${name}/0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d`,
      });
      const members = Object.entries(outputs()).map(
        ([key, value]) => `<member><OutputKey>${key}</OutputKey><OutputValue>${value}</OutputValue></member>`,
      );
      res.writeHead(200, { 'Content-Type': 'text/xml' });
      res.end(
        `<DescribeStacksResponse xmlns="${CFN_NS}"><DescribeStacksResult><Stacks><member><StackName>${name}</StackName>` +
          '<CreationTime>2026-11-25T10:00:00Z</CreationTime><StackStatus>UPDATE_COMPLETE</StackStatus>' +
          `<Outputs>${members.join('')}</Outputs></member></Stacks></DescribeStacksResult></DescribeStacksResponse>`,
      );
      return;
    }
    recorded.push({
      action: `apigateway:${req.method}`,
      resource: `arn:aws:apigateway:${REGION}::${new URL(req.url ?? '/', 'http://x').pathname}`,
    });
    res.writeHead(202, { 'Content-Type': 'application/json' }).end('{}');
  });
  return { ...server, recorded };
}

const saved = { ...process.env };
let stack: TestStack;
let recorder: Awaited<ReturnType<typeof startRecorder>>;
let files: string;
/** The stage's tables, named as CloudFormation names them (`<stack>-<LogicalId><hash>-<suffix>`). */
const suffix = randomUUID().slice(0, 8).toUpperCase();
const TABLES = {
  inventory: `${stackName(STAGE)}-InventoryTable1A2B3C4D-${suffix}`,
  apiKeys: `${stackName(STAGE)}-ApiKeysTable5E6F7A8B-${suffix}`,
  history: `${stackName(STAGE)}-HistoryTable9C0D1E2F-${suffix}`,
};
/** A key of the stage's keys table for `keys revoke`. */
const revoked = generateApiKey('to revoke');

beforeAll(async () => {
  stack = await startTestStack();
  await ensureTables(testClient(), TABLES, { streams: false });
  await new ApiKeyAdminTable({ client: testClient(), tableName: TABLES.apiKeys }).create(revoked.record);
  recorder = await startRecorder(() => ({
    [STACK_OUTPUTS.apiUrl]: stack.url,
    [STACK_OUTPUTS.inventoryTable]: TABLES.inventory,
    [STACK_OUTPUTS.apiKeysTable]: TABLES.apiKeys,
    [STACK_OUTPUTS.historyTable]: TABLES.history,
    [STACK_OUTPUTS.restApiId]: 'a1b2c3d4e5',
    [STACK_OUTPUTS.apiStageName]: 'v1',
    [STACK_OUTPUTS.authorizerCacheTtlSeconds]: '300',
  }));
  // The API's functions build their one client on first use: now, toward DynamoDB Local itself, so only the CLI's
  // calls reach the recorder.
  await runApiChecks({ baseUrl: stack.url, keys: { write: stack.key } });
  // The SDK reads these; the CLI's own environment (`io.env`) has none of them, as an operator's shell would not.
  Object.assign(process.env, {
    AWS_REGION: REGION,
    AWS_ACCESS_KEY_ID: 'operator',
    AWS_SECRET_ACCESS_KEY: 'operator',
    AWS_ENDPOINT_URL_DYNAMODB: recorder.url,
    AWS_ENDPOINT_URL_CLOUDFORMATION: recorder.url,
    AWS_ENDPOINT_URL_API_GATEWAY: recorder.url,
  });
  files = mkdtempSync(join(tmpdir(), 'petstore-operator-'));
  writeFileSync(join(files, 'stock.csv'), 'petId,quantity,status\n77,5,available\n');
  writeFileSync(join(files, 'changes.csv'), 'petId,adjustBy,reason,reference\n77,2,received,delivery 1\n');
});

afterAll(async () => {
  process.env = { ...saved };
  rmSync(files, { recursive: true, force: true });
  await recorder?.close();
  await stack?.close();
});

/** Every command as an operator runs it on a stage, in an order that gives each what it needs. */
const COMMAND_LINES: Record<string, () => string[]> = {
  'keys create': () => ['keys', 'create', '--name', 'operator'],
  'keys list': () => ['keys', 'list'],
  'keys revoke': () => ['keys', 'revoke', revoked.record.keyId],
  'inventory import': () => ['inventory', 'import', join(files, 'stock.csv')],
  'inventory apply': () => ['inventory', 'apply', join(files, 'changes.csv')],
  'inventory history': () => ['inventory', 'history', '77'],
  'inventory export': () => ['inventory', 'export', '--key', stack.key],
  'inventory get': () => ['inventory', 'get', '1', '--key', stack.key],
  'inventory changes': () => ['inventory', 'changes', '--key', stack.key],
  smoke: () => ['smoke', '--key', stack.key],
};

const operatorPolicy = () =>
  JSON.parse(readFileSync(join(PROJECT_ROOT, 'docs/operator-policy.json'), 'utf8')) as PolicyDocument;

describe('docs/operator-policy.json: what each CLI command sends to AWS with --stage, recorded', () => {
  it('runs every command that acts on a stage (stack map reads two local files)', () => {
    expect([...Object.keys(COMMAND_LINES), 'stack map'].sort()).toEqual(Object.keys(COMMANDS).sort());
  });

  it.each(Object.keys(COMMAND_LINES))('allows every request `%s --stage staging` sends', async (command) => {
    // Act
    recorder.recorded.length = 0;
    // The wait between `keys revoke`'s two flushes is passed at once: what is recorded is the requests.
    const io = { ...aCapturedIo(), sleep: async () => undefined };
    const code = await run([...(COMMAND_LINES[command] as () => string[])(), '--stage', STAGE], io);
    // Assess: the command did its work, then every request it sent is allowed by the operator's policy alone.
    expect({ code, stderr: io.stderr.text }).toEqual({ code: 0, stderr: expect.any(String) });
    const requests = [...recorder.recorded];
    expect(requests).toContainEqual(expect.objectContaining({ action: 'cloudformation:DescribeStacks' }));
    const refused: (IamRequest & { result: string })[] = [];
    for (const request of requests) {
      const result = await evaluate({
        principal: `arn:aws:iam::${ACCOUNT}:user/operator`,
        action: request.action,
        resource: request.resource,
        resourceAccount: ACCOUNT,
        context: request.context ?? {},
        identityPolicies: [{ name: 'operator', policy: operatorPolicy() }],
      });
      if (result !== 'Allowed') refused.push({ ...request, result });
    }
    expect(refused).toEqual([]);
  });
});
