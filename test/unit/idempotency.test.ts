import { idempotentChangeId, parseIdempotencyKey } from '../../functions/http/idempotency';
import { inventoryUpdateEvent } from '../../local/lambda/events';

describe('HTTP: parseIdempotencyKey', () => {
  const event = (headers: Record<string, string>, multi: Record<string, string[]> = {}) =>
    inventoryUpdateEvent('1', '{"adjustBy":1}', { headers, multiValueHeaders: multi });

  it('reads the key whatever the header name case, and undefined when there is none', () => {
    expect(parseIdempotencyKey(event({ 'idempotency-key': 'abc' }))).toBe('abc');
    expect(parseIdempotencyKey(event({ 'Idempotency-Key': `${' ~'.repeat(127)}!` }))).toHaveLength(255);
    expect(parseIdempotencyKey(event({}))).toBeUndefined();
  });

  it.each([
    ['empty', '', 'an empty one'],
    ['256 characters', 'k'.repeat(256), 'a longer one'],
    ['a control character', 'key\u0007', 'one with other characters'],
    ['a DEL', 'key\u007f', 'one with other characters'],
    ['not ASCII', 'clé', 'one with other characters'],
  ])('refuses a key that is %s with VALIDATION_FAILED, saying what was wrong', (_, key, got) => {
    expect(() => parseIdempotencyKey(event({ 'Idempotency-Key': key }))).toThrow(
      expect.objectContaining({
        code: 'VALIDATION_FAILED',
        message: `Idempotency-Key must be 1 to 255 printable ASCII characters (space to ~); got ${got}.`,
      }),
    );
  });

  // The IETF draft "The Idempotency-Key HTTP Header Field" gives the value as an sf-string (RFC 8941 §3.3.3).
  it.each([
    ['"K"', 'K'],
    ['"8e03978e-40d5-43e8-bc93-6894a57f9324"', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['"say \\"hi\\" \\\\ bye"', 'say "hi" \\ bye'],
    ['K', 'K'],
    ['"unterminated', '"unterminated'],
    ['"a"b"', '"a"b"'],
  ])("reads %s as the key %s: the draft's quoted form and the bare form name one key", (header, key) => {
    expect(parseIdempotencyKey(event({ 'Idempotency-Key': header }))).toBe(key);
  });

  it('refuses the quoted empty key "" like an empty one', () => {
    expect(() => parseIdempotencyKey(event({ 'Idempotency-Key': '""' }))).toThrow(/must not be empty/);
  });

  it('refuses a key sent twice, which API Gateway would pass as its last value only', () => {
    const twice = event({ 'Idempotency-Key': 'b' }, { 'Idempotency-Key': ['a', 'b'] });
    expect(() => parseIdempotencyKey(twice)).toThrow(/must be sent once; got 2 values/);
  });
});

describe('HTTP: idempotentChangeId', () => {
  const request = { keyId: 'key_a', idempotencyKey: 'k-1', request: { petId: '7', adjustBy: 3 } };

  it('names one request the same whatever the order of its members, and never holds the key in clear', () => {
    const reordered = { ...request, request: { adjustBy: 3, petId: '7' } };
    expect(idempotentChangeId(reordered)).toBe(idempotentChangeId(request));
    expect(idempotentChangeId(request)).toMatch(/^idempotency-key:[A-Za-z0-9_-]{43}$/);
    expect(idempotentChangeId(request)).not.toContain('k-1');
  });

  it('names another body, another petId, another key and another client differently', () => {
    const names = [
      request,
      { ...request, request: { petId: '7', adjustBy: 4 } },
      { ...request, request: { petId: '8', adjustBy: 3 } },
      { ...request, request: { petId: '7', quantity: 3 } },
      { ...request, idempotencyKey: 'k-2' },
      { ...request, keyId: 'key_b' },
    ].map(idempotentChangeId);
    expect(new Set(names).size).toBe(names.length);
  });
});
