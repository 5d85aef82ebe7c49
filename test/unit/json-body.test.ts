import { headerValue, headerValues } from '../../functions/http/headers';
import { MAX_BODY_BYTES, readJsonBody } from '../../functions/http/json-body';
import { ValidationError } from '../../functions/inventory/errors';

const json = { 'Content-Type': 'application/json' };

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

  it('refuses as MALFORMED_JSON a text body holding U+FFFD, what a byte that is not UTF-8 becomes on the way', () => {
    const body = Buffer.from([...Buffer.from('{"quantity":7,"'), 0xff, ...Buffer.from('":1}')]).toString('utf8');
    expect(body).toContain('\uFFFD');
    expect(() => readJsonBody({ body, headers: json })).toThrow(
      expect.objectContaining({ code: 'MALFORMED_JSON', message: expect.stringMatching(/not valid UTF-8/) }),
    );
    expect(readJsonBody({ body: '{"quantity":7}', headers: json })).toBe('{"quantity":7}');
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
