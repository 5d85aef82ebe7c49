import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlushStageAuthorizersCacheCommand } from '@aws-sdk/client-api-gateway';
import { type ApiGatewayClientFactory, flushAuthorizerCache } from '../../cli/authorizer-cache';
import { apiUnreachable, type CommandContext } from '../../cli/commands/context';
import { cacheNote } from '../../cli/commands/keys';
import { run } from '../../cli/run';
import { resolveTarget, type StackOutputsReader, storageError, type Target } from '../../cli/target';
import { aCapturedIo } from '../fixtures/cli/capture-io';

/** An endpoint nothing listens on: a usage error must be reported before any connection is tried. */
const NOWHERE = 'http://127.0.0.1:9';

describe('Function: run (usage)', () => {
  it.each([
    [[], /no command given/],
    [['pets', 'list'], /unknown command "pets"/],
    [['keys'], /keys needs a subcommand: create, list, revoke/],
    [['keys', 'delete'], /unknown command "keys delete"; keys has create, list, revoke/],
    [['keys', 'create'], /keys create needs --name NAME/],
    [['keys', 'create', '--name'], /--name/],
    [['keys', 'create', '--name', 'ci', '--bogus'], /Unknown option '--bogus'/],
    [['keys', 'list', '--dry-run'], /keys list does not take --dry-run/],
    [['keys', 'list', '--format', 'yaml'], /--format must be one of text, json/],
    [['keys', 'revoke'], /keys revoke needs ID/],
    [['keys', 'revoke', 'a', 'b'], /takes ID; got extra "b"/],
    [['inventory', 'import'], /inventory import needs FILE/],
    [['inventory', 'import', 'x.csv', '--format', 'xml'], /--format must be one of csv, json/],
    [['inventory', 'import', 'x.csv', '--concurrency', '0'], /--concurrency must be an integer from 1 to 64/],
    // Before any file or AWS call: production asks for --yes.
    [
      ['inventory', 'import', 'x.csv', '--stage', 'production'],
      /replaces each listed entry whole .* run again with --yes/,
    ],
    [['inventory', 'export', '--format', 'xml'], /--format must be one of json, csv/],
    [['inventory', 'history'], /inventory history needs PETID/],
    [['inventory', 'history', 'seven'], /PETID: petId must be a decimal integer/],
    [['inventory', 'history', '7', '--format', 'csv'], /--format must be one of table, json/],
    // A negative petId is an argument, not an option: the command gets as far as its --format check.
    [['inventory', 'history', '-1', '--format', 'csv'], /--format must be one of table, json/],
    [
      ['inventory', 'get', '-1', '--key', 'psk_k', '--url', `${NOWHERE}/v1/inventory`],
      /--url must be the API's base URL/,
    ],
    [['inventory', 'history', '7', '--since', 'yesterday'], /--since must be an ISO 8601 date/],
    [['inventory', 'export', '--stage', 'dev'], /--stage must be one of staging, production; got "dev"/],
    [['inventory', 'export', '--stage', 'staging', '--endpoint', NOWHERE], /--stage and --endpoint cannot be used/],
    [['keys', 'list', '--endpoint', 'localhost:8000'], /--endpoint must be an http or https URL/],
  ])('exits 2 with one line on stderr and nothing on stdout for %j', async (argv, message) => {
    // Prepare
    const io = aCapturedIo({ env: { DYNAMODB_PORT: '9' } });

    // Act
    const code = await run(argv, io);

    // Assess
    expect(code).toBe(2);
    expect(io.stdout.text).toBe('');
    expect(io.stderr.text).toMatch(message);
    expect(io.stderr.text).toMatch(/^error: [^\n]+ \(run "npm run cli -- help" for usage\)\n$/);
  });

  it.each([
    ['--dry-run', ['--dry-run']],
    ['--yes', ['--yes']],
  ])('lets a production import with %s past the --yes guard (it then reads the file)', async (_what, extra) => {
    const io = aCapturedIo({ env: {} });
    const code = await run(['inventory', 'import', '/nonexistent/stock.csv', '--stage', 'production', ...extra], io);
    expect(code).toBe(1);
    expect(io.stderr.text).not.toMatch(/--yes/);
    expect(io.stderr.text).toMatch(/stock\.csv/);
  });

  it.each(['eighty', '0', '65536'])('exits 2 when DYNAMODB_PORT is %j, not a port to connect to', async (port) => {
    // Prepare
    const io = aCapturedIo({ env: { DYNAMODB_PORT: port } });

    // Act
    const code = await run(['keys', 'list'], io);

    // Assess
    expect(code).toBe(2);
    expect(io.stderr.text).toMatch(/DYNAMODB_PORT must be a whole number from 1 to 65535/);
  });

  it.each([[['help']], [['--help']], [['-h']]])('prints the usage on stdout and exits 0 for %j', async (argv) => {
    // Prepare
    const io = aCapturedIo();

    // Act
    const code = await run(argv, io);

    // Assess
    expect(code).toBe(0);
    expect(io.stdout.text).toMatch(/^Usage: npm run cli -- <command>/);
    for (const command of ['keys create', 'keys list', 'keys revoke', 'inventory import', 'inventory export'])
      expect(io.stdout.text).toContain(command);
  });

  it('prints one command usage for `<command> --help` and exits 0 without connecting', async () => {
    // Prepare
    const io = aCapturedIo({ env: { DYNAMODB_PORT: '9' } });

    // Act
    const code = await run(['inventory', 'import', '--help'], io);

    // Assess
    expect(code).toBe(0);
    expect(io.stdout.text).toMatch(/^Usage: npm run cli -- inventory import FILE/);
  });
});

describe('Function: run (failures)', () => {
  it('exits 1 when the import file cannot be read', async () => {
    // Prepare
    const io = aCapturedIo();

    // Act
    const code = await run(['inventory', 'import', 'does-not-exist.csv', '--dry-run'], io);

    // Assess
    expect(code).toBe(1);
    expect(io.stderr.text).toBe('error: Cannot read does-not-exist.csv: ENOENT\n');
  });

  it('validates a file offline with --dry-run: no endpoint is contacted', async () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'cli-run-'));
    writeFileSync(join(dir, 'stock.csv'), 'petId,quantity,status\n1,2,sold\n3,4,pending\n');
    const io = aCapturedIo({ env: { DYNAMODB_PORT: '9' }, cwd: dir });

    // Act
    const code = await run(['inventory', 'import', 'stock.csv', '--dry-run'], io);

    // Assess
    expect(code).toBe(0);
    expect(io.stdout.text).toBe('Dry run: 2 valid rows in stock.csv (csv); nothing was written.\n');
  });
});

/** The outputs of the stack of `stage` in `region`, as the CLI reads them. */
function stackOutputs(stage: string, region: string) {
  return {
    InventoryTableName: `PetStoreInventory-${stage}-InventoryTable-ABC`,
    ApiKeysTableName: `PetStoreInventory-${stage}-ApiKeysTable-DEF`,
    InventoryHistoryTableName: `PetStoreInventory-${stage}-HistoryTable-GHI`,
    ApiUrl: `https://example.execute-api.${region}.amazonaws.com/v1`,
    AuthorizerCacheTtlSeconds: '60',
    RestApiId: 'a1b2c3d4e5',
    ApiStageName: 'v1',
  };
}

describe('Function: resolveTarget (--stage)', () => {
  const outputs = stackOutputs('staging', 'eu-west-1');

  it('takes the table names and the authorizer cache TTL from the stack outputs of the stage', async () => {
    // Prepare
    const asked: string[] = [];
    const reader: StackOutputsReader = async (stack) => {
      asked.push(stack);
      return { region: 'eu-west-1', outputs };
    };

    // Act
    const target = await resolveTarget({ stage: 'staging' }, {}, reader);
    target.close();

    // Assess
    expect(asked).toEqual(['PetStoreInventory-staging']);
    expect(target.tables).toEqual({
      inventory: outputs.InventoryTableName,
      apiKeys: outputs.ApiKeysTableName,
      history: outputs.InventoryHistoryTableName,
    });
    expect(target.authorizerCacheTtlSeconds).toBe(60);
    expect(target.description).toBe('stage staging (stack PetStoreInventory-staging, eu-west-1)');
    expect(cacheNote(target)).toMatch(/The staging API keeps accepting this key for up to 60 s/);
  });

  it('refuses a stack without the outputs the CLI reads, naming them', async () => {
    // Prepare
    const reader: StackOutputsReader = async () => ({ region: 'eu-west-1', outputs: { ApiUrl: 'x' } });

    // Act
    const outcome = resolveTarget({ stage: 'production' }, {}, reader);

    // Assess
    await expect(outcome).rejects.toThrow(
      'Stack PetStoreInventory-production in eu-west-1 has no output InventoryTableName, ApiKeysTableName, ' +
        'InventoryHistoryTableName, AuthorizerCacheTtlSeconds, RestApiId, ApiStageName: redeploy it with this version',
    );
  });

  it('refuses to act on a stage while an endpoint override would send its writes elsewhere', async () => {
    // Prepare
    const reader: StackOutputsReader = async () => ({ region: 'eu-west-1', outputs });

    // Act
    const outcome = resolveTarget({ stage: 'staging' }, { AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000' }, reader);

    // Assess
    await expect(outcome).rejects.toThrow(/AWS_ENDPOINT_URL_DYNAMODB is set/);
  });

  it('says locally that npm start must be restarted to refuse a revoked key at once', async () => {
    // Prepare
    const target = await resolveTarget({}, {});
    target.close();

    // Act & Assess
    expect(target.tables).toEqual({
      inventory: 'petstore-inventory',
      apiKeys: 'petstore-api-keys',
      history: 'petstore-inventory-history',
    });
    expect(target.description).toBe('local DynamoDB at http://127.0.0.1:8000');
    expect(cacheNote(target)).toMatch(/restart it to refuse the key now/);
    expect(cacheNote(target)).toMatch(/AUTHORIZER_CACHE_TTL_SECONDS, 300 s by default/);
  });
});

/** A Node network error as `net.connect` throws it (code on the error, e.g. `connect ENETUNREACH 10.0.0.9:8000`). */
function aNetworkError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 10.0.0.9:8000`), { code });
}

describe('Function: storageError (an endpoint the CLI cannot use)', () => {
  const target = { description: 'DynamoDB at http://10.0.0.9:8000' } as Target;
  const messageOf = (failure: Error) => storageError(failure, target, 'petstore-inventory').message;
  const unreachable = (code: string) =>
    `Cannot reach DynamoDB at http://10.0.0.9:8000 (${code}): is \`npm start\` running? (or pass --endpoint / set DYNAMODB_PORT)`;

  it.each(['ENETUNREACH', 'EHOSTUNREACH', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNREFUSED'])(
    'says it cannot reach the endpoint, with the code, for a %s network error',
    (code) => {
      expect(messageOf(aNetworkError(code))).toBe(unreachable(code));
    },
  );

  it("finds the code in a wrapper's cause and in an AggregateError's errors (Node's connect to several addresses)", () => {
    const wrapped = new Error('request failed', { cause: new Error('inner', { cause: aNetworkError('ENETUNREACH') }) });
    const aggregate = new AggregateError([aNetworkError('ENETUNREACH'), aNetworkError('ENETUNREACH')], '');
    expect(messageOf(wrapped)).toBe(unreachable('ENETUNREACH'));
    expect(messageOf(aggregate)).toBe(unreachable('ENETUNREACH'));
  });

  it('says something other than DynamoDB answered when the SDK found no DynamoDB error in the answer', () => {
    // The SDK's error for an answer without a DynamoDB error type: name "Unknown", message "UnknownError".
    const answer = Object.assign(new Error('UnknownError'), {
      name: 'Unknown',
      $fault: 'client',
      $metadata: { httpStatusCode: 404 },
    });
    expect(messageOf(answer)).toBe(
      'DynamoDB at http://10.0.0.9:8000 answered HTTP 404 without a DynamoDB error: is it a DynamoDB endpoint?',
    );
  });

  it('keeps the table in the message for any other error', () => {
    const error = Object.assign(new Error('Requested resource not found'), { name: 'ValidationException' });
    expect(messageOf(error)).toBe(
      'DynamoDB at http://10.0.0.9:8000, table petstore-inventory: Requested resource not found',
    );
  });
});

/** A fake API Gateway client factory: records each client's region and the commands it was sent. */
function aFakeApiGateway(failWith?: Error) {
  const calls: { region: string; command: string; input: unknown; destroyed: boolean }[] = [];
  const factory: ApiGatewayClientFactory = (region) => {
    const call = { region, command: '', input: undefined as unknown, destroyed: false };
    calls.push(call);
    return {
      async send(command) {
        call.command = command.constructor.name;
        call.input = command.input;
        if (failWith) throw failWith;
        return {};
      },
      destroy() {
        call.destroyed = true;
      },
    };
  };
  return { calls, factory };
}

describe('Function: flushAuthorizerCache (keys revoke --stage)', () => {
  const outputs = stackOutputs('production', 'eu-central-1');

  it('flushes the stage authorizer cache of the API the stack outputs name, in the stack region', async () => {
    // Prepare
    const apiGateway = aFakeApiGateway();
    const reader: StackOutputsReader = async () => ({ region: 'eu-central-1', outputs });
    const target = await resolveTarget({ stage: 'production' }, {}, reader, apiGateway.factory);
    target.close();

    // Act
    await target.flushAuthorizerCache?.();

    // Assess
    expect(apiGateway.calls).toEqual([
      {
        region: 'eu-central-1',
        command: FlushStageAuthorizersCacheCommand.name,
        input: { restApiId: 'a1b2c3d4e5', stageName: 'v1' },
        destroyed: true,
      },
    ]);
  });

  it('turns an API Gateway refusal into one line naming the API, the stage and the reason', async () => {
    // Prepare
    const denied = Object.assign(new Error('User is not authorized to perform: apigateway:DELETE\nmore'), {
      name: 'AccessDeniedException',
    });
    const apiGateway = aFakeApiGateway(denied);

    // Act
    const outcome = flushAuthorizerCache(
      { region: 'eu-west-1', restApiId: 'a1b2', stageName: 'v1' },
      apiGateway.factory,
    );

    // Assess
    await expect(outcome).rejects.toThrow(
      /^Could not flush the authorizer cache of API a1b2 stage v1 in eu-west-1: User is not authorized to perform: apigateway:DELETE$/,
    );
    expect(apiGateway.calls[0]?.destroyed).toBe(true);
  });
});

describe('Function: apiUnreachable (the CLI on an API that cannot be reached)', () => {
  const context = { options: {} } as unknown as CommandContext;
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3000'), { code: 'ECONNREFUSED' });
  const reset = Object.assign(new Error('other side closed'), { code: 'ECONNRESET' });
  const messageOf = (error: Error) => apiUnreachable(context, 'http://127.0.0.1:3000/v1', error);

  it('names the network code and npm start when fetch got no answer at all', () => {
    expect(messageOf(new TypeError('fetch failed', { cause: refused }))).toBe(
      'could not reach http://127.0.0.1:3000/v1 (ECONNREFUSED): is `npm start` running? (PORT, or pass --url / --stage)',
    );
  });

  it('says nothing of reaching when the answer came and its body was cut off (an ECONNRESET mid-list)', () => {
    expect(messageOf(new TypeError('terminated', { cause: reset }))).toBeUndefined();
  });
});
