import { call, jsonHeaders } from '../helpers/http';
import { startTestStack, type TestStack } from '../helpers/local-stack';

describe('CORS: a stage that allows an origin, through the local gateway', () => {
  const ORIGIN = 'https://staff.example.com';
  let stack: TestStack;
  const saved = process.env.CORS_ALLOWED_ORIGINS;

  beforeAll(async () => {
    // The handlers read it when first loaded, as a Lambda instance reads its environment.
    process.env.CORS_ALLOWED_ORIGINS = ORIGIN;
    stack = await startTestStack();
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.CORS_ALLOWED_ORIGINS;
    else process.env.CORS_ALLOWED_ORIGINS = saved;
    await stack.close();
  });

  it('lets the allowed origin read successful answers and error answers', async () => {
    const listed = await call(stack.url, 'GET', '/inventory', {
      headers: { ...stack.authHeader, Origin: ORIGIN },
      route: '/inventory',
    });
    const missing = await call(stack.url, 'PATCH', '/inventory/424242', {
      headers: { ...jsonHeaders(stack.authHeader), Origin: ORIGIN },
      body: '{"quantity":1}',
      route: '/inventory/{petId}',
    });
    for (const response of [listed, missing]) {
      expect(response.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(response.headers.get('vary')).toBe('Origin');
    }
    expect([listed.status, missing.status]).toEqual([200, 404]);
  });

  it('gives any other origin no allow-origin header', async () => {
    const response = await call(stack.url, 'GET', '/inventory', {
      headers: { ...stack.authHeader, Origin: 'https://elsewhere.example.com' },
      route: '/inventory',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });
});
