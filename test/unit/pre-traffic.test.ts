import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { authorize } from '../../functions/api-keys/authorize';
import {
  PRE_TRAFFIC_DEADLINE_MS,
  PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS,
  PRE_TRAFFIC_REPORT_MARGIN_SECONDS,
  type PreTrafficDeps,
  runPreTrafficCheck,
} from '../../functions/deploy/pre-traffic';
import { waivedWhileRollingBack } from '../../functions/deploy/stack-status';
import { InMemoryApiKeyRepository } from '../fixtures/builders';
import { codeDeployStandIn } from '../helpers/codedeploy';

const EVENT = { DeploymentId: 'd-1', LifecycleEventHookExecutionId: 'hook-1' };

/** CodeDeploy, moving the update function's alias from version 6 (or `currentVersion`) to 7. */
const codeDeploy = (functionName = 'stage-UpdateInventoryFunction-abc', currentVersion = '6') =>
  codeDeployStandIn(functionName, currentVersion);

/** Lambda's Invoke: a payload, and FunctionError when the function threw. */
function lambda(answer: (name: string, event: Record<string, unknown>) => { payload: unknown; error?: string }) {
  const invoked: string[] = [];
  return {
    invoked,
    send: async (command: { input: { FunctionName: string; Payload: Uint8Array } }) => {
      invoked.push(command.input.FunctionName);
      const { payload, error } = answer(
        command.input.FunctionName,
        JSON.parse(new TextDecoder().decode(command.input.Payload)),
      );
      return { Payload: new TextEncoder().encode(JSON.stringify(payload)), ...(error ? { FunctionError: error } : {}) };
    },
  };
}

const targets: PreTrafficDeps['targets'] = {
  'stage-UpdateInventoryFunction-abc': { route: 'updateInventory' },
  'stage-AuthorizerFunction-abc': { authorizer: true },
};

/** The hook's verdict on EVENT over the update and authorizer targets, unless `more` says otherwise. */
const check = (
  codeDeploy: PreTrafficDeps['codeDeploy'],
  lambda: PreTrafficDeps['lambda'],
  more: Partial<PreTrafficDeps> = {},
) => runPreTrafficCheck(EVENT, { codeDeploy, lambda, targets, ...more });

/** What the hook reported to CodeDeploy: one status for the hook execution of EVENT. */
const reported = (status: 'Succeeded' | 'Failed') => [
  { deploymentId: 'd-1', lifecycleEventHookExecutionId: 'hook-1', status },
];

/** A function's Error answer, as every handler writes it. */
const errorAnswer = (status: number, code: string) => ({
  payload: { statusCode: status, headers: {}, body: JSON.stringify({ code, message: code, status }) },
});

/** The update function of a working version: 400 for a negative quantity, else 404 (the probe pet has no entry). */
const workingUpdate = (_: string, event: Record<string, unknown>) =>
  String(event.body).includes('-1') ? errorAnswer(400, 'VALIDATION_FAILED') : errorAnswer(404, 'NOT_FOUND');

describe('Function: pre-traffic hook', () => {
  it("invokes the new version itself with its route's checks, writes that change nothing, and reports Succeeded", async () => {
    // Prepare
    const cd = codeDeploy();
    const events: Record<string, unknown>[] = [];
    const fn = lambda((name, event) => {
      events.push(event);
      return workingUpdate(name, event);
    });

    // Act
    const verdict = await check(cd, fn);

    // Assess: the write key's PATCHes reach the function; the read key's is the authorizer's to refuse.
    expect(fn.invoked).toEqual(['stage-UpdateInventoryFunction-abc:7', 'stage-UpdateInventoryFunction-abc:7']);
    expect(events.map((event) => JSON.parse(event.body as string))).toEqual([
      { quantity: 2147483647, expectedQuantity: 2147483647 },
      { quantity: -1 },
    ]);
    expect(events[0]?.headers).toMatchObject({ 'Idempotency-Key': expect.stringMatching(/^deploy-check-/) });
    expect(verdict.status).toBe('Succeeded');
    expect(verdict.waived).toBeUndefined();
    expect(cd.reported).toEqual(reported('Succeeded'));
  });

  it.each([
    ['a 500', { payload: { statusCode: 500, body: '{}' } }],
    ['a crash', { payload: { errorMessage: 'boom' }, error: 'Unhandled' }],
    ['a 404 without the Error body', { payload: { statusCode: 404, body: 'Not Found' } }],
  ])('reports Failed when the new version answers with %s, so no traffic moves to it', async (_, answer) => {
    const cd = codeDeploy();

    const verdict = await check(
      cd,
      lambda(() => answer),
    );

    expect(verdict.status).toBe('Failed');
    expect(cd.reported).toEqual(reported('Failed'));
  });

  /**
   * A rollback may probe the version it restores, where Failed would only stop it (UPDATE_ROLLBACK_FAILED;
   * CloudFormation User Guide, "Continue rolling back an update"): docs/deploying.md, "What a deploy does". Lambda
   * numbers versions upwards, so a deployment from CodeDeploy's currentVersion to a lower targetVersion is one back.
   */
  describe('while the stack rolls back', () => {
    const crash = () => ({ payload: { errorMessage: 'boom' }, error: 'Unhandled' });
    const rollingBack = async () => true;
    // A rollback's deployment moves the alias from the new version (8) back to the one that served before (7).
    const back = () => codeDeploy('stage-UpdateInventoryFunction-abc', '8');

    it('reports Succeeded for a failed probe of the older version a rollback moves back to, the reason saying why', async () => {
      const cd = back();

      const verdict = await check(cd, lambda(crash), { rollingBack });

      expect(verdict).toMatchObject({ status: 'Succeeded', waived: true });
      expect(verdict.reason).toMatch(
        /^stage-UpdateInventoryFunction-abc:7: .*\(not failed: the stack is rolling back\)$/,
      );
      expect(cd.reported).toEqual(reported('Succeeded'));
    });

    it('reports Failed for a failed probe of a NEW version even while the stack rolls back (another hook failed first)', async () => {
      // The forward deployment: from 6 to 7, still running when another alias's failure started the rollback.
      const verdict = await check(codeDeploy(), lambda(crash), { rollingBack });
      expect(verdict.status).toBe('Failed');
    });

    it('never asks the stack status when the probe passes or the deployment moves forward', async () => {
      let asked = 0;
      const count = async () => {
        asked++;
        return true;
      };
      const passing = lambda(workingUpdate);
      await check(back(), passing, { rollingBack: count });
      await check(codeDeploy(), lambda(crash), { rollingBack: count });
      expect(asked).toBe(0);
    });
  });

  describe('the authorizer, with a short-lived write and read key of its own', () => {
    const authorizerOnly = () => codeDeploy('stage-AuthorizerFunction-abc');
    type Decide = (token: string, methodArn: string) => Promise<APIGatewayAuthorizerResult>;

    /** An authorizer version deciding with `decide`, which throws `Unauthorized` as the real one does. */
    function authorizerVersion(decide: Decide) {
      return {
        send: async (command: { input: { Payload: Uint8Array } }) => {
          const event = JSON.parse(new TextDecoder().decode(command.input.Payload));
          try {
            const result = await decide(event.authorizationToken, event.methodArn);
            return { Payload: new TextEncoder().encode(JSON.stringify(result)) };
          } catch (error) {
            const payload = { errorMessage: (error as Error).message, errorType: 'Error' };
            return { Payload: new TextEncoder().encode(JSON.stringify(payload)), FunctionError: 'Unhandled' };
          }
        },
      } as unknown as PreTrafficDeps['lambda'];
    }

    it.each<[string, (keys: InMemoryApiKeyRepository) => Decide, RegExp]>([
      [
        'refuses every valid key',
        () => async () => {
          throw new Error('Unauthorized');
        },
        /a read key was refused \(Unhandled error/,
      ],
      [
        'cannot check keys',
        () => async () => {
          throw new Error('AuthorizerFailure');
        },
        /a key nobody holds was not refused with Unauthorized/,
      ],
      [
        'scopes its policy to the one method asked (a cached answer would refuse every other route)',
        (keys) => async (token, arn) => {
          const result = await authorize(keys, token, arn);
          return {
            ...result,
            policyDocument: {
              ...result.policyDocument,
              Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: arn }],
            },
          };
        },
        /a read key's policy does not decide as documented for GET \/inventory\/-9223372036854775808, /,
      ],
      [
        "gives a read key a write key's policy",
        (keys) => async (token, arn) => {
          const result = await authorize(keys, token, arn);
          const stage = arn.split('/').slice(0, 2).join('/');
          return {
            ...result,
            policyDocument: {
              ...result.policyDocument,
              Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: `${stage}/*/*` }],
            },
          };
        },
        /a read key's policy does not decide as documented for PATCH \/inventory\/-9223372036854775808, PATCH \/inventory\/1, POST \/inventory\/changes$/,
      ],
    ])('reports Failed for a version that %s, and leaves no key behind', async (_, version, reason) => {
      const keys = new InMemoryApiKeyRepository();
      const verdict = await check(authorizerOnly(), authorizerVersion(version(keys)), { keys });
      expect(verdict.status).toBe('Failed');
      expect(verdict.reason).toMatch(reason);
      expect(keys.records.size).toBe(0);
    });
  });

  it('reports Failed for a function it has no probe for, rather than letting it through', async () => {
    const verdict = await check(
      codeDeploy('stage-Unknown-abc'),
      lambda(() => ({ payload: {} })),
    );

    expect(verdict).toEqual({ status: 'Failed', reason: 'no probe for function stage-Unknown-abc' });
  });

  describe('the list (a streaming function, invoked with InvokeWithResponseStream)', () => {
    /**
     * Lambda's InvokeWithResponseStream as documented (https://docs.aws.amazon.com/lambda/latest/api/API_InvokeWithResponseStream.html):
     * an event stream of PayloadChunk items, then InvokeComplete, whose ErrorCode names a failure after the first
     * byte. The function's first bytes are its HTTP prelude (JSON, then 8 zero bytes), as awslambda.HttpResponseStream
     * writes it.
     */
    function streamingLambda(failAfterStatus?: string) {
      const sent: Array<Record<string, unknown>> = [];
      const state = { readToEnd: false };
      return {
        sent,
        state,
        send: async (command: { input: { FunctionName: string; Payload: Uint8Array } }) => {
          sent.push(JSON.parse(new TextDecoder().decode(command.input.Payload)));
          async function* events() {
            const headers = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' };
            const prelude = JSON.stringify({ statusCode: 200, headers });
            yield { PayloadChunk: { Payload: Buffer.concat([Buffer.from(prelude), Buffer.alloc(8)]) } };
            yield { PayloadChunk: { Payload: Buffer.from('[{"petId":1,"quantity":2,') } };
            yield { PayloadChunk: { Payload: Buffer.from('"status":"available"}]') } };
            yield { InvokeComplete: failAfterStatus ? { ErrorCode: failAfterStatus, ErrorDetails: 'boom' } : {} };
            state.readToEnd = true;
          }
          return { EventStream: events() };
        },
      };
    }
    const listTargets: PreTrafficDeps['targets'] = { 'stage-ListInventoryFunction-abc': { route: 'listInventory' } };

    it('asks for a page of one entry, reads the stream to its end and reports Succeeded on that page', async () => {
      // Prepare
      const fn = streamingLambda();
      // Act
      const verdict = await check(codeDeploy('stage-ListInventoryFunction-abc'), fn, { targets: listTargets });
      // Assess: nothing of the version's stream is left unread (an abandoned stream could count as a failure).
      expect(verdict.status).toBe('Succeeded');
      expect(fn.sent).toHaveLength(1);
      expect(fn.sent[0]).toMatchObject({
        queryStringParameters: { limit: '1' },
        multiValueQueryStringParameters: { limit: ['1'] },
      });
      expect(fn.state.readToEnd).toBe(true);
    });

    it('reports Failed when the stream fails after its 200 status (InvokeComplete names an ErrorCode)', async () => {
      // Act
      const verdict = await check(codeDeploy('stage-ListInventoryFunction-abc'), streamingLambda('Unhandled'), {
        targets: listTargets,
      });
      // Assess
      expect(verdict).toEqual({
        status: 'Failed',
        reason: expect.stringContaining('the stream failed: Unhandled boom'),
      });
    });
  });

  /**
   * A hung version (or Lambda) must not keep the hook past its own timeout: CodeDeploy would then get no verdict and
   * wait for its own hook time-out. A hung invocation cannot be produced for real, so the Lambda client here is a
   * stand-in whose answer never comes.
   */
  describe('at its deadline', () => {
    const never = () => new Promise<never>(() => {});
    /** A streamed answer whose prelude comes, then nothing more, ever. */
    const stalledStream = async () => ({
      EventStream: (async function* () {
        yield { PayloadChunk: { Payload: Buffer.concat([Buffer.from('{"statusCode":200}'), Buffer.alloc(8)]) } };
        await never();
      })(),
    });

    it("gives up well before the hook's own timeout, keeping a margin to report", () => {
      expect(PRE_TRAFFIC_DEADLINE_MS + PRE_TRAFFIC_REPORT_MARGIN_SECONDS * 1000).toBeLessThanOrEqual(
        PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS * 1000,
      );
      expect(PRE_TRAFFIC_REPORT_MARGIN_SECONDS).toBeGreaterThan(0);
    });

    it.each([
      ['an invocation that never answers', 'stage-UpdateInventoryFunction-abc', never],
      ['a list stream that stops after its prelude', 'stage-ListInventoryFunction-abc', stalledStream],
    ])('reports Failed, naming the deadline, for %s', async (_, functionName, send) => {
      const cd = codeDeploy(functionName);

      const verdict = await check(cd, { send } as unknown as PreTrafficDeps['lambda'], {
        targets: { ...targets, 'stage-ListInventoryFunction-abc': { route: 'listInventory' } },
        deadlineMs: 50,
      });

      expect(verdict).toEqual({ status: 'Failed', reason: "no verdict within the check's deadline of 0.05 s" });
      expect(cd.reported).toEqual(reported('Failed'));
    });
  });
});

/**
 * The one waiver of the deploy gates (the hook's and the self-check's): an update rollback runs them again on what it
 * restores, where a failure would only stop it (UPDATE_ROLLBACK_FAILED; CloudFormation User Guide, "Continue rolling
 * back an update").
 */
describe('Deploy gates: the waiver while the stack rolls back', () => {
  it('turns a failure into a warning saying why, while the stack rolls back', async () => {
    expect(await waivedWhileRollingBack('3 checks failed', async () => true)).toBe(
      '3 checks failed (not failed: the stack is rolling back)',
    );
  });

  it('lets the failure stand when the stack is not rolling back, its status cannot be read, or there is no stack', async () => {
    const unreadable = async () => {
      throw new Error('AccessDenied');
    };
    for (const status of [async () => false, unreadable, undefined])
      expect(await waivedWhileRollingBack('3 checks failed', status)).toBeUndefined();
  });
});
