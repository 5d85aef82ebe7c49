// Runs in a fresh `node` process so that module init, the first call and peak memory are those of one function
// instance (a cold start). bench/functions.ts starts it and reads its result, the stdout line after PROBE_RESULT.
//   node bench/probe.mjs cold <module>     -> {"initMs","firstCallMs","statusCode","failedItems","error"}
//   node bench/probe.mjs invoke <module>   -> {"maxRssInitKb","maxRssKb","heapUsedPeakKb","invocations":[...]}
// Events come as a JSON array in the file PROBE_EVENTS_FILE names, the Lambda context (less its functions) as JSON
// in PROBE_CONTEXT. Bundles (.js, CommonJS) are required as Lambda's runtime does; ES modules (.mjs) are imported.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [mode, modulePath] = process.argv.slice(2);
// The Lambda runtime defines `awslambda` before loading a function; a streaming handler reads it at import. The
// stand-in is loaded before the clock starts, as the runtime's own code is not part of a function's init.
const lambda = await import(new URL('../local/lambda/streaming.ts', import.meta.url).href);
lambda.installLambdaStreamingRuntime();
const started = performance.now();
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
