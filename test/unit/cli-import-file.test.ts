import { detectFormat, parseImport } from '../../cli/inventory/import-file';

const HEADER = 'petId,quantity,status';

describe('Function: parseImport (CSV)', () => {
  it('reads a file with a BOM, CRLF endings, quoted fields and a blank trailing line', () => {
    // Prepare
    const text = `\uFEFF${HEADER}\r\n"1",2,available\r\n"9223372036854775807","0","sold"\r\n-9223372036854775808,5,"pending"\r\n\r\n`;

    // Act
    const result = parseImport(text, 'csv');

    // Assess
    expect(result.problems).toEqual([]);
    expect(result.items).toEqual([
      { petId: '1', quantity: 2, status: 'available' },
      { petId: '9223372036854775807', quantity: 0, status: 'sold' },
      { petId: '-9223372036854775808', quantity: 5, status: 'pending' },
    ]);
  });

  it('accepts the columns in any order', () => {
    // Act
    const result = parseImport('status,petId,quantity\nsold,7,1\n', 'csv');

    // Assess
    expect(result).toEqual({ items: [{ petId: '7', quantity: 1, status: 'sold' }], problems: [] });
  });

  it('names every bad line with every rule it breaks, and keeps line numbers right after a multi-line quoted field', () => {
    // Prepare
    const text = [
      HEADER,
      '1,1,available', // line 2
      '"a,b",1,sold', // line 3: petId with a comma
      '2,-1,sold', // line 4
      '3,2147483648,sold', // line 5
      '4,1.0,Sold', // line 6
      '9223372036854775808,1,sold', // line 7
      '"5\n",1,sold', // lines 8-9: a quoted line break in the petId
      '6,1', // line 10
      '007,1,pending', // line 11
      '7,1,pending', // line 12: 007 and 7 are the same pet
      '8,-0,sold', // line 13: a signed zero
      '',
    ].join('\n');

    // Act
    const { problems } = parseImport(text, 'csv');

    // Assess
    expect(problems.map((problem) => problem.line)).toEqual([3, 4, 5, 6, 7, 8, 10, 12, 13]);
    const byLine = new Map(problems.map((problem) => [problem.line, problem.message]));
    expect(byLine.get(3)).toMatch(/petId must be a decimal integer/);
    expect(byLine.get(4)).toMatch(/quantity must be an integer from 0 to 2147483647; got -1$/);
    expect(byLine.get(5)).toMatch(/quantity must be an integer from 0 to 2147483647; got 2147483648/);
    expect(byLine.get(6)).toMatch(/quantity .* got 1\.0; status must be one of available, pending, sold; got "Sold"/);
    expect(byLine.get(7)).toMatch(/out of range/);
    expect(byLine.get(10)).toBe('expected 3 fields (petId,quantity,status), got 2');
    expect(byLine.get(12)).toBe('petId 7 is already on line 11');
    expect(byLine.get(13)).toMatch(/quantity must be an integer from 0 to 2147483647; got -0$/);
  });

  it('refuses a missing or wrong header on line 1 and reads no rows', () => {
    // Act
    const wrong = parseImport('id,quantity,status\n1,1,sold\n', 'csv');
    const repeated = parseImport('petId,petId,status\n1,1,sold\n', 'csv');
    const empty = parseImport('\uFEFF', 'csv');

    // Assess
    expect(wrong.items).toEqual([]);
    expect(wrong.problems).toEqual([{ line: 1, message: expect.stringMatching(/header must name the columns/) }]);
    expect(repeated.problems[0]?.line).toBe(1);
    expect(empty.problems).toEqual([{ line: 1, message: expect.stringMatching(/file is empty/) }]);
  });

  it('accepts a header with no rows as an empty import', () => {
    // Act & Assess
    expect(parseImport(`${HEADER}\r\n`, 'csv')).toEqual({ items: [], problems: [] });
  });
});

describe('Function: parseImport (JSON)', () => {
  it('keeps every digit of int64 petIds that JSON.parse would round', () => {
    // Prepare
    const text =
      '[{"petId":9223372036854775807,"quantity":1,"status":"sold"},{"petId":-9223372036854775808,"quantity":0,"status":"available"},{"petId":9007199254740993,"quantity":2147483647,"status":"pending"}]';

    // Act
    const result = parseImport(text, 'json');

    // Assess
    expect(result.problems).toEqual([]);
    expect(result.items.map((item) => item.petId)).toEqual([
      '9223372036854775807',
      '-9223372036854775808',
      '9007199254740993',
    ]);
    expect(result.items[2]?.quantity).toBe(2147483647);
  });

  it('names the line each bad element starts on, whatever the rule it breaks', () => {
    // Prepare
    const text = [
      '\uFEFF[', // line 1
      '  {"petId": 1, "quantity": 1, "status": "sold"},', // line 2
      '  {"petId": "2", "quantity": 1, "status": "sold"},', // line 3: petId as a string
      '  {', // line 4: element spanning lines
      '    "petId": 3, "quantity": 1e0, "status": "sold"',
      '  },',
      '  {"petId": 4, "quantity": 1, "status": "sold", "note": "x"},', // line 7
      '  {"petId": 5, "quantity": 1, "quantity": 2, "status": "sold"},', // line 8
      '  {"petId": 6.5, "quantity": 1},', // line 9
      '  [1, 2, "sold"],', // line 10
      '  {"petId": 1, "quantity": 3, "status": "pending"},', // line 11: duplicate of line 2
      '  {"petId": 12, "quantity": -0, "status": "sold"}', // line 12: a signed zero
      ']',
    ].join('\r\n');

    // Act
    const { items, problems } = parseImport(text, 'json');

    // Assess
    const byLine = new Map(problems.map((problem) => [problem.line, problem.message]));
    expect([...byLine.keys()]).toEqual([3, 4, 7, 8, 9, 10, 11, 12]);
    expect(byLine.get(3)).toBe(
      'petId must be a decimal integer from -9223372036854775808 to 9223372036854775807; got the string "2"',
    );
    expect(byLine.get(4)).toMatch(/quantity must be an integer .*got 1e0/);
    expect(byLine.get(7)).toBe('unknown member "note"');
    expect(byLine.get(8)).toBe('a member is repeated');
    expect(byLine.get(9)).toMatch(/petId must be a decimal integer.*; status is missing/);
    expect(byLine.get(10)).toMatch(/expected an object/);
    expect(byLine.get(11)).toBe('petId 1 is already on line 2');
    expect(byLine.get(12)).toMatch(/quantity must be an integer from 0 to 2147483647; got -0$/);
    expect(items).toHaveLength(1);
  });

  it('reports JSON that does not parse, or is not an array, as one problem with its line', () => {
    // Act
    const broken = parseImport('[\n{"petId": 1,\n"quantity" 1}]', 'json');
    const object = parseImport('{"petId": 1}', 'json');

    // Assess
    expect(broken.problems).toEqual([{ line: 3, message: expect.stringMatching(/^not valid JSON/) }]);
    expect(object.problems).toEqual([{ line: 1, message: expect.stringMatching(/expected a JSON array/) }]);
  });

  it('accepts an empty array', () => {
    // Act & Assess
    expect(parseImport(' [ ] ', 'json')).toEqual({ items: [], problems: [] });
  });
});

describe('Function: detectFormat', () => {
  it('goes by the extension, then by a leading [', () => {
    // Act & Assess
    expect(detectFormat('stock.CSV', '[')).toBe('csv');
    expect(detectFormat('stock.json', 'petId')).toBe('json');
    expect(detectFormat('stock.txt', '\uFEFF  [{}]')).toBe('json');
    expect(detectFormat('stock', 'petId,quantity,status')).toBe('csv');
  });
});
