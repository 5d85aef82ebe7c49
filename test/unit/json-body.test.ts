import { stringifyExactJson } from '../../client/index';
import { headerValue, headerValues } from '../../functions/http/headers';
import { BATCH_BODY, MAX_BODY_BYTES, readJsonBody } from '../../functions/http/json-body';
import { ValidationError } from '../../functions/inventory/errors';
import { MAX_QUANTITY } from '../../functions/inventory/types';
import {
  MAX_CHANGES,
  MAX_REFERENCE_CHARACTERS,
  parseInventoryChanges,
  parseInventoryUpdate,
} from '../../functions/inventory/update';

const json = { 'Content-Type': 'application/json' };

/** A body as an encoder that escapes every non-ASCII character writes it (`\\ud83d\\udc1f`). */
const escaped = (body: string) => body.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);

describe('HTTP: readJsonBody', () => {
  it('returns the body of a JSON request', () => {
    expect(readJsonBody({ body: '{"quantity":1}', headers: json })).toBe('{"quantity":1}');
  });

  it.each(['application/json; charset=utf-8', 'APPLICATION/JSON', 'application/merge-patch+json'])(
    'accepts Content-Type %p',
    (contentType) => {
      expect(readJsonBody({ body: '{}', headers: { 'content-type': contentType } })).toBe('{}');
    },
  );

  it.each([null, ''])('answers 400 (ValidationError) when there is no body (%p), whatever the headers', (body) => {
    expect(() => readJsonBody({ body, headers: json })).toThrow(ValidationError);
    expect(() => readJsonBody({ body, headers: {} })).toThrow(ValidationError);
  });

  it.each([undefined, 'text/plain', 'application/x-www-form-urlencoded', 'application/jsonp', ''])(
    'refuses a body sent as %p with 415 UNSUPPORTED_MEDIA_TYPE',
    (contentType) => {
      const headers = contentType === undefined ? {} : { 'Content-Type': contentType };
      expect(() => readJsonBody({ body: '{"quantity":1}', headers })).toThrow(
        expect.objectContaining({ code: 'UNSUPPORTED_MEDIA_TYPE', status: 415 }),
      );
    },
  );

  it(`refuses a body over ${MAX_BODY_BYTES} bytes with 413 PAYLOAD_TOO_LARGE before looking at it`, () => {
    const body = `{"quantity":1${' '.repeat(MAX_BODY_BYTES)}}`;
    expect(() => readJsonBody({ body, headers: {} })).toThrow(
      expect.objectContaining({ code: 'PAYLOAD_TOO_LARGE', status: 413 }),
    );
  });

  it('accepts a body of exactly the limit', () => {
    const body = `{"quantity":1}${' '.repeat(MAX_BODY_BYTES - 14)}`;
    expect(Buffer.byteLength(body)).toBe(MAX_BODY_BYTES);
    expect(readJsonBody({ body, headers: json })).toBe(body);
  });

  it('takes the longest valid PATCH body, also from an encoder that escapes non-ASCII', () => {
    // Prepare: every member at its longest, the reference 255 characters past U+FFFF (4 bytes in UTF-8, 12 escaped).
    const reference = '\u{1F41F}'.repeat(MAX_REFERENCE_CHARACTERS);
    const update = { quantity: MAX_QUANTITY, expectedQuantity: MAX_QUANTITY, reason: 'correction', reference };
    const bodies = [stringifyExactJson(update), escaped(stringifyExactJson(update))];
    // Act
    const read = bodies.map((body) => parseInventoryUpdate(readJsonBody({ body, headers: json })));
    // Assess
    expect(Buffer.byteLength(bodies[1] ?? '')).toBeGreaterThan(3000);
    for (const change of read) expect(change.reference).toBe(reference);
  });

  it('takes a batch of the longest changes with 2-byte references and refuses one with 4-byte references, 413', () => {
    // Prepare: 100 changes, every member at its longest (docs/api.md, "Limits").
    const batch = (character: string) => {
      const reference = character.repeat(MAX_REFERENCE_CHARACTERS);
      const change = (i: number) => ({
        petId: -9223372036854775808n + BigInt(i),
        quantity: MAX_QUANTITY,
        expectedQuantity: MAX_QUANTITY,
        reason: 'correction',
        reference,
      });
      return stringifyExactJson({ changes: Array.from({ length: MAX_CHANGES }, (_, i) => change(i)) });
    };
    // Act
    const changes = parseInventoryChanges(readJsonBody({ body: batch('\u00e9'), headers: json }, BATCH_BODY));
    const refused = () => readJsonBody({ body: batch('\u{1F41F}'), headers: json }, BATCH_BODY);
    // Assess
    expect(changes).toHaveLength(MAX_CHANGES);
    expect(refused).toThrow(expect.objectContaining({ code: 'PAYLOAD_TOO_LARGE' }));
  });

  it('reads a literal U+FFFD as the character it is: a reference may hold one', () => {
    // Prepare: the three bytes EF BF BD, valid UTF-8.
    const body = Buffer.from('{"quantity":7,"reference":"\uFFFD"}', 'utf8').toString('utf8');
    // Act
    const change = parseInventoryUpdate(readJsonBody({ body, headers: json }));
    // Assess
    expect(change).toEqual({ quantity: 7, reference: '\uFFFD' });
  });

  it('reads headers whatever their case', () => {
    expect(headerValue({ 'CoNtEnT-TyPe': 'x' }, 'content-type')).toBe('x');
    expect(headerValue(null, 'content-type')).toBeUndefined();
  });

  it('reads every value of a repeated header whatever its case, in the order sent', () => {
    expect(
      headerValues({ 'Accept-Encoding': ['gzip', 'br'], 'accept-encoding': ['identity'] }, 'ACCEPT-ENCODING'),
    ).toEqual(['gzip', 'br', 'identity']);
    expect(headerValues({ Other: ['x'] }, 'accept-encoding')).toEqual([]);
    expect(headerValues(null, 'accept-encoding')).toEqual([]);
  });
});
