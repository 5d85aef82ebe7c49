import { ValidationError } from '../../functions/inventory/errors';
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
    ['{"quantity":0}', 0],
    ['{"quantity":5}', 5],
    ['{"quantity":2147483647}', 2147483647],
    ['  {\n "quantity" : 12 }\n', 12],
  ])('accepts %p as quantity %p', (text, quantity) => {
    expect(parseInventoryUpdate(text)).toEqual({ quantity });
  });

  it.each([
    ['{"quantity":-1}', /quantity must be an integer from 0 to 2147483647; got -1/],
    ['{"quantity":2147483648}', /got 2147483648/],
    ['{"quantity":1.5}', /without a fraction or exponent/],
    ['{"quantity":5.0}', /without a fraction or exponent/],
    ['{"quantity":1e2}', /without a fraction or exponent/],
    ['{"quantity":1e400}', /without a fraction or exponent/],
    ['{"quantity":"5"}', /got a string/],
    ['{"quantity":null}', /got null/],
    ['{"quantity":[5]}', /got an array/],
    ['{"quantity":true}', /got a boolean/],
    ['{}', /quantity is required/],
    ['{"quantity":5,"status":"sold"}', /Unknown member "status"/],
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
