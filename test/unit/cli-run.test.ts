import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheNote } from '../../cli/commands/keys';
import { run } from '../../cli/run';
import { resolveTarget, type StackOutputsReader } from '../../cli/target';
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
    [['inventory', 'export', '--format', 'xml'], /--format must be one of json, csv/],
    [['inventory', 'export', '--stage', 'dev'], /--stage must be one of staging, production; got "dev"/],
    [['inventory', 'export', '--stage', 'staging', '--endpoint', NOWHERE], /--stage and --endpoint cannot be used/],
    [['inventory', 'export', '--endpoint', 'localhost:8000'], /--endpoint must be an http or https URL/],
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

  it('exits 2 when DYNAMODB_PORT is not a port', async () => {
    // Prepare
    const io = aCapturedIo({ env: { DYNAMODB_PORT: 'eighty' } });

    // Act
    const code = await run(['keys', 'list'], io);

    // Assess
    expect(code).toBe(2);
    expect(io.stderr.text).toMatch(/DYNAMODB_PORT must be a port number/);
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

describe('Function: resolveTarget (--stage)', () => {
  const outputs = {
    InventoryTableName: 'PetStoreInventory-staging-InventoryTable-ABC',
    ApiKeysTableName: 'PetStoreInventory-staging-ApiKeysTable-DEF',
    ApiUrl: 'https://example.execute-api.eu-west-1.amazonaws.com/v1',
    AuthorizerCacheTtlSeconds: '60',
  };

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
    expect(target.tables).toEqual({ inventory: outputs.InventoryTableName, apiKeys: outputs.ApiKeysTableName });
    expect(target.authorizerCacheTtlSeconds).toBe(60);
    expect(target.description).toBe('stage staging (stack PetStoreInventory-staging, eu-west-1)');
    expect(cacheNote(target)).toMatch(/The staging API keeps accepting this key for up to 60 s/);
  });

  it('refuses a stack without the table outputs, naming them', async () => {
    // Prepare
    const reader: StackOutputsReader = async () => ({ region: 'eu-west-1', outputs: { ApiUrl: 'x' } });

    // Act
    const outcome = resolveTarget({ stage: 'production' }, {}, reader);

    // Assess
    await expect(outcome).rejects.toThrow(
      'Stack PetStoreInventory-production in eu-west-1 has no output InventoryTableName, ApiKeysTableName',
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
    expect(target.tables).toEqual({ inventory: 'petstore-inventory', apiKeys: 'petstore-api-keys' });
    expect(target.description).toBe('local DynamoDB at http://127.0.0.1:8000');
    expect(cacheNote(target)).toMatch(/restart it to refuse the key now/);
    expect(cacheNote(target)).toMatch(/AUTHORIZER_CACHE_TTL_SECONDS, 300 s by default/);
  });
});
