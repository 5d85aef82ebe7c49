import { ApiKeyAdminTable } from '../../cli/api-key-admin-table';
import { jsonHeaders } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/local-stack';
import { closeRawAgent, rawRequest } from '../helpers/raw-http';

describe('Security: API keys never reach a log line', () => {
  let stack: TestStack;
  let revokedKey: string;
  const captured: string[] = [];
  const originals = { stdout: process.stdout.write, stderr: process.stderr.write };
  const savedEnv = { level: process.env.POWERTOOLS_LOG_LEVEL, logEvent: process.env.POWERTOOLS_LOGGER_LOG_EVENT };

  beforeAll(async () => {
    // The most talkative settings an operator could choose, including event logging.
    process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
    process.env.POWERTOOLS_LOGGER_LOG_EVENT = 'true';
    stack = await startTestStack({ log: (line) => captured.push(line) });
    const revoked = await stack.createKey('revoked');
    await new ApiKeyAdminTable({ client: stack.client, tableName: stack.tables.apiKeys }).revoke(revoked.keyId);
    revokedKey = revoked.key;
    const capture = (chunk: unknown) => {
      captured.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      return true;
    };
    process.stdout.write = capture as typeof process.stdout.write;
    process.stderr.write = capture as typeof process.stderr.write;
  });

  afterAll(async () => {
    process.stdout.write = originals.stdout;
    process.stderr.write = originals.stderr;
    process.env.POWERTOOLS_LOG_LEVEL = savedEnv.level;
    if (savedEnv.logEvent === undefined) delete process.env.POWERTOOLS_LOGGER_LOG_EVENT;
    else process.env.POWERTOOLS_LOGGER_LOG_EVENT = savedEnv.logEvent;
    closeRawAgent();
    await stack.close();
  });

  it('logs accepted, refused, revoked, invalid and failing requests without the key in any line', async () => {
    // Act: every path a key takes through the authorizer and the handlers.
    const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
    const get = (path: string, headers: Record<string, string>) =>
      rawRequest(stack.url, { method: 'GET', path, headers });
    const patch = (petId: string, body: string) =>
      rawRequest(stack.url, {
        method: 'PATCH',
        path: `/v1/inventory/${petId}`,
        headers: jsonHeaders(auth(stack.key)),
        body,
      });
    await get('/v1/inventory', auth(stack.key));
    await patch('1', '{"quantity":4}');
    await patch('1', '{"quantity":-4}');
    await patch('77', '{"quantity":4}');
    await get('/v1/pets/1', auth(stack.key));
    stack.gateway.clearAuthorizerCache();
    await get('/v1/inventory', auth(revokedKey));
    await get('/v1/inventory', auth(`${stack.key.slice(0, -1)}x`));
    await get('/v1/inventory', { Authorization: `Basic ${stack.key}` });
    // Assess: the logs did speak (so the check can fail), and never with a key.
    const text = captured.join('\n');
    expect(text).toMatch(/key accepted/);
    expect(text).toMatch(/key refused/);
    expect(text).toMatch(/request refused/);
    expect(text).not.toContain(stack.key);
    expect(text).not.toContain(revokedKey);
    expect(text).not.toContain(stack.key.slice(4, 30));
    expect(text).not.toMatch(/psk_[A-Za-z0-9_-]{10,}/);
  });
});
