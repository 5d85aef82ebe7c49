import { parseChangeFile } from '../../cli/inventory/change-file';
import { batchesOf } from '../../functions/inventory/json';

describe('Function: parseChangeFile (a change file for inventory apply)', () => {
  it('reads adjustments and sets with their reason and reference, exact int64 ids, columns in any order and a BOM', () => {
    // Prepare
    const text =
      '\uFEFFreference,petId,reason,quantity,adjustBy\r\n' +
      '"delivery 4411, box 2",9223372036854775807,received,,3\r\n' +
      ',-9223372036854775808,correction,0,\r\n' +
      ',007,,,-1\r\n';
    // Act
    const result = parseChangeFile(text);
    // Assess
    expect(result).toEqual({
      changes: [
        {
          line: 2,
          change: { petId: '9223372036854775807', adjustBy: 3, reason: 'received', reference: 'delivery 4411, box 2' },
        },
        { line: 3, change: { petId: '-9223372036854775808', quantity: 0, reason: 'correction' } },
        { line: 4, change: { petId: '7', adjustBy: -1 } },
      ],
      problems: [],
    });
  });

  it('takes a header without the columns a file does not use (petId,quantity: a stock count)', () => {
    expect(parseChangeFile('petId,quantity\n7,5\n')).toEqual({
      changes: [{ line: 2, change: { petId: '7', quantity: 5 } }],
      problems: [],
    });
  });

  it('names every bad row with every rule it breaks, by the API rules of a PATCH body and of a petId', () => {
    // Prepare
    const text = [
      'petId,adjustBy,quantity,reason,reference',
      '1,3,,received,delivery 4411', // line 2: good
      '2,3,4,,', // line 3: both
      '3,,,,', // line 4: neither
      '7,abc,,,', // line 5: not a number
      '8,1,,arrived,', // line 6: unknown reason
      'x,1,,,', // line 7: bad petId
      '1,2,,,', // line 8: petId again
    ].join('\n');
    // Act
    const { changes, problems } = parseChangeFile(text);
    // Assess
    expect(changes.map((change) => change.line)).toEqual([2]);
    expect(problems).toEqual([
      { line: 3, message: 'give adjustBy or quantity, not both' },
      { line: 4, message: 'adjustBy or quantity is required' },
      {
        line: 5,
        message:
          'adjustBy must be an integer other than 0 from -2147483647 to 2147483647; got a string; the adjustBy cell is "abc"',
      },
      {
        line: 6,
        message: 'reason must be one of received, returned, sold, correction, loss, other; got "arrived"',
      },
      { line: 7, message: 'petId must be a decimal integer from -9223372036854775808 to 9223372036854775807' },
      { line: 8, message: 'petId 1 is already on line 2' },
    ]);
  });

  it('names a pet given twice even when its first row has another problem, and a repeat with its own problems', () => {
    const text = ['petId,adjustBy,quantity,reason', '1,2,,arrived', '1,3,,received', '1,abc,,'].join('\n');

    const { changes, problems } = parseChangeFile(text);

    expect(changes).toEqual([]);
    expect(problems.map((problem) => problem.line)).toEqual([2, 3, 4]);
    expect(problems[0]?.message).toMatch(/^reason must be one of/);
    expect(problems[1]?.message).toBe('petId 1 is already on line 2');
    expect(problems[2]?.message).toMatch(/^petId 1 is already on line 2; adjustBy must be/);
  });

  it('refuses a header naming an unknown column, and an empty file, reading no rows', () => {
    expect(parseChangeFile('petId,adjustBy,note\n1,2,x\n')).toEqual({
      changes: [],
      problems: [
        {
          line: 1,
          message:
            'the header must name the columns petId and any of adjustBy,quantity,reason,reference (in any order); got "petId","adjustBy","note"',
        },
      ],
    });
    expect(parseChangeFile('').problems).toEqual([
      {
        line: 1,
        message: 'the file is empty; expected the header petId and any of adjustBy,quantity,reason,reference',
      },
    ]);
  });

  it('cuts 250 changes into batches of 100, 100 and 50, in file order', () => {
    const changes = Array.from({ length: 250 }, (_, i) => i);
    const batches = [...batchesOf(changes, 100)];
    expect(batches.map((batch) => [batch[0], batch.at(-1), batch.length])).toEqual([
      [0, 99, 100],
      [100, 199, 100],
      [200, 249, 50],
    ]);
  });
});
