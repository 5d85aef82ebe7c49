// Runs before every test file's modules load: Powertools reads these when the logger and metrics are built.
// A test that inspects log lines sets its own level on the logger.
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
// Tracing is off outside Lambda, but the X-Ray SDK the tracer loads enables an async hook in automatic mode, and each
// test file loads it afresh in a worker that lives on: manual mode keeps hooks from piling up. The tracing test and
// the bench's probes turn automatic mode back on (local/lambda/xray-daemon.ts, tracingEnvironment).
process.env.AWS_XRAY_MANUAL_MODE ??= 'true';
