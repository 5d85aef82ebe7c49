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
import { API_STAGE_NAME, ROUTES, type Route } from '../../service/routes';
import { MAX_QUANTITY, MIN_PET_ID } from '../inventory/types';
import { isRollingBack, NOT_FAILED_WHILE_ROLLING_BACK } from './stack-status';

/**
 * What the pre-traffic hook sends a new version, by function name: a route by its operationId, the TOKEN
 * authorizer, or the history function.
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

/** A pet id no import creates in practice; the probe's PATCH changes nothing unless it exists with this stock. */
const PROBE_PET_ID = String(MIN_PET_ID);

/**
 * CodeDeploy's BeforeAllowTraffic hook: invokes the version the deployment moves `live` to (never the alias) with a
 * request that changes nothing; anything but a working answer by the deadline reports Failed, before traffic moves
 * (a rollback's move back to an older version excepted: see {@link PreTrafficDeps.rollingBack}).
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
  // Asked only after a failed probe of an older version, so a deploy's checks make no CloudFormation call.
  if (verdict.status === 'Failed' && movesBack(found.target) && (await isRollingBack(deps.rollingBack)))
    verdict = { status: 'Succeeded', reason: `${verdict.reason} ${NOT_FAILED_WHILE_ROLLING_BACK}`, waived: true };
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
  const problem = await runProbe(qualified, probe, deps.lambda, signal);
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

/** Invokes the version with its probe: undefined when it answered as expected, else what was wrong. */
async function runProbe(
  qualified: string,
  probe: ProbeTarget,
  lambda: PreTrafficDeps['lambda'],
  signal: AbortSignal,
): Promise<string | undefined> {
  if ('authorizer' in probe) {
    // A well-formed key nobody holds: the authorizer must look it up and refuse it with `Unauthorized`.
    const event = {
      type: 'TOKEN',
      authorizationToken: `Bearer psk_${randomBytes(32).toString('base64url')}`,
      methodArn: `arn:aws:execute-api:us-east-1:000000000000:probe/${API_STAGE_NAME}/GET/inventory`,
    };
    const { FunctionError, payload } = await invoke(lambda, qualified, event, signal);
    const message = (payload as { errorMessage?: unknown } | undefined)?.errorMessage;
    return FunctionError && message === 'Unauthorized'
      ? undefined
      : `an unknown key was not refused with Unauthorized (${describe(FunctionError, payload)})`;
  }
  if ('history' in probe) {
    const { FunctionError, payload } = await invoke(lambda, qualified, { Records: [] }, signal);
    const failures = (payload as { batchItemFailures?: unknown[] } | undefined)?.batchItemFailures;
    return !FunctionError && Array.isArray(failures) && failures.length === 0
      ? undefined
      : `an empty batch was not accepted (${describe(FunctionError, payload)})`;
  }
  const route = ROUTES.find((candidate) => candidate.operationId === probe.route);
  if (!route) return `no route ${probe.route}`;
  const event = probeEvent(route.method, route.path, route.streaming);
  const status = route.streaming
    ? await streamedStatus(lambda, qualified, event, signal)
    : await invoke(lambda, qualified, event, signal).then(({ FunctionError, payload }) => {
        const code = (payload as { statusCode?: unknown } | undefined)?.statusCode;
        return FunctionError || typeof code !== 'number'
          ? `no proxy answer (${describe(FunctionError, payload)})`
          : code;
      });
  if (typeof status === 'string') return status;
  const expected = expectedStatuses(route);
  return expected.includes(status) ? undefined : `answered ${status}, expected ${expected.join(' or ')}`;
}

/**
 * What a working version answers the probe: 501 for a route not implemented; for a route on one pet, 404 (the probe
 * pet is absent in practice) or, were it present, 200 (a read) or 409 (a write's condition); 200 for the list.
 */
function expectedStatuses(route: Pick<Route, 'method' | 'path' | 'notImplemented'>): number[] {
  if (route.notImplemented) return [501];
  if (route.method !== 'GET') return [200, 404, 409];
  return route.path.includes('{petId}') ? [200, 404] : [200];
}

/** The REST proxy event (payload 1.0) of the route's probe, as API Gateway would send it after the authorizer. */
function probeEvent(method: string, path: string, streaming = false): Record<string, unknown> {
  const petId = path.includes('{petId}') ? PROBE_PET_ID : undefined;
  const concretePath = petId ? path.replace('{petId}', petId) : path;
  const write = method !== 'GET';
  // A write goes through the idempotency store too (its table, grants and bundled utility), under a key of its own:
  // the kept answer (a 404 or 409) expires with the key's 24 hours.
  const headers: Record<string, string> = write
    ? { 'Content-Type': 'application/json', 'Idempotency-Key': `pre-traffic-${randomBytes(8).toString('hex')}` }
    : { 'Accept-Encoding': 'gzip' };
  return {
    resource: path,
    path: concretePath,
    httpMethod: method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    // The list: one page of one entry, which the probe reads whole.
    queryStringParameters: streaming ? { limit: '1' } : null,
    multiValueQueryStringParameters: streaming ? { limit: ['1'] } : null,
    pathParameters: petId ? { petId } : null,
    stageVariables: null,
    body: write ? probeBody(method) : null,
    isBase64Encoded: false,
    requestContext: {
      authorizer: { principalId: 'pre-traffic-hook', keyId: 'pre-traffic-hook' },
      httpMethod: method,
      path: `/${API_STAGE_NAME}${concretePath}`,
      stage: API_STAGE_NAME,
      requestId: `pre-traffic-${randomBytes(8).toString('hex')}`,
      requestTimeEpoch: Date.now(),
      resourcePath: path,
      identity: { sourceIp: '127.0.0.1', userAgent: 'pre-traffic-hook' },
      protocol: 'HTTP/1.1',
    },
  };
}

/** Sets the probe pet's stock only if it already is this value: a 404 or 409 otherwise (the batch: of one change). */
function probeBody(method: string): string {
  const change = `"quantity":${MAX_QUANTITY},"expectedQuantity":${MAX_QUANTITY}`;
  return method === 'PATCH' ? `{${change}}` : `{"changes":[{"petId":${PROBE_PET_ID},${change}}]}`;
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

/** The status of a streamed answer: its prelude (JSON, then 8 NUL bytes), read before the body is given up. */
async function streamedStatus(
  lambda: PreTrafficDeps['lambda'],
  qualified: string,
  event: unknown,
  deadline: AbortSignal,
): Promise<number | string> {
  const abort = new AbortController();
  try {
    const result = await lambda.send(
      new InvokeWithResponseStreamCommand({
        FunctionName: qualified,
        Payload: new TextEncoder().encode(JSON.stringify(event)),
      }),
      { abortSignal: AbortSignal.any([abort.signal, deadline]) },
    );
    // The probe asks for a page of one entry and reads it to the end: a stream left unread could count as a failed
    // invocation of the version, and a failure after the status (InvokeComplete's ErrorCode) is still seen.
    let head = Buffer.alloc(0);
    let status: number | string = 'the stream ended before its prelude';
    let prelude = false;
    for await (const item of result.EventStream ?? []) {
      if (item.InvokeComplete?.ErrorCode)
        return `the stream failed: ${item.InvokeComplete.ErrorCode} ${item.InvokeComplete.ErrorDetails ?? ''}`;
      if (prelude || !item.PayloadChunk?.Payload) continue;
      head = Buffer.concat([head, item.PayloadChunk.Payload]);
      const end = head.indexOf(Buffer.alloc(8));
      if (end < 0) continue;
      prelude = true;
      const answer = JSON.parse(head.subarray(0, end).toString('utf8')) as { statusCode?: unknown };
      status = typeof answer.statusCode === 'number' ? answer.statusCode : 'a prelude without a status';
    }
    return status;
  } finally {
    abort.abort();
  }
}

function describe(functionError: string | undefined, payload: unknown): string {
  const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
  return `${functionError ? `${functionError} error, ` : ''}${(text ?? 'no payload').slice(0, 200)}`;
}
