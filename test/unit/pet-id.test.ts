import { ValidationError } from '../../functions/inventory/errors';
import { parsePetId } from '../../functions/inventory/pet-id';

describe('Domain: parsePetId', () => {
  it.each([
    ['0', '0'],
    ['9223372036854775807', '9223372036854775807'],
    ['-9223372036854775808', '-9223372036854775808'],
    ['9007199254740993', '9007199254740993'],
    ['007', '7'],
    ['-0', '0'],
    // Leading zeros are ignored however many there are, up to the 1000-character limit.
    ['0'.repeat(41), '0'],
    [`${'0'.repeat(999)}7`, '7'],
    [`-${'0'.repeat(979)}9223372036854775808`, '-9223372036854775808'],
  ])('accepts %p as pet %p with every digit kept', (raw, expected) => {
    // Act
    const petId = parsePetId(raw);
    // Assess
    expect(petId).toBe(expected);
  });

  it.each([
    ['9223372036854775808', 'one past the int64 maximum'],
    ['-9223372036854775809', 'one below the int64 minimum'],
    ['', 'empty'],
    [' 1', 'leading whitespace'],
    ['1 ', 'trailing whitespace'],
    ['+1', 'a plus sign'],
    ['1e3', 'an exponent'],
    ['1.0', 'a fraction'],
    ['0x10', 'hexadecimal'],
    ['١٢', 'Arabic-Indic digits'],
    ['１', 'a full-width digit'],
    ['--1', 'a double sign'],
    [`${'0'.repeat(10_000)}9223372036854775808`, 'out of range behind 10,000 leading zeros'],
    [`${'0'.repeat(1000)}7`, 'pet 7 written in 1,001 characters, past the documented 1,000'],
  ])('refuses %p (%s) with a ValidationError naming the rule', (raw) => {
    // Act
    const act = () => parsePetId(raw);
    // Assess
    expect(act).toThrow(ValidationError);
    expect(act).toThrow(/petId must be a decimal integer from -9223372036854775808 to 9223372036854775807/);
  });

  it('refuses a missing petId', () => {
    expect(() => parsePetId(undefined)).toThrow(/missing/);
  });
});
