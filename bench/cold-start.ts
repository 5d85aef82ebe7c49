/**
 * Each deployed function in fresh processes (`bench/probe.mjs`) as a Lambda instance runs it: traced, DynamoDB over
 * HTTPS (over HTTP the SDK's first call loads more than a deployed function's does).
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

export const NAIVE_HANDLER = join(import.meta.dirname, 'naive', 'handler.mjs');
/** The bundle of aws-samples' serverless-typescript-demo: a bundle above it is flagged, not failed. */
const REFERENCE_BUNDLE_BYTES = 623_000;

type ProbeOptions = {
  env: Record<string, string>;
  events: readonly unknown[];
  memoryMb?: number;
  heapLimitMb?: number;
};
/** Peak memory of one function instance, in MB. */
export type Memory = Awaited<ReturnType<typeof runProbe>>['memory'];

/** `bench/probe.mjs MODE FILE` in a fresh `node`: its report, or an error naming a failed call (501 is designed). */
async function runProbe(mode: 'cold' | 'invoke', file: string, options: ProbeOptions) {
  const dir = mkdtempSync(join(tmpdir(), 'probe-'));
  writeFileSync(join(dir, 'events.json'), JSON.stringify(options.events));
  const env = {
    ...process.env,
    ...options.env,
    NODE_OPTIONS: options.heapLimitMb ? `--max-old-space-size=${options.heapLimitMb}` : '',
    PROBE_EVENTS_FILE: join(dir, 'events.json'),
    PROBE_CONTEXT: JSON.stringify(lambdaContext({ functionName: 'bench', memoryMb: options.memoryMb ?? 256 })),
  };
  const args = [join(import.meta.dirname, 'probe.mjs'), mode, file];
  const { stdout } = await promisify(execFile)(process.execPath, args, { env, maxBuffer: 1 << 24 }).finally(() =>
    rmSync(dir, { recursive: true, force: true }),
  );
  const report = JSON.parse(stdout.split('\nPROBE_RESULT ')[1]?.split('\n')[0] ?? 'null');
  const failed = (report?.invocations as { statusCode?: number; failedItems?: number; error?: string }[])?.find(
    (o) => o.error || o.failedItems || ((o.statusCode ?? 200) >= 500 && o.statusCode !== 501),
  );
  if (!report || failed) throw new Error(`${file} (${mode}) failed: ${JSON.stringify(failed)}\n${stdout.slice(-2000)}`);
  const mb = (kb: number) => round(kb / 1024);
  const memory = { maxRssMb: mb(report.maxRssKb), afterInitMb: mb(report.rssInitKb), heapPeakMb: mb(report.heapKb) };
  return { initMs: report.initMs as number, firstCallMs: report.firstCallMs as number, memory };
}

/** `file`'s peak memory over every one of `options.events`, in a fresh process. */
export const probeMemory = async (file: string, options: ProbeOptions) =>
  (await runProbe('invoke', file, options)).memory;

/** DynamoDB Local behind TLS with a certificate the probes trust, and a UDP port as Lambda's X-Ray daemon. */
async function lambdaSurroundings(dynamoEndpoint: string) {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  });
  const { hostname, port } = new URL(dynamoEndpoint);
  const tls = createServer({ key: pems.private, cert: pems.cert }, (socket) => {
    const upstream = connect(Number(port), hostname).on('error', () => socket.destroy());
    socket
      .on('error', () => upstream.destroy())
      .pipe(upstream)
      .pipe(socket);
  });
  await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
  const dir = mkdtempSync(join(tmpdir(), 'dynamodb-tls-'));
  writeFileSync(join(dir, 'ca.pem'), pems.cert);
  const traces = new Set<string>();
  const daemon = createSocket('udp4').on('message', (message) => {
    traces.add(/"trace_id":"([^"]+)"/.exec(message.toString())?.[1] ?? '');
  });
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
  // What Lambda sets for a function with active tracing in a sampled invocation.
  const env = (traceId: string) => ({
    AWS_ENDPOINT_URL_DYNAMODB: `https://127.0.0.1:${(tls.address() as { port: number }).port}`,
    NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'),
    ...{ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x', LAMBDA_TASK_ROOT: '/var/task', _HANDLER: 'index.handler' },
    ...{ POWERTOOLS_TRACE_ENABLED: 'true', AWS_XRAY_MANUAL_MODE: '' },
    AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemon.address().port}`,
    _X_AMZN_TRACE_ID: `Root=${traceId};Parent=${randomBytes(8).toString('hex')};Sampled=1`,
  });
  const close = () => {
    tls.close();
    daemon.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { env, traces, close };
}

/**
 * Init, cold path (init + its first caller's call) and peak memory over its calls (`bench/events.ts`, after the
 * first) of every bundle and the naive handler, `runs` fresh processes each, interleaved.
 */
export async function measureColdStarts(
  bundles: readonly DeployedBundle[],
  options: { runs: number; env: Record<string, string>; dynamoEndpoint: string; apiKey: string },
) {
  const calls = functionCalls(options.apiKey);
  const subjects = [{ handler: 'naive', file: NAIVE_HANDLER }, ...bundles];
  const probes = new Map(subjects.map((s) => [s.handler, [] as Awaited<ReturnType<typeof runProbe>>[]]));
  const around = await lambdaSurroundings(options.dynamoEndpoint);
  const untraced = new Map<string, string>();
  const run = (handler: string, file: string) => async () => {
    const traceId = `1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;
    if (handler !== 'naive') untraced.set(traceId, handler);
    const events = calls[handler === 'naive' ? 'list-inventory' : handler]?.events ?? [];
    probes
      .get(handler)
      ?.push(await runProbe('cold', file, { env: { ...options.env, ...around.env(traceId) }, events }));
  };
  try {
    const tasks = Object.fromEntries(subjects.map((s) => [s.handler, run(s.handler, s.file)]));
    await interleaved(tasks, options.runs, { block: 1 });
    await new Promise((resolve) => setTimeout(resolve, 200)); // the last process's datagrams
    for (const traceId of around.traces) untraced.delete(traceId);
    if (untraced.size > 0) throw new Error(`no trace in a cold start of ${[...new Set(untraced.values())]}`);
  } finally {
    around.close();
  }
  const median = (handler: string) => {
    const runs = probes.get(handler) ?? [];
    const at = (time: (p: (typeof runs)[number]) => number) => round(quantile(runs.map(time), 0.5));
    return { init: at((p) => p.initMs), cold: at((p) => p.initMs + p.firstCallMs) };
  };
  const naive = median('naive');
  const above = bundles.filter((b) => b.bytes > REFERENCE_BUNDLE_BYTES).map((b) => `${b.handler} (${b.bytes} B)`);
  const reference = `${REFERENCE_BUNDLE_BYTES / 1000} KB (the bundle of aws-samples' serverless-typescript-demo)`;
  const coldStart: Section = {
    note:
      `Median of ${options.runs} fresh node processes; naive handler: init ${naive.init} ms, cold path ${naive.cold} ms. ` +
      (above.length === 0 ? `No bundle is above ${reference}.` : `Above ${reference}: ${above.join(', ')}.`),
    columns: ['function', 'bundle', 'init ms', 'init vs naive', 'cold path ms', 'cold path vs naive'],
    rows: bundles.map(({ handler, bytes }) => {
      const { init, cold } = median(handler);
      const size = `${bytes.toLocaleString('en-US')} B`;
      return [handler, size, init, `${ratio(init, naive.init)}x`, cold, `${ratio(cold, naive.cold)}x`];
    }),
    // Every function a client waits on: the deploy's self-check serves none.
    targets: bundles
      .filter((b) => b.handler !== 'self-check')
      .map((b) => target(`cold path ${b.handler}: bundle / naive`, ratio(median(b.handler).cold, naive.cold), 0.9)),
  };
  // Each function's process of median peak RSS; the list's is taken at its largest size (bench/list.ts).
  const memorySection = (list: { scenario: string; memory: Memory }): Section => ({
    columns: ['function', 'scenario', 'max RSS', 'after init', 'heap peak'],
    rows: bundles.map(({ handler }) => {
      const runs = (probes.get(handler) ?? []).map((p) => p.memory).sort((a, b) => a.maxRssMb - b.maxRssMb);
      const m = handler === 'list-inventory' ? list.memory : runs[Math.floor((runs.length - 1) / 2)];
      const scenario = handler === 'list-inventory' ? list.scenario : calls[handler]?.scenario;
      return [handler, scenario ?? '', `${m?.maxRssMb} MB`, `${m?.afterInitMb} MB`, `${m?.heapPeakMb} MB`];
    }),
  });
  return { coldStart, memory: memorySection };
}
