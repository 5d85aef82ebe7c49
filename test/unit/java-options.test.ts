import { withJavaOptions } from '../../local/dynamodb-local';

describe("DynamoDB Local's JVM options (JDK_JAVA_OPTIONS)", () => {
  const saved = process.env.JDK_JAVA_OPTIONS;
  afterEach(() => {
    if (saved === undefined) delete process.env.JDK_JAVA_OPTIONS;
    else process.env.JDK_JAVA_OPTIONS = saved;
  });

  it("puts the stand-in's options first, so options already set come after them and win", () => {
    process.env.JDK_JAVA_OPTIONS = '-XX:TieredStopAtLevel=4 -Xmx1g';
    expect(withJavaOptions('-XX:TieredStopAtLevel=1', () => process.env.JDK_JAVA_OPTIONS)).toBe(
      '-XX:TieredStopAtLevel=1 -XX:TieredStopAtLevel=4 -Xmx1g',
    );
    expect(process.env.JDK_JAVA_OPTIONS).toBe('-XX:TieredStopAtLevel=4 -Xmx1g');
  });

  it('leaves the variable unset afterwards when it was unset, even when the start throws', () => {
    delete process.env.JDK_JAVA_OPTIONS;
    expect(() =>
      withJavaOptions('-XX:TieredStopAtLevel=1', () => {
        throw new Error(`spawned with ${process.env.JDK_JAVA_OPTIONS}`);
      }),
    ).toThrow('spawned with -XX:TieredStopAtLevel=1');
    expect(process.env.JDK_JAVA_OPTIONS).toBeUndefined();
  });
});
