import { randomBytes } from 'node:crypto';
import {
  type CodeDeployClient,
  GetDeploymentTargetCommand,
  ListDeploymentTargetsCommand,
  PutLifecycleEventHookExecutionStatusCommand,
} from '@aws-sdk/client-codedeploy';
import {
  InvokeCommand,
  InvokeWithResponseStreamCommand,
  LambdaClient,
  type LambdaClientConfig,
} from '@aws-sdk/client-lambda';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent } from 'aws-lambda';
import { API_STAGE_NAME, ROUTES, type Route } from '../../service/routes';
import { API_KEY_SCOPES } from '../api-keys/key';
import { policyAllows } from '../api-keys/policy';
import type { ApiKeyRepository } from '../api-keys/repository';
import { apiGatewayProxyEvent } from '../http/proxy-event';
import {
  type Answer,
  CHECKS,
  type Check,
  type CheckRequest,
  documentedAllow,
  requestHeaders,
  unknownKey,
} from '../self-check/checks';
import { withShortLivedKeys } from '../self-check/self-check';
import { waivedWhileRollingBack } from './stack-status';

/**
 * What the pre-traffic hook sends a new version, by function name: a route's deploy checks (by its operationId), the
 * TOKEN authorizer the checks' keys, or the history function an empty batch.
 */
export type ProbeTarget = { route: string } | { authorizer: true } | { history: true };

/** The CodeDeploy lifecycle event a hook receives. */
export interface LifecycleHookEvent {
  DeploymentId: string;
  LifecycleEventHookExecutionId: string;
}

/** What the hook needs: the two clients and the probe of each function. */
export interface PreTrafficDeps {
  codeDeploy: Pick<CodeDeployClient, 'send'>;
  lambda: Pick<LambdaClient, 'send'>;
  targets: Readonly<Record<string, ProbeTarget>>;
  /** Where the authorizer's probe writes its short-lived write and read keys (the stage's keys table). */
  keys?: ApiKeyRepository;
  /**
   * Whether CloudFormation is rolling the stack back (deploy/stack-status.ts): a failed probe of a deployment back to
   * an OLDER version then only warns; a forward one's always fails (another group's failure may start the rollback
   * while this probe runs). @default never
   */
  rollingBack?: () => Promise<boolean>;
  /** When the check gives up and reports Failed, in ms from its start. @default {@link PRE_TRAFFIC_DEADLINE_MS} */
  deadlineMs?: number;
}

/** The hook function's timeout, which the stack sets: Lambda's maximum. */
export const PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS = 900;

/** Time the hook keeps past its check's deadline to report the verdict (and, after a failed probe, read its stack). */
export const PRE_TRAFFIC_REPORT_MARGIN_SECONDS = 30;

/**
 * When the check (finding the version, invoking it, reading its answer) gives up and reports Failed: a hung probe
 * must not outlive the hook, or no verdict is reported and the deployment waits for CodeDeploy's own time-out.
 */
export const PRE_TRAFFIC_DEADLINE_MS = (PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS - PRE_TRAFFIC_REPORT_MARGIN_SECONDS) * 1000;

/**
 * How long one probe invocation may wait for Lambda's answer (a streamed one's first bytes) before the SDK gives it up
 * and retries: a working version answers a probe within its cold start and one small read.
 */
const PROBE_ATTEMPT_TIMEOUT_MS = 60_000;

/**
 * Attempts per probe invocation: every group's hook may invoke at once and a small account throttles some; the SDK's
 * back-off over 8 attempts waits at most ~106 s (docs/deploying.md, "What a deploy does").
 */
const PROBE_INVOKE_ATTEMPTS = 8;

/**
 * The hook's Lambda client: the SDK's standard retries, with {@link PROBE_INVOKE_ATTEMPTS} attempts of at most
 * {@link PROBE_ATTEMPT_TIMEOUT_MS} each (without `throwOnRequestTimeout` the SDK only logs a request that outlives it).
 */
export function createProbeLambdaClient(config: LambdaClientConfig = {}): LambdaClient {
  return new LambdaClient({
    maxAttempts: PROBE_INVOKE_ATTEMPTS,
    requestHandler: { requestTimeout: PROBE_ATTEMPT_TIMEOUT_MS, throwOnRequestTimeout: true },
    ...config,
  });
}

/** What the hook reported, and why; `waived` when a failed probe was reported Succeeded because of a rollback. */
export interface PreTrafficVerdict {
  status: 'Succeeded' | 'Failed';
  reason: string;
  waived?: true;
}

/**
 * CodeDeploy's BeforeAllowTraffic hook: sends the version the deployment moves `live` to (never the alias) the deploy
 * checks its function would serve (functions/self-check/checks.ts); anything but a working answer by the deadline
 * reports Failed, before traffic moves (a rollback's move back to an older version excepted: see
 * {@link PreTrafficDeps.rollingBack}).
 */
export async function runPreTrafficCheck(event: LifecycleHookEvent, deps: PreTrafficDeps): Promise<PreTrafficVerdict> {
  let verdict: PreTrafficVerdict;
  const found: { target?: DeploymentTarget } = {};
  try {
    verdict = await withDeadline(deps.deadlineMs ?? PRE_TRAFFIC_DEADLINE_MS, async (signal) => {
      found.target = await deploymentTarget(event.DeploymentId, deps.codeDeploy, signal);
      return probeVerdict(found.target, deps, signal);
    });
  } catch (error) {
    verdict = { status: 'Failed', reason: error instanceof Error ? error.message : String(error) };
  }
  // Only a move back to an older version is a rollback's: a forward deployment's failure always stands.
  const warning =
    verdict.status === 'Failed' && movesBack(found.target)
      ? await waivedWhileRollingBack(verdict.reason, deps.rollingBack)
      : undefined;
  if (warning) verdict = { status: 'Succeeded', reason: warning, waived: true };
  await deps.codeDeploy.send(
    new PutLifecycleEventHookExecutionStatusCommand({
      deploymentId: event.DeploymentId,
      lifecycleEventHookExecutionId: event.LifecycleEventHookExecutionId,
      status: verdict.status,
    }),
  );
  return verdict;
}

/**
 * Runs `work` with a signal that aborts at the deadline, when it rejects naming the deadline even if `work` (a hung
 * request that ignores the signal) never settles.
 */
async function withDeadline<T>(ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const signal = AbortSignal.timeout(ms);
  const expired = new Promise<never>((_, reject) => {
    const reason = () => reject(new Error(`no verdict within the check's deadline of ${ms / 1000} s`));
    signal.addEventListener('abort', reason, { once: true });
  });
  return Promise.race([work(signal), expired]);
}

/** The verdict of the deployment's new version from its probe. */
async function probeVerdict(
  target: DeploymentTarget,
  deps: PreTrafficDeps,
  signal: AbortSignal,
): Promise<PreTrafficVerdict> {
  const probe = deps.targets[target.functionName];
  if (!probe) throw new Error(`no probe for function ${target.functionName}`);
  const qualified = `${target.functionName}:${target.version}`;
  const invoker = { lambda: deps.lambda, qualified, signal };
  let problem: string | undefined;
  if ('authorizer' in probe) problem = await probeAuthorizer(invoker, deps.keys);
  else if ('history' in probe) problem = await probeHistory(invoker);
  else problem = await probeRoute(invoker, probe.route);
  return problem
    ? { status: 'Failed', reason: `${qualified}: ${problem}` }
    : { status: 'Succeeded', reason: `${qualified} answered as expected` };
}

/**
 * Whether the deployment moves the alias back to an older version (Lambda numbers versions upwards), as a rollback
 * does; a forward deployment's failure is never waived, whatever the stack's status.
 */
function movesBack(target: DeploymentTarget | undefined): boolean {
  return (
    target?.currentVersion !== undefined &&
    /^[0-9]+$/.test(target.version) &&
    /^[0-9]+$/.test(target.currentVersion) &&
    Number(target.version) < Number(target.currentVersion)
  );
}

interface DeploymentTarget {
  functionName: string;
  version: string;
  currentVersion?: string;
}

/** The function and the version a Lambda deployment moves its alias to (its one deployment target). */
async function deploymentTarget(
  deploymentId: string,
  codeDeploy: PreTrafficDeps['codeDeploy'],
  abortSignal: AbortSignal,
): Promise<DeploymentTarget> {
  const { targetIds } = await codeDeploy.send(new ListDeploymentTargetsCommand({ deploymentId }), { abortSignal });
  const targetId = targetIds?.[0];
  if (!targetId) throw new Error(`deployment ${deploymentId} has no target`);
  const { deploymentTarget } = await codeDeploy.send(new GetDeploymentTargetCommand({ deploymentId, targetId }), {
    abortSignal,
  });
  const info = deploymentTarget?.lambdaTarget?.lambdaFunctionInfo;
  if (!info?.functionName || !info.targetVersion) throw new Error(`deployment ${deploymentId} names no Lambda version`);
  // The name, whether CodeDeploy gives a name or an ARN.
  const functionName = info.functionName.split(':function:').pop()?.split(':')[0] ?? info.functionName;
  return {
    functionName,
    version: info.targetVersion,
    ...(info.currentVersion ? { currentVersion: info.currentVersion } : {}),
  };
}

/** How to reach the version under test. */
interface Invoker {
  lambda: PreTrafficDeps['lambda'];
  qualified: string;
  signal: AbortSignal;
}

/** The history function's probe: an empty batch, accepted with no failure. */
async function probeHistory({ lambda, qualified, signal }: Invoker): Promise<string | undefined> {
  const { FunctionError, payload } = await invoke(lambda, qualified, { Records: [] }, signal);
  const failures = (payload as { batchItemFailures?: unknown[] } | undefined)?.batchItemFailures;
  return !FunctionError && Array.isArray(failures) && failures.length === 0
    ? undefined
    : `an empty batch was not accepted (${describe(FunctionError, payload)})`;
}

/** The checks a route's function serves: its method and path, with a key its documented policy lets through. */
function checksOfRoute(route: Route): Check[] {
  return CHECKS.filter(
    ({ request }) =>
      routeOf(request) === route &&
      request.key !== 'none' &&
      request.key !== 'unknown' &&
      documentedAllow(request.key, request.method),
  );
}

/** The route that serves a request, undefined for one API Gateway answers itself (an unknown path or method). */
function routeOf(request: CheckRequest): Route | undefined {
  return ROUTES.find(
    (route) =>
      route.method === request.method &&
      new RegExp(`^${route.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(request.path),
  );
}

/** Sends the route's function each of its checks, as API Gateway would after the authorizer; the first problem. */
async function probeRoute(invoker: Invoker, operationId: string): Promise<string | undefined> {
  const route = ROUTES.find((candidate) => candidate.operationId === operationId);
  if (!route) return `no route ${operationId}`;
  for (const check of checksOfRoute(route)) {
    const event = proxyEvent(route, check.request);
    const answer = route.streaming ? await streamedAnswer(invoker, event) : await bufferedAnswer(invoker, event);
    const problem = typeof answer === 'string' ? answer : check.verify(answer);
    if (problem) return `[${check.name}] ${problem}`;
  }
  return undefined;
}

/** The method ARN of a request, as API Gateway sends it to a TOKEN authorizer. */
function methodArn(request: CheckRequest): string {
  return `arn:aws:execute-api:us-east-1:000000000000:probe/${API_STAGE_NAME}/${request.method}${request.path}`;
}

/**
 * The authorizer's probe, from the checks' keys: a key nobody holds is refused with `Unauthorized`; a write and a read
 * key (short-lived, in the keys table) get a policy that, reused for every route as API Gateway caches it, allows
 * exactly what docs/api.md documents for their scope.
 */
async function probeAuthorizer(invoker: Invoker, keys: ApiKeyRepository | undefined): Promise<string | undefined> {
  const routed = [
    ...new Map(CHECKS.filter(({ request }) => routeOf(request)).map(({ request: r }) => [`${r.method} ${r.path}`, r])),
  ].map(([, request]) => request);
  const first = routed[0] as CheckRequest;
  const refused = await authorizerAnswer(invoker, unknownKey(), first);
  if (!(refused.FunctionError && refused.message === 'Unauthorized'))
    return `a key nobody holds was not refused with Unauthorized (${describe(refused.FunctionError, refused.payload)})`;
  if (!keys) return 'no keys table to write its probe keys to';
  return withShortLivedKeys(keys, 'pre-traffic hook', async (secrets) => {
    for (const scope of API_KEY_SCOPES) {
      const { FunctionError, payload } = await authorizerAnswer(invoker, secrets[scope], first);
      if (FunctionError) return `a ${scope} key was refused (${describe(FunctionError, payload)})`;
      const wrong = routed.filter(
        (request) =>
          policyAllows(payload as APIGatewayAuthorizerResult, methodArn(request)) !==
          documentedAllow(scope, request.method),
      );
      if (wrong.length > 0)
        return `a ${scope} key's policy does not decide as documented for ${wrong.map((r) => `${r.method} ${r.path}`).join(', ')}`;
    }
    return undefined;
  });
}

/** The authorizer's answer to a TOKEN event with this key for this request. */
async function authorizerAnswer(invoker: Invoker, key: string, request: CheckRequest) {
  const event = { type: 'TOKEN', authorizationToken: `Bearer ${key}`, methodArn: methodArn(request) };
  const answer = await invoke(invoker.lambda, invoker.qualified, event, invoker.signal);
  return { ...answer, message: (answer.payload as { errorMessage?: unknown } | undefined)?.errorMessage };
}

/** The REST proxy event (payload 1.0) of a check's request, as API Gateway sends it after the authorizer. */
function proxyEvent(route: Route, request: CheckRequest): APIGatewayProxyEvent {
  const templates = route.path.split('/');
  const segments = request.path.split('/');
  const pathParameters = Object.fromEntries(
    templates.flatMap((part, index) => (/^\{.+\}$/.test(part) ? [[part.slice(1, -1), segments[index] ?? '']] : [])),
  );
  const headers = requestHeaders(request, undefined);
  const query = request.query ?? null;
  return apiGatewayProxyEvent({
    resource: route.path,
    path: request.path,
    httpMethod: request.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    queryStringParameters: query,
    multiValueQueryStringParameters: query && Object.fromEntries(Object.entries(query).map(([n, v]) => [n, [v]])),
    pathParameters: Object.keys(pathParameters).length > 0 ? pathParameters : null,
    body: request.body ?? null,
    requestContext: {
      authorizer: { principalId: 'pre-traffic-hook', keyId: 'pre-traffic-hook', scope: request.key },
      requestId: `pre-traffic-${randomBytes(8).toString('hex')}`,
    },
  });
}

/** A buffered function's proxy answer as a client would read it; a string saying what is wrong if it is none. */
async function bufferedAnswer({ lambda, qualified, signal }: Invoker, event: unknown): Promise<Answer | string> {
  const { FunctionError, payload } = await invoke(lambda, qualified, event, signal);
  const answer = payload as {
    statusCode?: unknown;
    headers?: Record<string, string>;
    body?: string;
    isBase64Encoded?: boolean;
  };
  if (FunctionError || typeof answer?.statusCode !== 'number')
    return `no proxy answer (${describe(FunctionError, payload)})`;
  const body = answer.body ?? '';
  return {
    status: answer.statusCode,
    headers: new Headers(answer.headers ?? {}),
    text: answer.isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body,
  };
}

async function invoke(
  lambda: PreTrafficDeps['lambda'],
  qualified: string,
  event: unknown,
  abortSignal: AbortSignal,
): Promise<{ FunctionError?: string; payload: unknown }> {
  const result = await lambda.send(
    new InvokeCommand({ FunctionName: qualified, Payload: new TextEncoder().encode(JSON.stringify(event)) }),
    { abortSignal },
  );
  const text = result.Payload ? new TextDecoder().decode(result.Payload) : '';
  let payload: unknown;
  try {
    payload = text ? JSON.parse(text) : undefined;
  } catch {
    payload = text;
  }
  return { ...(result.FunctionError ? { FunctionError: result.FunctionError } : {}), payload };
}

/**
 * A streamed function's answer: its prelude (JSON, then 8 NUL bytes) and its body, read to the end (a stream left
 * unread could count as a failed invocation, and a failure after the status, InvokeComplete's ErrorCode, is seen).
 */
async function streamedAnswer({ lambda, qualified, signal }: Invoker, event: unknown): Promise<Answer | string> {
  const abort = new AbortController();
  try {
    const result = await lambda.send(
      new InvokeWithResponseStreamCommand({
        FunctionName: qualified,
        Payload: new TextEncoder().encode(JSON.stringify(event)),
      }),
      { abortSignal: AbortSignal.any([abort.signal, signal]) },
    );
    let received = Buffer.alloc(0);
    for await (const item of result.EventStream ?? []) {
      if (item.InvokeComplete?.ErrorCode)
        return `the stream failed: ${item.InvokeComplete.ErrorCode} ${item.InvokeComplete.ErrorDetails ?? ''}`;
      if (item.PayloadChunk?.Payload) received = Buffer.concat([received, item.PayloadChunk.Payload]);
    }
    const end = received.indexOf(Buffer.alloc(8));
    if (end < 0) return 'the stream ended before its prelude';
    const prelude = JSON.parse(received.subarray(0, end).toString('utf8')) as {
      statusCode?: unknown;
      headers?: Record<string, string>;
    };
    if (typeof prelude.statusCode !== 'number') return 'a prelude without a status';
    return {
      status: prelude.statusCode,
      headers: new Headers(prelude.headers ?? {}),
      text: received.subarray(end + 8).toString('utf8'),
    };
  } finally {
    abort.abort();
  }
}

function describe(functionError: string | undefined, payload: unknown): string {
  const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
  return `${functionError ? `${functionError} error, ` : ''}${(text ?? 'no payload').slice(0, 200)}`;
}
