import { LambdaClient } from '@aws-sdk/client-lambda';
import { createProbeLambdaClient, type PreTrafficDeps, runPreTrafficCheck } from '../../functions/deploy/pre-traffic';
import { codeDeployStandIn } from '../helpers/codedeploy';
import { serveOnLoopback } from '../helpers/loopback-server';

/**
 * Lambda's Invoke as documented (https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html): the payload with
 * 200, or, when the account's or the function's concurrency is used up, 429 with `x-amzn-ErrorType:
 * TooManyRequestsException`. Throttling cannot be produced here for real, so this stand-in refuses the first
 * `throttled` invocations that way and answers the history function's probe after them. It names no Retry-After
 * (Lambda may), which would only lengthen the SDK's waits, not change how many attempts it makes.
 */
async function startLambdaEndpoint(throttled: number, hangs = false) {
  const invocations: string[] = [];
  const server = await serveOnLoopback(async (req, res) => {
    for await (const _ of req) {
      // Drain the request body.
    }
    invocations.push(req.url ?? '');
    if (hangs) return;
    if (invocations.length <= throttled) {
      res.writeHead(429, { 'Content-Type': 'application/json', 'x-amzn-ErrorType': 'TooManyRequestsException' });
      res.end(JSON.stringify({ Type: 'User', message: 'Rate Exceeded.', Reason: 'ConcurrentInvocationLimitExceeded' }));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'X-Amz-Executed-Version': '7' });
    res.end(JSON.stringify({ batchItemFailures: [] }));
  });
  return { endpoint: server.url, invocations, close: server.close };
}

const CLIENT_CONFIG = {
  region: 'eu-west-1',
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
};
const EVENT = { DeploymentId: 'd-1', LifecycleEventHookExecutionId: 'hook-1' };
const TARGETS = { history: { history: true } } as const;

/** Runs the hook once against `standIn`, with the Lambda client `clientFor` builds for the stand-in's endpoint. */
async function checkAgainst(
  standIn: ReturnType<typeof startLambdaEndpoint>,
  clientFor: (endpoint: string) => PreTrafficDeps['lambda'],
) {
  const lambda = await standIn;
  const deploy = codeDeployStandIn('history');
  try {
    const verdict = await runPreTrafficCheck(EVENT, {
      codeDeploy: deploy,
      lambda: clientFor(lambda.endpoint),
      targets: TARGETS,
    });
    return { verdict, reported: deploy.reported.map(({ status }) => status), invocations: lambda.invocations };
  } finally {
    await lambda.close();
  }
}

describe('Pre-traffic hook: a probe throttled by a small account concurrency (real SDK retries, Lambda stand-in)', () => {
  /** Throttles the first three invocations, one more than the SDK's default 3 attempts can outlast. */
  const throttlingThrice = () => startLambdaEndpoint(3);

  it('retries a throttled probe invocation and reports Succeeded once the new version answers', async () => {
    // Act
    const { verdict, reported, invocations } = await checkAgainst(throttlingThrice(), (endpoint) =>
      createProbeLambdaClient({ ...CLIENT_CONFIG, endpoint }),
    );
    // Assess
    expect(verdict).toEqual({ status: 'Succeeded', reason: 'history:7 answered as expected' });
    expect(reported).toEqual(['Succeeded']);
    expect(invocations).toHaveLength(4);
    expect(invocations[0]).toBe('/2015-03-31/functions/history%3A7/invocations');
  });

  it("reports Failed, naming the throttle, when the default client's 3 attempts are all refused", async () => {
    // Act
    const { verdict, reported, invocations } = await checkAgainst(
      throttlingThrice(),
      (endpoint) => new LambdaClient({ ...CLIENT_CONFIG, endpoint }),
    );
    // Assess
    expect(verdict.status).toBe('Failed');
    expect(verdict.reason).toMatch(/Rate Exceeded/);
    expect(reported).toEqual(['Failed']);
    expect(invocations).toHaveLength(3);
  });

  it('gives up an invocation that never answers after its per-attempt time-out, retries it, then reports Failed', async () => {
    // Act: a stand-in that takes every invocation and never answers; the hook's client with 3 attempts of 100 ms each.
    const { verdict, reported, invocations } = await checkAgainst(startLambdaEndpoint(0, true), (endpoint) =>
      createProbeLambdaClient({
        ...CLIENT_CONFIG,
        endpoint,
        maxAttempts: 3,
        requestHandler: { requestTimeout: 100, throwOnRequestTimeout: true },
      }),
    );
    // Assess
    expect(verdict.status).toBe('Failed');
    expect(verdict.reason).toMatch(/100 ms requestTimeout/);
    expect(reported).toEqual(['Failed']);
    expect(invocations).toHaveLength(3);
  });
});
