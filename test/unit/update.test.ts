import { ValidationError } from '../../functions/inventory/errors';
import { requireSourceTextAccess } from '../../functions/inventory/json-literals';
import { parseInventoryChanges, parseInventoryUpdate } from '../../functions/inventory/update';

function refusal(text: string, parse: (text: string) => unknown = parseInventoryUpdate): ValidationError {
  try {
    parse(text);
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error(`expected ${text} to be refused`);
}

const REASON_RULE = 'reason must be one of received, returned, sold, correction, loss, other';
const REFERENCE_RULE = 'reference must be a string of 1 to 255 characters, none a control character';
const PETID_RULE = 'petId must be a decimal integer from -9223372036854775808 to 9223372036854775807';

describe('Domain: parseInventoryUpdate', () => {
  it.each([
    ['{"adjustBy":-3}', -3],
    ['{"adjustBy":2147483647}', 2147483647],
    ['{"adjustBy":-2147483647}', -2147483647],
  ])('accepts the adjustment %p as adjustBy %p', (text, adjustBy) => {
    expect(parseInventoryUpdate(text)).toEqual({ adjustBy });
  });

  it.each([
    ['{"adjustBy":0}', /adjustBy must be an integer other than 0 from -2147483647 to 2147483647; got 0/],
    ['{"adjustBy":-0}', /adjustBy must be an integer other than 0 .*; got -0/],
    ['{"adjustBy":2147483648}', /adjustBy must be .*; got 2147483648/],
    ['{"adjustBy":-2147483648}', /adjustBy must be .*; got -2147483648/],
    ['{"adjustBy":1.0}', /adjustBy must be .* without a fraction or exponent; got 1.0/],
    ['{"adjustBy":"1"}', /adjustBy must be .*; got a string/],
    ['{"adjustBy":1,"quantity":5}', /adjustBy cannot be combined with quantity or expectedQuantity/],
    ['{"adjustBy":1,"expectedQuantity":5}', /adjustBy cannot be combined with quantity or expectedQuantity/],
  ])('refuses the adjustment %p with VALIDATION_FAILED', (text, message) => {
    const error = refusal(text);
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.message).toMatch(message);
  });

  it.each([
    ['{"quantity":0}', 0],
    ['{"quantity":2147483647}', 2147483647],
    ['  {\n "quantity" : 12 }\n', 12],
  ])('accepts %p as quantity %p', (text, quantity) => {
    expect(parseInventoryUpdate(text)).toEqual({ quantity });
  });

  it.each([
    ['{"quantity":6,"expectedQuantity":5}', { quantity: 6, expectedQuantity: 5 }],
    ['{"expectedQuantity":0,"quantity":2147483647}', { quantity: 2147483647, expectedQuantity: 0 }],
  ])('accepts %p with a compare-and-set expectedQuantity', (text, update) => {
    expect(parseInventoryUpdate(text)).toEqual(update);
  });

  it('leaves expectedQuantity out when the body has none, so the update is unconditional', () => {
    expect(parseInventoryUpdate('{"quantity":5}')).not.toHaveProperty('expectedQuantity');
  });

  it.each([
    ['{"quantity":-1}', /quantity must be an integer from 0 to 2147483647; got -1/],
    ['{"quantity":-0}', /quantity must be an integer from 0 to 2147483647; got -0/],
    ['{"quantity":5,"expectedQuantity":-0}', /expectedQuantity must be .*; got -0/],
    ['{"quantity":2147483648}', /got 2147483648/],
    ['{"quantity":5.0}', /without a fraction or exponent/],
    ['{"quantity":1e2}', /without a fraction or exponent/],
    ['{"quantity":1e400}', /without a fraction or exponent/],
    ['{"quantity":"5"}', /got a string/],
    ['{"quantity":null}', /got null/],
    ['{"quantity":[5]}', /got an array/],
    ['{"quantity":true}', /got a boolean/],
    ['{}', /quantity or adjustBy is required/],
    [
      '{"quantity":5,"status":"sold"}',
      /Unknown member "status"; the body takes only quantity, expectedQuantity, adjustBy, reason and reference\./,
    ],
    ['{"expectedQuantity":5}', /quantity or adjustBy is required \(expectedQuantity goes with quantity\)/],
    ['{"quantity":5,"expectedQuantity":-1}', /expectedQuantity must be an integer from 0 to 2147483647; got -1/],
    ['{"quantity":5,"expectedQuantity":2147483648}', /expectedQuantity must be .*; got 2147483648/],
    ['{"quantity":5,"expectedQuantity":4.0}', /expectedQuantity must be .* without a fraction or exponent/],
    ['{"quantity":5,"expectedQuantity":4,"expectedQuantity":3}', /repeats a member/],
    ['{"quantity":5,"expected":4}', /Unknown member "expected"/],
    ['{"__proto__":{"quantity":5}}', /Unknown member "__proto__"/],
    ['{"quantity":5,"quantity":6}', /repeats a member/],
    ['[{"quantity":5}]', /must be a JSON object/],
    ['null', /must be a JSON object/],
  ])('refuses %p with VALIDATION_FAILED and a message naming the rule', (text, message) => {
    const error = refusal(text);
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.message).toMatch(message);
  });

  it.each(['{"quantity":5', '{quantity:5}', "{'quantity':5}", '{"quantity":05}', 'not json'])(
    'refuses malformed JSON %p with MALFORMED_JSON',
    (text) => {
      expect(refusal(text).code).toBe('MALFORMED_JSON');
    },
  );

  it('refuses an empty or blank body', () => {
    expect(refusal('').message).toMatch(/empty/);
    expect(refusal('   ').message).toMatch(/empty/);
  });

  it('does not count a colon inside a nested string or object as a second member', () => {
    expect(refusal('{"quantity":{"a:b":1,"c":2}}').message).toMatch(/got an object/);
  });
});

describe('Domain: parseInventoryUpdate, reason and reference', () => {
  it.each(['received', 'returned', 'sold', 'correction', 'loss', 'other'])('accepts the reason %p', (reason) => {
    expect(parseInventoryUpdate(`{"adjustBy":3,"reason":"${reason}"}`)).toEqual({ adjustBy: 3, reason });
  });

  it('accepts a reference of 1 and of 255 characters (emoji and accents counted as one each)', () => {
    expect(parseInventoryUpdate('{"quantity":5,"reference":"x"}')).toEqual({ quantity: 5, reference: 'x' });
    const long = `${'é'.repeat(250)}🐟🐟🐟🐟🐟`;
    expect(
      parseInventoryUpdate(JSON.stringify({ quantity: 5, expectedQuantity: 4, reason: 'sold', reference: long })),
    ).toEqual({ quantity: 5, expectedQuantity: 4, reason: 'sold', reference: long });
  });

  it('leaves reason and reference out when the body has none: absent is recorded as absent', () => {
    expect(Object.keys(parseInventoryUpdate('{"adjustBy":1}'))).toEqual(['adjustBy']);
  });

  it.each([
    ['{"adjustBy":3,"reason":"arrived"}', `${REASON_RULE}; got "arrived".`],
    ['{"adjustBy":3,"reason":"Received"}', `${REASON_RULE}; got "Received".`],
    ['{"adjustBy":3,"reason":1}', `${REASON_RULE}; got a number.`],
    ['{"adjustBy":3,"reference":""}', `${REFERENCE_RULE}; got 0 characters.`],
    [JSON.stringify({ adjustBy: 3, reference: 'x'.repeat(256) }), `${REFERENCE_RULE}; got 256 characters.`],
    ['{"adjustBy":3,"reference":"a\\nb"}', `${REFERENCE_RULE}; got U+000A in it.`],
    ['{"adjustBy":3,"reference":"a\\u0085b"}', `${REFERENCE_RULE}; got U+0085 in it.`],
    ['{"adjustBy":3,"reason":"sold","reason":"loss"}', 'The request body repeats a member; send each member once.'],
  ])('refuses %p with VALIDATION_FAILED: %p', (text, message) => {
    const error = refusal(text);
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.message).toBe(message);
  });

  it('checks the change before its reason: a bad quantity with a bad reason names the quantity', () => {
    expect(refusal('{"quantity":-1,"reason":"arrived"}').message).toMatch(/^quantity must be/);
  });
});

describe('Domain: parseInventoryChanges', () => {
  const batch = (...changes: string[]) => `{"changes":[${changes.join(',')}]}`;

  it('reads every change in request order, each with its petId as exact int64 digits and its note', () => {
    const text = batch(
      '{"petId":7,"adjustBy":3,"reason":"received","reference":"delivery 4411"}',
      '{"reason":"sold","quantity":0,"expectedQuantity":2,"petId":9}',
      '{"petId":9223372036854775807,"quantity":1}',
      '{"petId":-9223372036854775808,"adjustBy":-1}',
    );
    expect(parseInventoryChanges(text)).toEqual([
      { petId: '7', adjustBy: 3, reason: 'received', reference: 'delivery 4411' },
      { petId: '9', quantity: 0, expectedQuantity: 2, reason: 'sold' },
      { petId: '9223372036854775807', quantity: 1 },
      { petId: '-9223372036854775808', adjustBy: -1 },
    ]);
  });

  it('accepts 100 changes, and whitespace anywhere', () => {
    const changes = Array.from({ length: 100 }, (_, i) => `\n  { "petId" : ${i + 1} , "adjustBy" : 1 }`);
    expect(parseInventoryChanges(` { "changes" : [${changes.join(' , ')} ] } `)).toHaveLength(100);
  });

  it.each([
    ['{"changes":[]}', 'changes must be an array of 1 to 100 changes; got 0 changes.'],
    [
      batch(...Array.from({ length: 101 }, (_, i) => `{"petId":${i},"adjustBy":1}`)),
      'changes must be an array of 1 to 100 changes; got 101 changes.',
    ],
    ['{"changes":{"petId":1,"adjustBy":1}}', 'changes must be an array of 1 to 100 changes; got an object.'],
    ['{}', 'changes must be an array of 1 to 100 changes; got nothing.'],
    ['{"changes":[],"dryRun":true}', 'Unknown member "dryRun"; the body takes only changes.'],
    [
      '{"changes":[{"petId":1,"adjustBy":1}],"changes":[]}',
      'The request body repeats a member; send each member once.',
    ],
    ['[{"petId":1,"adjustBy":1}]', 'The request body must be a JSON object with the member changes.'],
    [
      batch('{"petId":7,"adjustBy":3}', '{"petId":8,"quantity":1}', '{"petId":7,"adjustBy":1}'),
      'changes[2] (petId 7): petId 7 is already changes[0]; a request changes a pet once.',
    ],
    [
      batch('{"petId":1,"adjustBy":1}', '{"petId":8,"adjustBy":1,"reason":"arrived"}'),
      `changes[1] (petId 8): ${REASON_RULE}; got "arrived".`,
    ],
    [
      batch('{"petId":9,"adjustBy":1,"status":"sold"}'),
      'changes[0] (petId 9): Unknown member "status"; a change takes only petId, quantity, expectedQuantity, adjustBy, reason and reference.',
    ],
    [
      batch('{"petId":9,"petId":9,"adjustBy":2}'),
      'changes[0] (petId 9): The change repeats a member; send each member once.',
    ],
    [batch('{"adjustBy":2}'), `changes[0]: ${PETID_RULE}; got nothing.`],
    [batch('{"petId":"7","adjustBy":2}'), `changes[0]: ${PETID_RULE}; got a string.`],
    [
      batch('{"petId":7.0,"adjustBy":2}'),
      `changes[0]: ${PETID_RULE}, written without a fraction or exponent; got 7.0.`,
    ],
    [batch('{"petId":9223372036854775808,"adjustBy":2}'), `changes[0]: ${PETID_RULE}; it is out of range.`],
    [
      batch('{"petId":1,"adjustBy":1}', '5'),
      'changes[1]: A change must be a JSON object with petId and quantity or adjustBy; got a number.',
    ],
    [
      batch('{"petId":4}'),
      'changes[0] (petId 4): quantity or adjustBy is required (expectedQuantity goes with quantity); quantity must be an integer from 0 to 2147483647.',
    ],
  ])('refuses %p with VALIDATION_FAILED naming the change: %p', (text, message) => {
    const error = refusal(text, parseInventoryChanges);
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.message).toBe(message);
  });

  it('names the first change in request order that breaks a rule', () => {
    const text = batch('{"petId":1,"adjustBy":1}', '{"petId":2,"adjustBy":0}', '{"petId":1,"reason":"x","adjustBy":1}');
    expect(refusal(text, parseInventoryChanges).message).toMatch(/^changes\[1\] \(petId 2\): adjustBy must be/);
  });

  it('does not count members of nested values as members of a change', () => {
    const text = batch('{"petId":1,"adjustBy":1,"reference":"a, \\"b\\": c}"}');
    expect(parseInventoryChanges(text)).toEqual([{ petId: '1', adjustBy: 1, reference: 'a, "b": c}' }]);
  });

  it.each(['', '  ', '{"changes":[', 'changes'])('refuses %p as empty or malformed', (text) => {
    const error = refusal(text, parseInventoryChanges);
    expect(error.code).toBe(text.trim() === '' ? 'VALIDATION_FAILED' : 'MALFORMED_JSON');
  });
});

describe('Domain: JSON.parse source-text access', () => {
  const parseWithoutSource: typeof JSON.parse = (text, reviver) =>
    JSON.parse(
      text,
      reviver &&
        function (this: unknown, key: string, value: unknown) {
          return reviver.call(this, key, value);
        },
    );

  it('is there on the Node.js the project runs on', () => {
    expect(() => requireSourceTextAccess()).not.toThrow();
  });

  it('fails loudly with an Error naming the Node.js requirement, never a ValidationError, when it is missing', () => {
    let thrown: unknown;
    try {
      requireSourceTextAccess(parseWithoutSource);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toEqual(new Error('JSON.parse source-text access is missing: Node.js 22 or later is required'));
    expect(thrown).not.toBeInstanceOf(ValidationError);
  });
});
