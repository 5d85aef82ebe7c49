import { ValidationError } from '../../functions/inventory/errors';
import { requireSourceTextAccess } from '../../functions/inventory/json-literals';
import { parseInventoryUpdate } from '../../functions/inventory/update';

function refusal(text: string): ValidationError {
  try {
    parseInventoryUpdate(text);
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error(`expected ${text} to be refused`);
}

describe('Domain: parseInventoryUpdate', () => {
  it.each([
    ['{"adjustBy":1}', 1],
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
    ['{"adjustBy":1e0}', /adjustBy must be .* without a fraction or exponent/],
    ['{"adjustBy":"1"}', /adjustBy must be .*; got a string/],
    ['{"adjustBy":null}', /adjustBy must be .*; got null/],
    ['{"adjustBy":1,"quantity":5}', /adjustBy cannot be combined with quantity or expectedQuantity/],
    ['{"adjustBy":1,"expectedQuantity":5}', /adjustBy cannot be combined with quantity or expectedQuantity/],
    ['{"adjustBy":1,"adjustBy":2}', /repeats a member/],
  ])('refuses the adjustment %p with VALIDATION_FAILED', (text, message) => {
    const error = refusal(text);
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.message).toMatch(message);
  });

  it.each([
    ['{"quantity":0}', 0],
    ['{"quantity":5}', 5],
    ['{"quantity":2147483647}', 2147483647],
    ['  {\n "quantity" : 12 }\n', 12],
  ])('accepts %p as quantity %p', (text, quantity) => {
    expect(parseInventoryUpdate(text)).toEqual({ quantity });
  });

  it.each([
    ['{"quantity":6,"expectedQuantity":5}', { quantity: 6, expectedQuantity: 5 }],
    ['{"expectedQuantity":0,"quantity":2147483647}', { quantity: 2147483647, expectedQuantity: 0 }],
    ['{"quantity":0,"expectedQuantity":2147483647}', { quantity: 0, expectedQuantity: 2147483647 }],
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
    ['{"quantity":1.5}', /without a fraction or exponent/],
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
      /Unknown member "status"; the body takes only quantity, expectedQuantity and adjustBy/,
    ],
    ['{"expectedQuantity":5}', /quantity or adjustBy is required \(expectedQuantity goes with quantity\)/],
    ['{"quantity":5,"expectedQuantity":-1}', /expectedQuantity must be an integer from 0 to 2147483647; got -1/],
    ['{"quantity":5,"expectedQuantity":2147483648}', /expectedQuantity must be .*; got 2147483648/],
    ['{"quantity":5,"expectedQuantity":4.0}', /expectedQuantity must be .* without a fraction or exponent/],
    ['{"quantity":5,"expectedQuantity":4e0}', /expectedQuantity must be .* without a fraction or exponent/],
    ['{"quantity":5,"expectedQuantity":"4"}', /expectedQuantity must be .*; got a string/],
    ['{"quantity":5,"expectedQuantity":null}', /expectedQuantity must be .*; got null/],
    ['{"quantity":5,"expectedQuantity":4,"expectedQuantity":3}', /repeats a member/],
    ['{"quantity":5,"expected":4}', /Unknown member "expected"/],
    ['{"qty":5}', /Unknown member "qty"/],
    ['{"__proto__":{"quantity":5}}', /Unknown member "__proto__"/],
    ['{"quantity":5,"quantity":6}', /repeats a member/],
    ['[{"quantity":5}]', /must be a JSON object/],
    ['5', /must be a JSON object/],
    ['null', /must be a JSON object/],
    ['"quantity"', /must be a JSON object/],
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
