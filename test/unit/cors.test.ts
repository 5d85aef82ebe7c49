import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { cors, EXPOSED_HEADERS, parseAllowedOrigins } from '../../functions/http/cors';
import { aLambdaContext, anApiGatewayEvent } from '../fixtures/builders';

/** The headers a handler's answer gets from the CORS middleware for a request from `origin`. */
async function corsHeadersFor(
  allowed: readonly string[],
  origin: string | undefined,
): Promise<Record<string, unknown>> {
  const chain = middy<APIGatewayProxyEvent, APIGatewayProxyResult>();
  const middleware = cors(allowed);
  if (middleware) chain.use(middleware);
  const handler = chain.handler(async () => ({ statusCode: 200, headers: {}, body: '[]' }));
  const event = anApiGatewayEvent({ httpMethod: 'GET', headers: origin === undefined ? {} : { Origin: origin } });
  const response = await handler(event, aLambdaContext());
  return response.headers ?? {};
}

describe('HTTP: CORS headers of actual responses', () => {
  const allowed = parseAllowedOrigins(' https://staff.example.com, ,https://tools.example.com ');

  it('parses a comma-separated list and ignores blanks', () => {
    expect(allowed).toEqual(['https://staff.example.com', 'https://tools.example.com']);
    expect(parseAllowedOrigins(undefined)).toEqual([]);
  });

  it('sends nothing at all when CORS is off', async () => {
    expect(cors([])).toBeUndefined();
    expect(await corsHeadersFor([], 'https://staff.example.com')).toEqual({});
  });

  it('echoes an allowed origin, exposes the headers clients read, and varies on Origin', async () => {
    expect(await corsHeadersFor(allowed, 'https://tools.example.com')).toEqual({
      'Access-Control-Allow-Origin': 'https://tools.example.com',
      'Access-Control-Expose-Headers': EXPOSED_HEADERS,
      Vary: 'Origin',
    });
  });

  it('allows no other origin (and no missing one)', async () => {
    for (const origins of [allowed, ['https://staff.example.com']])
      for (const origin of ['https://evil.example.com', undefined]) {
        const headers = await corsHeadersFor(origins, origin);
        expect(headers['Access-Control-Allow-Origin']).toBeUndefined();
      }
  });
});
