// Runs in a fresh `node` process so that module init and peak memory are those of one function instance.
//   node bench/probe.mjs init <module>            -> {"initMs"}
//   node bench/probe.mjs invoke <module>           -> {"initMs","maxRssInitKb","maxRssKb","heapUsedPeakKb","invocations":[...]}
// RSS and heap are sampled every 2 ms and after each invocation (peak = largest sample).
// Events come as a JSON array in PROBE_EVENTS. Bundles (.js, CommonJS) are required as Lambda's runtime does;
// ES modules (.mjs) are imported. The result is the last stdout line, after the PROBE_RESULT marker.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [mode, modulePath] = process.argv.slice(2);
if (!modulePath || (mode !== 'init' && mode !== 'invoke')) {
  console.error('usage: node bench/probe.mjs init|invoke <module>');
  process.exit(2);
}
const started = performance.now();
const mod = modulePath.endsWith('.mjs')
  ? await import(pathToFileURL(modulePath).href)
  : createRequire(import.meta.url)(modulePath);
const initMs = performance.now() - started;

function report(result) {
  process.stdout.write(`\nPROBE_RESULT ${JSON.stringify(result)}\n`);
}

if (mode === 'init') {
  report({ initMs });
} else {
  // Sampled rather than resourceUsage().maxRSS: on Linux a spawned child inherits its parent's peak RSS as a
  // floor, which would report the benchmark's own size for every small function.
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
  for (const event of JSON.parse(process.env.PROBE_EVENTS ?? '[]')) {
    const context = {
      callbackWaitsForEmptyEventLoop: false,
      functionName: 'bench',
      functionVersion: '$LATEST',
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:bench',
      memoryLimitInMB: '1024',
      awsRequestId: `bench-${invocations.length}`,
      logGroupName: '/aws/lambda/bench',
      logStreamName: 'bench',
      getRemainingTimeInMillis: () => 29_000,
    };
    const t = performance.now();
    let outcome;
    try {
      const result = await mod.handler(event, context);
      // What Lambda returns to API Gateway: the result serialized, the body a JSON string inside it.
      outcome = { statusCode: result?.statusCode, payloadBytes: Buffer.byteLength(JSON.stringify(result ?? null)) };
    } catch (error) {
      outcome = { error: String(error?.message ?? error) };
    }
    sample();
    invocations.push({ ms: performance.now() - t, ...outcome });
  }
  clearInterval(sampler);
  report({
    initMs,
    maxRssInitKb: Math.round(rssInit / 1024),
    maxRssKb: Math.round(rssPeak / 1024),
    heapUsedPeakKb: Math.round(heapUsedPeak / 1024),
    invocations,
  });
}
process.exit(0);
