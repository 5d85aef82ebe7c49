// `node bench/probe.mjs cold|invoke MODULE`: one function instance in a fresh process, started by bench/cold-start.ts
// with PROBE_EVENTS_FILE and PROBE_CONTEXT; prints one PROBE_RESULT line.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [mode, modulePath] = process.argv.slice(2);
// The Lambda runtime defines `awslambda` before it loads a function: loaded before the clock starts.
const lambda = await import(new URL('../local/lambda/streaming.ts', import.meta.url).href);
lambda.installLambdaStreamingRuntime();
const started = performance.now();
// A bundle is CommonJS, required as Lambda's runtime does; the naive handler is an ES module.
const mod = modulePath.endsWith('.mjs')
  ? await import(pathToFileURL(modulePath).href)
  : createRequire(import.meta.url)(modulePath);
const initMs = performance.now() - started;
const events = JSON.parse(readFileSync(process.env.PROBE_EVENTS_FILE, 'utf8'));
const context = JSON.parse(process.env.PROBE_CONTEXT);

/** One invocation as the runtime makes it: a streamed answer read to its end and dropped. */
async function invoke(event, index) {
  const ctx = { ...context, awsRequestId: `probe-${index}`, getRemainingTimeInMillis: () => 600_000 };
  try {
    const answer = await lambda.invokeToEnd(mod.handler, event, ctx, { keepBody: false });
    return { statusCode: answer.statusCode, failedItems: answer.batchItemFailures?.length };
  } catch (error) {
    return { error: String(error?.message ?? error) };
  }
}

// cold: the first call timed, then memory over the others; invoke: memory over every call. RSS is sampled every 2 ms
// and after each call, as a spawned child's maxRSS starts at its parent's peak on Linux.
const peak = { rss: process.memoryUsage().rss, heapUsed: 0 };
const rssInit = peak.rss;
const sample = () => {
  const usage = process.memoryUsage();
  peak.rss = Math.max(peak.rss, usage.rss);
  peak.heapUsed = Math.max(peak.heapUsed, usage.heapUsed);
};
const invocations = [];
const callStarted = performance.now();
if (mode === 'cold') invocations.push(await invoke(events[0], 0));
const firstCallMs = performance.now() - callStarted;
sample();
const sampler = setInterval(sample, 2);
for (const [index, event] of events.entries()) {
  if (mode === 'cold' && index === 0) continue;
  invocations.push(await invoke(event, index));
  sample();
}
clearInterval(sampler);
const kb = (bytes) => Math.round(bytes / 1024);
const result = {
  initMs,
  firstCallMs,
  rssInitKb: kb(rssInit),
  maxRssKb: kb(peak.rss),
  heapKb: kb(peak.heapUsed),
  invocations,
};
process.stdout.write(`\nPROBE_RESULT ${JSON.stringify(result)}\n`);
// The X-Ray SDK's last datagrams leave on the event loop: a Lambda environment is frozen, not ended, after a call.
setTimeout(() => process.exit(0), 100);
