import { corsHeaders, parseAllowedOrigins } from '../../functions/http/cors';

describe('HTTP: CORS headers of actual responses', () => {
  const allowed = parseAllowedOrigins(' https://staff.example.com, ,https://tools.example.com ');

  it('parses a comma-separated list and ignores blanks', () => {
    expect(allowed).toEqual(['https://staff.example.com', 'https://tools.example.com']);
    expect(parseAllowedOrigins(undefined)).toEqual([]);
  });

  it('sends nothing at all when CORS is off', () => {
    expect(corsHeaders('https://staff.example.com', [])).toEqual({});
  });

  it('echoes an allowed origin, exposes the headers clients read, and varies on Origin', () => {
    expect(corsHeaders('https://tools.example.com', allowed)).toEqual({
      'Access-Control-Allow-Origin': 'https://tools.example.com',
      'Access-Control-Expose-Headers': 'Retry-After, Deprecation, Sunset, WWW-Authenticate, x-amzn-RequestId',
      Vary: 'Origin',
    });
  });

  it('allows no other origin (and no missing one), but still varies on Origin for caches', () => {
    expect(corsHeaders('https://evil.example.com', allowed)).toEqual({ Vary: 'Origin' });
    expect(corsHeaders(undefined, allowed)).toEqual({ Vary: 'Origin' });
  });
});
