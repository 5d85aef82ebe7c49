import '../helpers/info-logs';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { DeleteItemCommand } from '@aws-sdk/client-dynamodb';
import { generateApiKey } from '../../functions/api-keys/key';
import { createHandler, handler, type SelfCheckDeps } from '../../functions/handlers/self-check';
import { CHECKS, PROBE_PET_ID, runApiChecks } from '../../functions/self-check/checks';
import { runSelfCheck, SelfCheckFailedError } from '../../functions/self-check/self-check';
import { ApiKeyTable } from '../../functions/store/api-key-table';
import { freePort } from '../../local/dynamodb-local';
import { importHandler, type LocalGateway, startLocalGateway } from '../../local/gateway';
import { aLambdaContext, InMemoryApiKeyRepository } from '../fixtures/builders';
import { putItems, snapshotTable, startTestStack, type TestStack } from '../helpers/local-stack';
import { serveOnLoopback } from '../helpers/loopback-server';

/** The names of the checks, as every report names them. */
const CHECK_NAMES = CHECKS.map(({ name }) => name);
const ANY_KEY = /psk_[A-Za-z0-9_-]{43}/;

/** A small HTTP server on a free loopback port; `url` ends in `/v1` like a stage's. */
async function serve(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = await serveOnLoopback(listener);
  return { ...server, url: `${server.url}/v1` };
}

/** Forwards every request to `target` (an origin) as it came, after noting its bearer token (and its method and URL). */
function forwardTo(target: string, seen: string[], requests: string[] = []) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (token) seen.push(token);
    requests.push(`${req.method} ${req.url}`);
    const upstream = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  };
}

/** Everything the process writes to stdout and stderr while `act` runs (the Powertools logger writes there). */
async function capturingOutput<T>(act: () => Promise<T>): Promise<{ outcome: T | Error; output: string }> {
  const chunks: string[] = [];
  const originals = { stdout: process.stdout.write, stderr: process.stderr.write };
  const capture = (chunk: unknown) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
    return true;
  };
  process.stdout.write = capture as typeof process.stdout.write;
  process.stderr.write = capture as typeof process.stderr.write;
  try {
    return { outcome: await act().catch((error: Error) => error), output: chunks.join('') };
  } finally {
    process.stdout.write = originals.stdout;
    process.stderr.write = originals.stderr;
  }
}

describe('Self-check: the deploy checks and the deploy self-check against the real local gateway', () => {
  let stack: TestStack;
  let keys: ApiKeyTable;

  beforeAll(async () => {
    stack = await startTestStack();
    keys = new ApiKeyTable({ client: stack.client, tableName: stack.tables.apiKeys });
  });
  afterAll(() => stack.close());

  // Every check passing against a working API, leaving the stock: below (the function) and cli-smoke.test.ts.
  describe('the deploy checks, through the API', () => {
    /** The stack's write key and a read key of its own. */
    async function bothKeys() {
      const { key, record } = generateApiKey('deploy checks (read)', new Date(), 'read');
      await keys.create(record);
      return { write: stack.key, read: key };
    }

    it("pass when an operator imported the probe pet, and leave its entry as it was (the writes' 409)", async () => {
      // Prepare: the contract allows any int64; stock 0, which the checks' compare-and-set on 2147483647 refuses.
      await putItems(stack.client, stack.tables.inventory, [{ petId: PROBE_PET_ID, quantity: 0, status: 'available' }]);
      const before = await snapshotTable(stack.client, stack.tables.inventory);
      try {
        // Act
        const { outcome } = await capturingOutput(async () =>
          runApiChecks({ baseUrl: stack.url, keys: await bothKeys() }),
        );
        // Assess
        expect(outcome).toEqual(CHECK_NAMES.map((name) => ({ name })));
        expect(await snapshotTable(stack.client, stack.tables.inventory)).toBe(before);
      } finally {
        await stack.client.send(
          new DeleteItemCommand({ TableName: stack.tables.inventory, Key: { petId: { N: PROBE_PET_ID } } }),
        );
      }
    });
  });

  describe('the self-check function, invoked in process', () => {
    /** The self-check on the stack's keys table and gateway, without settling, unless `deps` says otherwise. */
    const selfCheckWith = (deps: Partial<SelfCheckDeps>) =>
      createHandler({ keys, baseUrl: stack.url, settleMs: 0, ...deps });

    /** Runs `check` once, capturing its output, with the keys table as it was before and after. */
    async function runOnce(check: typeof handler) {
      const keysBefore = await snapshotTable(stack.client, stack.tables.apiKeys);
      const { outcome, output } = await capturingOutput(() => check(undefined, aLambdaContext()));
      return { outcome, output, keysBefore, keysAfter: await snapshotTable(stack.client, stack.tables.apiKeys) };
    }

    it('passes against the local gateway with a write and a read key it creates for the run and deletes, and never logs them', async () => {
      // Prepare: the function as deployed, its URL a recording proxy in front of the gateway.
      const seen: string[] = [];
      const requests: string[] = [];
      const proxy = await serve(forwardTo(new URL(stack.url).origin, seen, requests));
      process.env.SELF_CHECK_BASE_URL = proxy.url;
      try {
        // Act
        const { outcome, output, keysBefore, keysAfter } = await runOnce(handler);
        // Assess: the checks ran with the key nobody holds and two new keys (the authorizer accepted them, so they
        // were in the table)...
        expect(outcome).toEqual({ baseUrl: proxy.url, passed: CHECK_NAMES, warnings: [] });
        const usedKeys = [...new Set(seen)];
        expect(usedKeys).toHaveLength(3);
        for (const key of usedKeys) {
          expect(key).toMatch(ANY_KEY);
          expect(key).not.toBe(stack.key);
          expect(output).not.toContain(key.slice(4, 30));
        }
        // The list is read as one page of one entry (no stream left unread on a stage, where an abandoned stream
        // could count as a failed invocation); the unpaged lists asked for are the 401 checks'.
        expect(requests.filter((sent) => /^GET \/v1\/inventory(\?|$)/.test(sent))).toEqual([
          'GET /v1/inventory',
          'GET /v1/inventory',
          'GET /v1/inventory?limit=1',
        ]);
        // ... which are gone afterwards, and appear in no log line, though the log did speak.
        expect(keysAfter).toBe(keysBefore);
        expect(output.match(/check key created/g)).toHaveLength(2);
        expect(output.match(/check key deleted/g)).toHaveLength(2);
        expect(output).toMatch(/self-check passed/);
        expect(output).not.toMatch(ANY_KEY);
      } finally {
        delete process.env.SELF_CHECK_BASE_URL;
        await proxy.close();
      }
    });

    it('fails naming every check when nothing listens (connection refused), and still deletes its keys', async () => {
      // Prepare
      const baseUrl = `http://127.0.0.1:${await freePort()}/v1`;
      // Act
      const { outcome, keysBefore, keysAfter } = await runOnce(selfCheckWith({ baseUrl }));
      // Assess
      expect(outcome).toBeInstanceOf(SelfCheckFailedError);
      const error = outcome as Error;
      expect(error.message).toMatch(
        new RegExp(`^Self-check of ${baseUrl.replaceAll('.', '\\.')} failed 13 of 13 checks: \\[`),
      );
      for (const name of CHECK_NAMES) expect(error.message).toContain(`[${name}]`);
      expect(error.message).toMatch(/ECONNREFUSED/);
      expect(keysAfter).toBe(keysBefore);
    });

    /**
     * A rollback runs the previous self-check again, and a trigger that fails then leaves the stack in
     * UPDATE_ROLLBACK_FAILED (AWS CloudFormation User Guide, "Stack status codes"; "Continue rolling back an update"):
     * the rollback cannot do better than what it restores, so during one a failed check only warns.
     */
    it('during a rollback reports failed checks as a warning, not a failure, and still deletes its keys', async () => {
      // Prepare
      const baseUrl = `http://127.0.0.1:${await freePort()}/v1`;
      // Act
      const { outcome, output, keysBefore, keysAfter } = await runOnce(
        selfCheckWith({ baseUrl, rollingBack: async () => true }),
      );
      // Assess
      expect(outcome).toEqual({
        baseUrl,
        passed: [],
        warnings: [
          expect.stringMatching(
            /^Self-check of .* failed 13 of 13 checks: .*\(not failed: the stack is rolling back\)$/,
          ),
        ],
      });
      expect(output).toMatch(/"level":"WARN","message":"self-check failed during a rollback"/);
      expect(keysAfter).toBe(keysBefore);
    });

    it('fails naming every check a target answering 200 to everything gets wrong, the echoed key redacted', async () => {
      // Prepare: a target that answers 200 and echoes the request's headers, key included.
      const seen: string[] = [];
      const target = await serve((req, res) => {
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        if (token) seen.push(token);
        res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
        res.end(JSON.stringify({ echo: req.headers }));
      });
      try {
        // Act
        const { outcome, output, keysBefore, keysAfter } = await runOnce(selfCheckWith({ baseUrl: target.url }));
        // Assess
        expect(outcome).toBeInstanceOf(SelfCheckFailedError);
        const message = (outcome as Error).message;
        const problems = [
          'status 200 instead of 401',
          'status 200 instead of 401',
          'the body is not an array of at most one InventoryItem',
          'unexpected body {"echo"',
          'status 200 instead of 403',
          'unexpected body {"echo"',
          'status 200 instead of 400',
          'unexpected body {"echo"',
          'the body is not an array of changes',
          'status 200 instead of 501',
          'status 200 instead of 501',
          'status 200 instead of 404',
          'status 200 instead of 405',
        ];
        expect(message).toMatch(new RegExp(`failed ${problems.length} of ${CHECK_NAMES.length} checks`));
        for (const [index, problem] of problems.entries())
          expect(message).toContain(`[${CHECK_NAMES[index]}] ${problem}`);
        expect(new Set(seen).size).toBe(3);
        expect(message).toContain('Bearer <the key>');
        for (const key of seen) {
          expect(message).not.toContain(key);
          expect(output).not.toContain(key);
        }
        expect(output).not.toMatch(ANY_KEY);
        expect(keysAfter).toBe(keysBefore);
      } finally {
        await target.close();
      }
    });

    it('fails when the stage cannot authorize: the checks behind the authorizer are named, the 401 one passes', async () => {
      // Prepare: the same stage, but its authorizer cannot reach the keys table.
      const broken: LocalGateway = await startLocalGateway(0, {
        log: () => undefined,
        loadHandler: async (name) =>
          name === 'authorizer'
            ? async () => {
                throw new Error('keys table unreachable');
              }
            : importHandler(name),
      });
      try {
        // Act
        const { outcome } = await runOnce(selfCheckWith({ baseUrl: broken.url }));
        // Assess
        expect(outcome).toBeInstanceOf(SelfCheckFailedError);
        const error = outcome as Error;
        expect(error.message).toMatch(/failed 12 of 13 checks/);
        expect(error.message).not.toContain(`[${CHECK_NAMES[0]}]`);
        for (const name of CHECK_NAMES.slice(1)) expect(error.message).toContain(`[${name}] status 503`);
      } finally {
        await broken.close();
      }
    });

    it('retries failing checks while a deployment settles, and passes once the stage answers', async () => {
      // Prepare: a stage that answers 503 to its first 20 requests (a deployment still propagating).
      let refused = 0;
      const forward = forwardTo(new URL(stack.url).origin, []);
      const settling = await serve((req, res) => {
        if (refused < 20) {
          refused++;
          req.resume();
          res.writeHead(503, { 'Content-Type': 'application/json' }).end('{"message":"not yet"}');
          return;
        }
        forward(req, res);
      });
      const keysBefore = await snapshotTable(stack.client, stack.tables.apiKeys);
      try {
        // Act
        const { outcome, output } = await capturingOutput(() =>
          runSelfCheck({
            keys,
            baseUrl: settling.url,
            keyName: 'self-check settling',
            remainingTimeMs: () => 240_000,
            settleMs: 25_000, // a bound, not a wait: the third run passes in well under a second
            retryDelayMs: 20,
          }),
        );
        // Assess: two failed runs (13 refusals, then seven), then a passing one.
        expect(outcome).toEqual(CHECK_NAMES.map((name) => ({ name })));
        expect(output.match(/retrying while the deployment settles/g)).toHaveLength(2);
        expect(await snapshotTable(stack.client, stack.tables.apiKeys)).toBe(keysBefore);
      } finally {
        await settling.close();
      }
    });

    it('fails with a clear message, calling nothing, when a key cannot be written', async () => {
      // Prepare
      const unwritable = new InMemoryApiKeyRepository();
      unwritable.create = async () => {
        throw new Error('User is not authorized to perform: dynamodb:PutItem');
      };
      const calls: string[] = [];
      const target = await serve((req, res) => {
        calls.push(`${req.method} ${req.url}`);
        res.writeHead(500).end();
      });
      try {
        // Act
        const { outcome } = await runOnce(selfCheckWith({ keys: unwritable, baseUrl: target.url }));
        // Assess
        expect(outcome).toBeInstanceOf(SelfCheckFailedError);
        expect((outcome as Error).message).toBe(
          'Could not write a check key to the keys table: User is not authorized to perform: dynamodb:PutItem',
        );
        expect(calls).toEqual([]);
      } finally {
        await target.close();
      }
    });

    it('fails naming each key and how to revoke it when the keys cannot be deleted', async () => {
      // Prepare
      const undeletable = new InMemoryApiKeyRepository();
      undeletable.delete = async () => {
        throw new Error('AccessDeniedException');
      };
      const baseUrl = `http://127.0.0.1:${await freePort()}/v1`;
      // Act
      const { outcome } = await runOnce(selfCheckWith({ keys: undeletable, baseUrl }));
      // Assess
      expect(outcome).toBeInstanceOf(SelfCheckFailedError);
      const [write, read] = [...undeletable.records.values()];
      expect([write?.name, read?.name]).toEqual(['self-check lambda-req-1 (write)', 'self-check lambda-req-1 (read)']);
      expect((outcome as Error).message).toBe(
        `Could not delete the check keys ${write?.keyId} ("self-check lambda-req-1 (write)"), ${read?.keyId} ` +
          `("self-check lambda-req-1 (read)"): revoke each with "npm run cli -- keys revoke <keyId> --stage <stage>".`,
      );
    });
  });
});
