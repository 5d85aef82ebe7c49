import globalSetup from '../helpers/global-setup';

/**
 * The load tests' DynamoDB Local: the one of the integration tests, with the JVM's optimizing compiler, since these
 * tests write 100,000 entries and more, where it runs a third faster than the quick compiler the stand-in starts with.
 */
export default async function loadGlobalSetup(): Promise<void> {
  const before = process.env.JDK_JAVA_OPTIONS;
  process.env.JDK_JAVA_OPTIONS = [before, '-XX:TieredStopAtLevel=4'].filter(Boolean).join(' ');
  try {
    await globalSetup();
  } finally {
    if (before === undefined) delete process.env.JDK_JAVA_OPTIONS;
    else process.env.JDK_JAVA_OPTIONS = before;
  }
}
