import { connect } from 'node:net';
import { type LocalApiProcess, startLocalApiProcess } from '../helpers/api-process';
import { call } from '../helpers/http';

const READY_TIMEOUT_MS = 90_000;
const EXIT_TIMEOUT_MS = 20_000;

function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

// Only what a child process of its own shows: start-up, the printed key, staging's throttle, shutdown, and a setting
// refused at start. What its stream pollers feed is in npm-start-changes.test.ts; the routes are tested through the
// same gateway in process (local-gateway.test.ts and the other integration files).
describe('End to end: npm start', () => {
  let started: LocalApiProcess | undefined;
  afterEach(() => started?.kill());

  it(
    'starts with the demo inventory and a printed key the API accepts, throttles as staging, and stops on SIGINT with its DynamoDB Local',
    async () => {
      // Act
      started = await startLocalApiProcess({ readyTimeoutMs: READY_TIMEOUT_MS });
      const list = await call(started.baseUrl, 'GET', '/inventory', {
        headers: { Authorization: `Bearer ${started.apiKey}` },
        route: '/inventory',
      });
      const outcome = await started.stop(EXIT_TIMEOUT_MS);
      // Assess
      expect(list.status).toBe(200);
      expect(list.text).toContain('{"petId":9223372036854775807,');
      expect(started.output()).toContain('Throttling: 20 requests/s, burst 40, per method');
      expect(outcome).toEqual({ code: 0, signal: null });
      expect(started.output()).toContain('SIGINT: stopping the gateway and DynamoDB Local');
      expect(await portAccepts(started.dynamoPort)).toBe(false);
    },
    READY_TIMEOUT_MS + EXIT_TIMEOUT_MS,
  );
});

describe('npm start: webhook settings refused at start', () => {
  it('refuses a URL without its secret, in one line, and starts nothing', async () => {
    // Act
    const refusal = await startLocalApiProcess({ env: { PETSTORE_WEBHOOK_URL: 'http://127.0.0.1:9/hooks' } }).then(
      () => 'started',
      (error: Error) => error.message,
    );

    // Assess
    expect(refusal).toMatch(/^npm start exited with 1:\n/);
    expect(
      refusal
        .split('\n')
        .filter((line) => line.length > 0)
        .slice(1),
    ).toEqual(['npm start failed: PETSTORE_WEBHOOK_URL and PETSTORE_WEBHOOK_SECRET go together: set both, or neither']);
  });
});
