// Imported first by a test that reads log lines: the shared Powertools logger takes its level once, when it is
// built, and goes back to it on every warm invocation, so setLogLevel() in a test would not last.
process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
