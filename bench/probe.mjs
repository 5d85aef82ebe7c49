// `node bench/probe.mjs cold|invoke MODULE`: one function instance in a fresh process (a cold start), started by
// bench/functions.ts (ProbeReports), which passes PROBE_EVENTS_FILE and PROBE_CONTEXT and reads the PROBE_RESULT line.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [mode, modulePath] = process.argv.slice(2);
// The Lambda runtime defines `awslambda` before loading a function; a streaming handler reads it at import. The
// stand-in is loaded before the clock starts, as the runtime's own code is not part of a function's init.
const lambda = await import(new URL('../local/lambda/streaming.ts', import.meta.url).href);
lambda.installLambdaStreamingRuntime();
const started = performance.now();
// A bundle is CommonJS, required as Lambda's runtime does; the naive handler is an ES module.
const mod = modulePath.endsWith('.mjs')
  ? await import(pathToFileURL(modulePath).href)
  : createRequire(import.meta.url)(modulePath);
const initMs = performance.now() - started;

const events = JSON.parse(readFileSync(process.env.PROBE_EVENTS_FILE, 'utf8'));
const baseContext = JSON.parse(process.env.PROBE_CONTEXT ?? '{}');

function report(result) {
  process.stdout.write(`\nPROBE_RESULT ${JSON.stringify(result)}\n`);
}

/** One invocation, as the runtime makes it: a streamed answer is read to its end, as Lambda sends it on. */
async function invoke(event, index) {
  const context = { ...baseContext, awsRequestId: `probe-${index}`, getRemainingTimeInMillis: () => 600_000 };
  try {
    const answer = await lambda.invokeToEnd(mod.handler, event, context, { keepBody: false });
    // A stream function answers the records it could not process instead of a status.
    return { statusCode: answer.statusCode, failedItems: answer.batchItemFailures?.length };
  } catch (error) {
    return { error: String(error?.message ?? error) };
  }
}

if (mode === 'cold') {
  const callStarted = performance.now();
  const first = await invoke(events[0], 0);
  report({ initMs, firstCallMs: performance.now() - callStarted, ...first });
} else {
  // Sampled every 2 ms and after each invocation, rather than resourceUsage().maxRSS: on Linux a spawned child
  // inherits its parent's peak RSS as a floor, which would report the benchmark's own size for every small function.
  const rssInit = process.memoryUsage().rss;
  let rssPeak = rssInit;
  let heapUsedPeak = process.memoryUsage().heapUsed;
  const sample = () => {
    const usage = process.memoryUsage();
    rssPeak = Math.max(rssPeak, usage.rss);
    heapUsedPeak = Math.max(heapUsedPeak, usage.heapUsed);
  };
  const sampler = setInterval(sample, 2);
  const invocations = [];
  for (const [index, event] of events.entries()) {
    invocations.push(await invoke(event, index));
    sample();
  }
  clearInterval(sampler);
  const kb = (bytes) => Math.round(bytes / 1024);
  report({ maxRssInitKb: kb(rssInit), maxRssKb: kb(rssPeak), heapUsedPeakKb: kb(heapUsedPeak), invocations });
}
// After the report, so no figure includes it: the X-Ray SDK's last datagrams are sent on the event loop, and
// exiting at once would drop them (a Lambda environment is frozen, not ended, after the response).
setTimeout(() => process.exit(0), 100);
