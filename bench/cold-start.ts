/**
 * Each deployed function in fresh processes (`bench/probe.mjs`), as a Lambda instance runs it: its cold path (init +
 * its first caller's call, traced, DynamoDB over HTTPS) against the naive handler's, and its peak memory.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:tls';
import { promisify } from 'node:util';
import { generate } from 'selfsigned';
import type { DeployedBundle } from '../infra/synthesized-assets';
import { lambdaContext } from '../local/lambda/events';
import { functionCalls } from './events';
import { interleaved, quantile, ratio, round, type Section, target } from './measure';

/** The naive baseline handler (unbundled SDK, lib-dynamodb and middy from node_modules). */
export const NAIVE_HANDLER = join(import.meta.dirname, 'naive', 'handler.mjs');

/** The bundle of aws-samples' serverless-typescript-demo (623 KB): a bundle above it is flagged, not failed. */
const REFERENCE_BUNDLE_BYTES = 623_000;

interface ProbeOptions {
  env: Record<string, string>;
  events: readonly unknown[];
  /** The function's memory size, as its context reports it. @default 256 */
  memoryMb?: number;
  /** V8's old-space limit (`--max-old-space-size`). */
  heapLimitMb?: number;
}

interface Outcome {
  statusCode?: number;
  failedItems?: number;
  error?: string;
}

/** Runs `bench/probe.mjs MODE FILE` in a fresh `node` and returns its report; throws when an invocation failed. */
async function runProbe(mode: 'cold' | 'invoke', file: string, options: ProbeOptions) {
  // In a file: a batch of stream records is larger than one environment variable may be.
  const dir = mkdtempSync(join(tmpdir(), 'probe-'));
  writeFileSync(join(dir, 'events.json'), JSON.stringify(options.events));
  const context = lambdaContext({ functionName: 'bench', memoryMb: options.memoryMb ?? 256 });
  const env = {
    ...process.env,
    ...options.env,
    // Only what a probe asks for: the stack sets no NODE_OPTIONS on the functions.
    NODE_OPTIONS: options.heapLimitMb === undefined ? '' : `--max-old-space-size=${options.heapLimitMb}`,
    PROBE_EVENTS_FILE: join(dir, 'events.json'),
    PROBE_CONTEXT: JSON.stringify(context),
  };
  const probe = join(import.meta.dirname, 'probe.mjs');
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [probe, mode, file], { env, maxBuffer: 1 << 24 });
    const report = JSON.parse(stdout.split('\nPROBE_RESULT ')[1]?.split('\n')[0] ?? 'null');
    // 501 is the designed answer of the two unimplemented routes.
    const failed = (report?.invocations as Outcome[] | undefined)?.find(
      (o) => o.error || (o.failedItems ?? 0) > 0 || ((o.statusCode ?? 200) >= 500 && o.statusCode !== 501),
    );
    if (!report || failed)
      throw new Error(`${file} (${mode}) failed: ${JSON.stringify(failed)}\n${stdout.slice(-2000)}`);
    return report;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** DynamoDB Local behind TLS, as DynamoDB is reached (over plain HTTP the SDK's first call would differ). */
async function dynamoOverTls(endpoint: string) {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  });
  const { hostname, port } = new URL(endpoint);
  const server = createServer({ key: pems.private, cert: pems.cert }, (socket) => {
    const upstream = connect(Number(port), hostname);
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dir = mkdtempSync(join(tmpdir(), 'dynamodb-tls-'));
  writeFileSync(join(dir, 'ca.pem'), pems.cert);
  const address = server.address() as { port: number };
  return {
    env: { AWS_ENDPOINT_URL_DYNAMODB: `https://127.0.0.1:${address.port}`, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') },
    close: () => {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A UDP port as Lambda's X-Ray daemon, keeping the trace id of every segment a probe sends. */
async function xrayDaemon() {
  const traces = new Set<string>();
  const socket = createSocket('udp4').on('message', (message) => {
    traces.add(/"trace_id":"([^"]+)"/.exec(message.toString())?.[1] ?? '');
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const tracing = (traceId: string) => ({
    // What Lambda sets for a function with active tracing, a sampled invocation.
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    LAMBDA_TASK_ROOT: '/var/task',
    _HANDLER: 'index.handler',
    POWERTOOLS_TRACE_ENABLED: 'true',
    AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${socket.address().port}`,
    _X_AMZN_TRACE_ID: `Root=${traceId};Parent=${randomBytes(8).toString('hex')};Sampled=1`,
    AWS_XRAY_MANUAL_MODE: '',
  });
  return { traces, tracing, close: () => socket.close() };
}

/** Peak memory of one function instance, in MB: RSS, RSS after init, V8 heap used. */
export interface Memory {
  maxRssMb: number;
  afterInitMb: number;
  heapPeakMb: number;
}

const memoryOf = (probe: { maxRssKb: number; maxRssInitKb: number; heapUsedPeakKb: number }): Memory => ({
  maxRssMb: round(probe.maxRssKb / 1024),
  afterInitMb: round(probe.maxRssInitKb / 1024),
  heapPeakMb: round(probe.heapUsedPeakKb / 1024),
});

/** `file`'s peak memory over every one of `options.events`, in a fresh process. */
export const probeMemory = async (file: string, options: ProbeOptions) =>
  memoryOf(await runProbe('invoke', file, options));

/**
 * Init, cold path (init + first call) and peak memory over its calls (`bench/events.ts`) of every bundle and the
 * naive handler, `runs` fresh processes each; the memory section is complete once given the largest list's.
 */
export async function measureColdStarts(
  bundles: readonly DeployedBundle[],
  options: { runs: number; env: Record<string, string>; dynamoEndpoint: string; apiKey: string },
) {
  const calls = functionCalls(options.apiKey);
  const subjects = [{ handler: 'naive', file: NAIVE_HANDLER }, ...bundles];
  const runs = new Map(
    subjects.map((s) => [s.handler, { init: [] as number[], cold: [] as number[], memory: [] as Memory[] }]),
  );
  const tls = await dynamoOverTls(options.dynamoEndpoint);
  const daemon = await xrayDaemon();
  const untraced = new Map<string, string>();
  const run = (handler: string, file: string) => async () => {
    const traceId = `1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;
    if (handler !== 'naive') untraced.set(traceId, handler);
    const events = calls[handler === 'naive' ? 'list-inventory' : handler]?.events ?? [];
    const probe = await runProbe('cold', file, {
      env: { ...options.env, ...tls.env, ...daemon.tracing(traceId) },
      events,
    });
    runs.get(handler)?.init.push(probe.initMs);
    runs.get(handler)?.cold.push(probe.initMs + probe.firstCallMs);
    runs.get(handler)?.memory.push(memoryOf(probe));
  };
  try {
    await interleaved(Object.fromEntries(subjects.map((s) => [s.handler, run(s.handler, s.file)])), options.runs, {
      block: 1,
    });
    // Datagrams of the last process may still be on their way.
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const traceId of daemon.traces) untraced.delete(traceId);
    if (untraced.size > 0) throw new Error(`no trace in a cold start of ${[...new Set(untraced.values())]}`);
  } finally {
    daemon.close();
    tls.close();
  }
  const at = (handler: string, phase: 'init' | 'cold') => round(quantile(runs.get(handler)?.[phase] ?? [], 0.5));
  const [naiveInit, naiveCold] = [at('naive', 'init'), at('naive', 'cold')];
  const above = bundles.filter((b) => b.bytes > REFERENCE_BUNDLE_BYTES).map((b) => `${b.handler} (${b.bytes} B)`);
  const reference = `${REFERENCE_BUNDLE_BYTES / 1000} KB (the bundle of aws-samples' serverless-typescript-demo)`;
  const coldStart: Section = {
    note:
      `Median of ${options.runs} fresh node processes; naive handler: init ${naiveInit} ms, cold path ${naiveCold} ms. ` +
      (above.length === 0 ? `No bundle is above ${reference}.` : `Above ${reference}: ${above.join(', ')}.`),
    columns: ['function', 'bundle', 'init ms', 'init vs naive', 'cold path ms', 'cold path vs naive'],
    rows: bundles.map(({ handler, bytes }) => [
      ...[
        handler,
        `${bytes.toLocaleString('en-US')} B`,
        at(handler, 'init'),
        `${ratio(at(handler, 'init'), naiveInit)}x`,
      ],
      ...[at(handler, 'cold'), `${ratio(at(handler, 'cold'), naiveCold)}x`],
    ]),
    // Every function a client waits on: the deploy's self-check serves none.
    targets: bundles
      .filter((b) => b.handler !== 'self-check')
      .map((b) => target(`cold path ${b.handler}: bundle / naive`, ratio(at(b.handler, 'cold'), naiveCold), 0.9)),
  };
  // The process of median peak RSS of each function.
  const memoryAt = (handler: string) => {
    const sorted = [...(runs.get(handler)?.memory ?? [])].sort((a, b) => a.maxRssMb - b.maxRssMb);
    return sorted[Math.floor((sorted.length - 1) / 2)];
  };
  const memory = (list: { scenario: string; memory: Memory }): Section => ({
    columns: ['function', 'scenario', 'max RSS', 'after init', 'heap peak'],
    rows: bundles.map(({ handler }) => {
      const [scenario, m] =
        handler === 'list-inventory' ? [list.scenario, list.memory] : [calls[handler]?.scenario, memoryAt(handler)];
      return [handler, scenario ?? '', `${m?.maxRssMb} MB`, `${m?.afterInitMb} MB`, `${m?.heapPeakMb} MB`];
    }),
  });
  return { coldStart, memory };
}
