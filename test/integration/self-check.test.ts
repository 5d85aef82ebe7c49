import '../helpers/info-logs';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { DeleteItemCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import {
  ALARM_DELIVERY_CHECK,
  createHandler,
  handler,
  type SelfCheckDeps,
  type SelfCheckReport,
} from '../../functions/handlers/self-check';
import { type AlarmSubscription, PENDING_CONFIRMATION } from '../../functions/self-check/alarm-delivery';
import {
  ABSENT_PET_CANDIDATES,
  ABSENT_PET_ID,
  failedChecks,
  runSmokeChecks,
  type SmokeCheckResult,
} from '../../functions/self-check/checks';
import { runSelfCheck, SelfCheckFailedError } from '../../functions/self-check/self-check';
import { ApiKeyTable } from '../../functions/store/api-key-table';
import { freePort } from '../../local/dynamodb-local';
import { importHandler, type LocalGateway, startLocalGateway } from '../../local/gateway';
import { aLambdaContext, InMemoryApiKeyRepository } from '../fixtures/builders';
import { putItems, snapshotTable, startTestStack, type TestStack } from '../helpers/local-stack';
import { serveOnLoopback } from '../helpers/loopback-server';

/** The names of the seven checks, as every report names them. */
const CHECK_NAMES = [
  'GET /inventory without a key answers 401 UNAUTHORIZED with WWW-Authenticate',
  'GET /inventory?limit=1 with the key answers 200 and a JSON array of at most one {petId, quantity, status}',
  `GET and PATCH of a pet with no entry (from ${ABSENT_PET_ID} up) answer 404 NOT_FOUND and change nothing`,
  'GET /inventory/{petId} of the first listed entry answers 200 with that entry',
  'an unknown path answers 404 NOT_FOUND (API Gateway)',
  'DELETE /inventory answers 405 METHOD_NOT_ALLOWED with Allow: GET (API Gateway)',
  'PATCH with a negative quantity answers 400 VALIDATION_FAILED and writes nothing',
];
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

describe('Self-check: the smoke checks and the deploy self-check against the real local gateway', () => {
  let stack: TestStack;
  let keys: ApiKeyTable;

  beforeAll(async () => {
    stack = await startTestStack();
    keys = new ApiKeyTable({ client: stack.client, tableName: stack.tables.apiKeys });
  });
  afterAll(() => stack.close());

  describe('the shared smoke checks', () => {
    it('pass all seven against a working API, and change no stock (the 404 PATCH creates nothing)', async () => {
      // Prepare
      const before = await snapshotTable(stack.client, stack.tables.inventory);
      // Act
      const { outcome: results } = await capturingOutput(() => runSmokeChecks({ baseUrl: stack.url, key: stack.key }));
      // Assess
      expect(results).toEqual(CHECK_NAMES.map((name) => ({ name })));
      expect(await snapshotTable(stack.client, stack.tables.inventory)).toBe(before);
      const absent = await stack.client.send(
        new GetItemCommand({
          TableName: stack.tables.inventory,
          Key: { petId: { N: ABSENT_PET_ID } },
          ConsistentRead: true,
        }),
      );
      expect(absent.Item).toBeUndefined();
    });

    it('pass when the smallest int64 has an entry: the 404 checks use the next absent pet and change no entry', async () => {
      // Prepare: an operator imported a pet numbered with the smallest int64 (the contract allows any int64), with
      // stock 0, the one stock a compare-and-set on 0 could match.
      const [taken, next] = ABSENT_PET_CANDIDATES as [string, string];
      await putItems(stack.client, stack.tables.inventory, [{ petId: taken, quantity: 0, status: 'available' }]);
      const before = await snapshotTable(stack.client, stack.tables.inventory);
      try {
        // Act
        const { outcome } = await capturingOutput(() => runSmokeChecks({ baseUrl: stack.url, key: stack.key }));
        // Assess: every check passes (a deploy's self-check would not roll back), and no entry changed or appeared.
        expect(outcome).toEqual(CHECK_NAMES.map((name) => ({ name })));
        expect(await snapshotTable(stack.client, stack.tables.inventory)).toBe(before);
        const nextEntry = await stack.client.send(
          new GetItemCommand({ TableName: stack.tables.inventory, Key: { petId: { N: next } }, ConsistentRead: true }),
        );
        expect(nextEntry.Item).toBeUndefined();
      } finally {
        await stack.client.send(
          new DeleteItemCommand({ TableName: stack.tables.inventory, Key: { petId: { N: taken } } }),
        );
      }
    });

    it('fail the 404 check without sending a PATCH when every candidate pet has an entry, and change none', async () => {
      // Prepare
      await putItems(
        stack.client,
        stack.tables.inventory,
        ABSENT_PET_CANDIDATES.map((petId) => ({ petId, quantity: 0, status: 'available' as const })),
      );
      const before = await snapshotTable(stack.client, stack.tables.inventory);
      try {
        // Act
        const { outcome } = await capturingOutput(() => runSmokeChecks({ baseUrl: stack.url, key: stack.key }));
        // Assess
        expect(failedChecks(outcome as SmokeCheckResult[])).toEqual([
          {
            name: CHECK_NAMES[2],
            problem: `not sent: pets ${ABSENT_PET_ID} to ${ABSENT_PET_CANDIDATES.at(-1)} all have entries, which this check must not change`,
          },
        ]);
        expect(await snapshotTable(stack.client, stack.tables.inventory)).toBe(before);
      } finally {
        for (const petId of ABSENT_PET_CANDIDATES)
          await stack.client.send(
            new DeleteItemCommand({ TableName: stack.tables.inventory, Key: { petId: { N: petId } } }),
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

    it('passes against the local gateway with a key it creates for the run and deletes, and never logs it', async () => {
      // Prepare: the function as deployed, its URL a recording proxy in front of the gateway.
      const seen: string[] = [];
      const requests: string[] = [];
      const proxy = await serve(forwardTo(new URL(stack.url).origin, seen, requests));
      process.env.SELF_CHECK_BASE_URL = proxy.url;
      try {
        // Act
        const { outcome, output, keysBefore, keysAfter } = await runOnce(handler);
        // Assess: the checks ran with one new key (accepted by the authorizer, so it was in the table)...
        expect(outcome).toEqual({ baseUrl: proxy.url, passed: CHECK_NAMES, warnings: [] });
        const usedKeys = [...new Set(seen)];
        expect(usedKeys).toHaveLength(1);
        const [key] = usedKeys as [string];
        expect(key).toMatch(ANY_KEY);
        expect(key).not.toBe(stack.key);
        // The list is read as one page of one entry (no stream left unread on a stage, where an abandoned stream
        // could count as a failed invocation); the only unpaged list asked for is the 401 check's, without a key.
        expect(requests.filter((sent) => /^GET \/v1\/inventory(\?|$)/.test(sent))).toEqual([
          'GET /v1/inventory',
          'GET /v1/inventory?limit=1',
        ]);
        // ... which is gone afterwards, and appears in no log line, though the log did speak.
        expect(keysAfter).toBe(keysBefore);
        expect(output).toMatch(/self-check key created/);
        expect(output).toMatch(/self-check key deleted/);
        expect(output).toMatch(/self-check passed/);
        expect(output).not.toContain(key);
        expect(output).not.toContain(key.slice(4, 30));
        expect(output).not.toMatch(ANY_KEY);
      } finally {
        delete process.env.SELF_CHECK_BASE_URL;
        await proxy.close();
      }
    });

    /** The alarm delivery of a stage that must page, whose alarm topic has `subscriptions`. */
    const alarmTopicWith = (subscriptions: AlarmSubscription[]) => ({
      topicArn: 'arn:aws:sns:eu-west-1:123456789012:alarms',
      onCallTopic: false,
      required: true,
      listSubscriptions: async () => subscriptions,
      retryDelayMs: 0,
    });

    it("checks alarm delivery first, then the API, and reports a first deploy's unconfirmed e-mail as a warning", async () => {
      const { outcome, output, keysBefore, keysAfter } = await runOnce(
        selfCheckWith({ alarmDelivery: alarmTopicWith([PENDING_CONFIRMATION]) }),
      );
      expect(outcome).toMatchObject({ passed: [ALARM_DELIVERY_CHECK, ...CHECK_NAMES] });
      expect((outcome as SelfCheckReport).warnings).toEqual([expect.stringMatching(/^alarms reach no one until/)]);
      expect(output).toMatch(/"level":"WARN","message":"alarm delivery"/);
      expect(keysAfter).toBe(keysBefore);
    });

    it('fails the deployment when its alarms reach no one on a stage that must page, writing no key', async () => {
      const { outcome, keysBefore, keysAfter } = await runOnce(selfCheckWith({ alarmDelivery: alarmTopicWith([]) }));
      expect(outcome).toBeInstanceOf(SelfCheckFailedError);
      expect((outcome as Error).message).toMatch(/^Alarm delivery: alarms reach no one/);
      expect(keysAfter).toBe(keysBefore);
    });

    it('fails naming all seven checks when nothing listens (connection refused), and still deletes its key', async () => {
      // Prepare
      const baseUrl = `http://127.0.0.1:${await freePort()}/v1`;
      // Act
      const { outcome, keysBefore, keysAfter } = await runOnce(selfCheckWith({ baseUrl }));
      // Assess
      expect(outcome).toBeInstanceOf(SelfCheckFailedError);
      const error = outcome as Error;
      expect(error.message).toMatch(
        new RegExp(`^Self-check of ${baseUrl.replaceAll('.', '\\.')} failed 7 of 7 checks: \\[`),
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
    it('during a rollback reports failed checks as a warning, not a failure, and still deletes its key', async () => {
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
          expect.stringMatching(/^Self-check of .* failed 7 of 7 checks: .*\(not failed: the stack is rolling back\)$/),
        ],
      });
      expect(output).toMatch(/"level":"WARN","message":"self-check failed during a rollback"/);
      expect(keysAfter).toBe(keysBefore);
    });

    it('asks for the stack status once per run when both alarm delivery and the API checks fail, and anew each run', async () => {
      // Prepare: a stage that must page with no subscription, whose API does not answer, during a rollback.
      const baseUrl = `http://127.0.0.1:${await freePort()}/v1`;
      let asked = 0;
      const check = selfCheckWith({
        baseUrl,
        alarmDelivery: alarmTopicWith([]),
        rollingBack: async () => {
          asked++;
          return true;
        },
      });
      // Act
      const first = await runOnce(check);
      const second = await runOnce(check);
      // Assess
      for (const { outcome } of [first, second]) {
        expect((outcome as SelfCheckReport).warnings).toEqual([
          expect.stringMatching(/^alarms reach no one: .*\(not failed: the stack is rolling back\)$/),
          expect.stringMatching(/^Self-check of .*\(not failed: the stack is rolling back\)$/),
        ]);
      }
      expect(asked).toBe(2);
    });

    it('fails as before when the stack is not rolling back, or its status cannot be read; a passing run never asks', async () => {
      // Prepare
      const baseUrl = `http://127.0.0.1:${await freePort()}/v1`;
      let asked = 0;
      const notRollingBack = async () => {
        asked++;
        return false;
      };
      const unreadable = async () => {
        asked++;
        throw new Error('AccessDenied');
      };
      // Act
      // One after the other: each capture replaces the process's writers and puts back what it found.
      const failing: Awaited<ReturnType<typeof runOnce>>[] = [];
      for (const rollingBack of [notRollingBack, unreadable])
        failing.push(await runOnce(selfCheckWith({ baseUrl, rollingBack })));
      const askedWhenFailing = asked;
      const { outcome: passing } = await runOnce(selfCheckWith({ rollingBack: notRollingBack }));
      // Assess
      for (const { outcome } of failing) expect(outcome).toBeInstanceOf(SelfCheckFailedError);
      expect(askedWhenFailing).toBe(2);
      expect(passing).toMatchObject({ passed: CHECK_NAMES, warnings: [] });
      expect(asked).toBe(2);
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
        expect(message).toMatch(/failed 7 of 7 checks/);
        expect(message).toContain(`[${CHECK_NAMES[0]}] status 200 instead of 401`);
        expect(message).toContain(`[${CHECK_NAMES[1]}] the body is not an array of at most one InventoryItem`);
        expect(message).toContain(`[${CHECK_NAMES[2]}] GET of pet ${ABSENT_PET_ID}: unexpected body {"echo"`);
        expect(message).toContain(`[${CHECK_NAMES[3]}] not sent: the list could not be read`);
        expect(message).toContain(`[${CHECK_NAMES[4]}] status 200 instead of 404`);
        expect(message).toContain(`[${CHECK_NAMES[5]}] status 200 instead of 405`);
        expect(message).toContain(`[${CHECK_NAMES[6]}] status 200 instead of 400`);
        const key = seen[0] as string;
        expect(key).toMatch(ANY_KEY);
        expect(message).toContain('Bearer <the key>');
        expect(message).not.toContain(key);
        expect(output).not.toContain(key);
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
        expect(error.message).toMatch(/failed 6 of 7 checks/);
        expect(error.message).not.toContain(`[${CHECK_NAMES[0]}]`);
        for (const name of CHECK_NAMES.slice(1)) expect(error.message).toContain(`[${name}]`);
        expect(error.message).toContain(`[${CHECK_NAMES[1]}] status 503`);
      } finally {
        await broken.close();
      }
    });

    it('retries failing checks while a deployment settles, and passes once the stage answers', async () => {
      // Prepare: a stage that answers 503 to its first eight requests (a deployment still propagating).
      let refused = 0;
      const forward = forwardTo(new URL(stack.url).origin, []);
      const settling = await serve((req, res) => {
        if (refused < 8) {
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
        // Assess: two failed runs (five refusals, then three), then a passing one.
        expect(outcome).toEqual(CHECK_NAMES.map((name) => ({ name })));
        expect(output.match(/retrying while the deployment settles/g)).toHaveLength(2);
        expect(await snapshotTable(stack.client, stack.tables.apiKeys)).toBe(keysBefore);
      } finally {
        await settling.close();
      }
    });

    it('fails with a clear message, calling nothing, when its key cannot be written', async () => {
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
          'The self-check could not write its key to the keys table: User is not authorized to perform: dynamodb:PutItem',
        );
        expect(calls).toEqual([]);
      } finally {
        await target.close();
      }
    });

    it('fails naming the key and how to revoke it when the key cannot be deleted', async () => {
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
      const error = outcome as Error;
      const [record] = [...undeletable.records.values()];
      expect(record?.name).toBe('self-check lambda-req-1');
      expect(error.message).toBe(
        `The self-check could not delete its key ${record?.keyId} ("self-check lambda-req-1"): revoke it with ` +
          `"npm run cli -- keys revoke ${record?.keyId} --stage <stage>".`,
      );
    });
  });
});
