import { numberEnv, PORT_NUMBER } from '../../functions/config';
import { throttlingFromEnv } from '../../local/throttle';
import { LOCAL_DYNAMODB_PORT } from '../../service/local-dynamodb';

/** One parser for numeric environment variables: the functions, `npm start` and the CLI agree on every value. */
describe('Function: numberEnv (the one parser of numeric environment variables)', () => {
  it('gives the fallback when the variable is unset or blank', () => {
    expect(numberEnv('X', 7, {}, {})).toBe(7);
    expect(numberEnv('X', 7, {}, { X: '  ' })).toBe(7);
  });

  it('reads a whole number, 0 included by default (a time-out of 0 waits forever)', () => {
    expect(numberEnv('X', 7, {}, { X: '0' })).toBe(0);
    expect(numberEnv('X', 7, {}, { X: ' 2000 ' })).toBe(2000);
  });

  it.each(['-1', '1.5', '1e3', '0x10', 'ten', '9007199254740993'])('refuses %j for a whole number', (raw) => {
    expect(() => numberEnv('X', 7, {}, { X: raw })).toThrow(`X must be a whole number of at least 0; got "${raw}"`);
  });

  it('reads fractions only where the rule allows them', () => {
    expect(numberEnv('RATE', 1, { integer: false }, { RATE: '0.5' })).toBe(0.5);
    expect(() => numberEnv('RATE', 1, { integer: false }, { RATE: '-0.5' })).toThrow(/RATE must be a number/);
  });

  it('refuses DYNAMODB_PORT=0 for npm start and the CLI alike (both read it with PORT_NUMBER)', () => {
    const read = (raw: string) =>
      numberEnv(LOCAL_DYNAMODB_PORT.variable, LOCAL_DYNAMODB_PORT.fallback, PORT_NUMBER, { DYNAMODB_PORT: raw });
    expect(() => read('0')).toThrow('DYNAMODB_PORT must be a whole number from 1 to 65535; got "0"');
    expect(() => read('65536')).toThrow(/from 1 to 65535/);
    expect(read('8001')).toBe(8001);
    expect(numberEnv(LOCAL_DYNAMODB_PORT.variable, LOCAL_DYNAMODB_PORT.fallback, PORT_NUMBER, {})).toBe(8000);
  });

  it("reads process.env unless given another, and is what npm start's throttling reads with", () => {
    process.env.H17_INT_ENV_TEST = '12';
    expect(numberEnv('H17_INT_ENV_TEST', 3)).toBe(12);
    process.env.H17_INT_ENV_TEST = '-12';
    expect(() => numberEnv('H17_INT_ENV_TEST', 3)).toThrow('H17_INT_ENV_TEST must be a whole number of at least 0');
    delete process.env.H17_INT_ENV_TEST;
    expect(() => throttlingFromEnv({ rateLimit: 20, burstLimit: 40 }, { PETSTORE_BURST_LIMIT: '4.5' })).toThrow(
      'PETSTORE_BURST_LIMIT must be a whole number of at least 0; got "4.5"',
    );
  });
});
