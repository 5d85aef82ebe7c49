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

// Only what a child process shows: start-up, the printed key, shutdown. The routes are tested through the same gateway
// in process (local-gateway.test.ts and the other integration files); its stream poller in webhooks-npm-start.test.ts.
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
