// Runs before every test file's modules load: Powertools reads these when the logger and metrics are built.
// A test that inspects log lines sets its own level on the logger.
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
