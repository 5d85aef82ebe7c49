import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { createDocsHandler } from '../../local/docs';
import { type LocalGateway, startLocalGateway } from '../../local/gateway';
import { OPENAPI_PATH } from '../helpers/contract';
import { closeRawAgent, rawRequest } from '../helpers/raw-http';

/** The directives of a Content-Security-Policy header. */
function directives(csp: string): Map<string, string[]> {
  return new Map(
    csp.split(';').map((part) => {
      const [name = '', ...values] = part.trim().split(/\s+/);
      return [name, values];
    }),
  );
}

describe('Docs page: "Try it out" calls the gateway from whichever host name the page was opened with', () => {
  let gateway: LocalGateway;
  let port: string;

  beforeAll(async () => {
    // The docs page needs no storage: no tables, no DynamoDB.
    gateway = await startLocalGateway(0, { log: () => undefined, serveExtra: createDocsHandler() });
    port = new URL(gateway.url).port;
  });
  afterAll(async () => {
    closeRawAgent();
    await gateway.close();
  });

  /** A GET with the Host header a browser sends for the name the page was opened with. */
  const getWithHost = (path: string, host: string) =>
    rawRequest(gateway.url, { method: 'GET', path, headers: { Host: host } });

  it.each(['localhost', '127.0.0.1'])(
    'opened at http://%s:PORT/docs, it offers that same origin as the first server and its CSP lets the page call it',
    async (name) => {
      // Prepare
      const host = `${name}:${port}`;
      const pageUrl = `http://${host}/docs`;
      // Act
      const page = await getWithHost('/docs', host);
      const init = await getWithHost('/docs/init.js', host);
      const contract = await getWithHost('/docs/openapi-local.yaml', host);
      // Assess: the page loads the localized contract, whose first server is the page's own origin...
      expect(page.status).toBe(200);
      expect(init.text).toContain("url: '/docs/openapi-local.yaml'");
      const contractUrl = new URL('/docs/openapi-local.yaml', pageUrl);
      const [server] = (parse(contract.text) as { servers: { url: string }[] }).servers;
      const serverUrl = new URL(server?.url ?? '', contractUrl);
      expect(serverUrl.href).toBe(`http://${host}/v1`);
      // ...and connect-src allows exactly that origin ('self'), on every file of the page.
      for (const response of [page, init, contract]) {
        const csp = directives(String(response.headers['content-security-policy']));
        expect(csp.get('connect-src')).toEqual(["'self'"]);
        expect(response.headers['x-amzn-requestid']).toMatch(/^[0-9a-f-]{36}$/);
      }
      expect(serverUrl.origin).toBe(new URL(pageUrl).origin);
    },
  );

  it('serves the page, its assets and the contract byte for byte, and loads nothing from elsewhere', async () => {
    // Act
    const page = await getWithHost('/docs', `localhost:${port}`);
    const contract = await getWithHost('/docs/openapi.yaml', `localhost:${port}`);
    const bundle = await getWithHost('/docs/swagger-ui-bundle.js', `localhost:${port}`);
    // Assess
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(directives(String(page.headers['content-security-policy'])).get('default-src')).toEqual(["'none'"]);
    expect(page.text).toContain('/docs/swagger-ui-bundle.js');
    expect(page.text).not.toMatch(/(src|href)="https?:/);
    expect(contract.text).toBe(readFileSync(OPENAPI_PATH, 'utf8'));
    expect(bundle.status).toBe(200);
    expect(bundle.text.length).toBeGreaterThan(100_000);
  });

  it('keeps the deployed stages as the other servers', async () => {
    const contract = await getWithHost('/docs/openapi-local.yaml', `localhost:${port}`);
    const servers = (parse(contract.text) as { servers: { url: string }[] }).servers;
    expect(servers.slice(1).map((server) => server.url)).toEqual([
      'https://{apiId}.execute-api.{region}.amazonaws.com/v1',
      'https://{apiId}.execute-api.{region}.amazonaws.com/v1',
    ]);
  });

  it('offers "Try it out" no Idempotency-Key example, so page users never share one key and replay each other', async () => {
    // Act
    const served = await getWithHost('/docs/openapi-local.yaml', `localhost:${port}`);
    const original = await getWithHost('/docs/openapi.yaml', `localhost:${port}`);
    // Assess: the contract keeps its example; the page's copy has none to prefill.
    const parameter = (text: string) =>
      (parse(text) as { components: { parameters: Record<string, Record<string, unknown>> } }).components.parameters
        .IdempotencyKey;
    expect(parameter(original.text)).toHaveProperty('example');
    expect(parameter(served.text)).not.toHaveProperty('example');
    expect(parameter(served.text)).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false });
  });
});
