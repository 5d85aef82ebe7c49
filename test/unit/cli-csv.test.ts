import { parseCsv } from '../../cli/inventory/csv';

describe('Function: parseCsv', () => {
  it('reads LF, CRLF and lone CR line endings alike and numbers each record by its line', () => {
    // Prepare
    const text = 'a,b\r\nc,d\ne,f\rg,h';

    // Act
    const { records, problems } = parseCsv(text);

    // Assess
    expect(problems).toEqual([]);
    expect(records).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['c', 'd'] },
      { line: 3, fields: ['e', 'f'] },
      { line: 4, fields: ['g', 'h'] },
    ]);
  });

  it('keeps commas, doubled quotes and line breaks inside quoted fields, and counts the lines they span', () => {
    // Prepare
    const text = '"a,b","say ""hi""","two\r\nlines"\r\nnext,"",x\r\n';

    // Act
    const { records, problems } = parseCsv(text);

    // Assess
    expect(problems).toEqual([]);
    expect(records).toEqual([
      { line: 1, fields: ['a,b', 'say "hi"', 'two\nlines'] },
      { line: 3, fields: ['next', '', 'x'] },
    ]);
  });

  it('skips blank lines, including a blank trailing line, but keeps a record of one quoted empty field', () => {
    // Prepare
    const text = 'a\n\n""\r\n\r\n';

    // Act
    const { records } = parseCsv(text);

    // Assess
    expect(records).toEqual([
      { line: 1, fields: ['a'] },
      { line: 3, fields: [''] },
    ]);
  });

  it('keeps an empty last field after a trailing comma', () => {
    // Act
    const { records } = parseCsv('a,b,\n');

    // Assess
    expect(records).toEqual([{ line: 1, fields: ['a', 'b', ''] }]);
  });

  it('keeps a stray quote inside a field as text (the row rules then refuse the value) and reads on', () => {
    // Prepare
    const text = 'ok,1\nab"c,2\n"x"y,3\nfine,4\n';

    // Act
    const { records, problems } = parseCsv(text);

    // Assess
    expect(problems).toEqual([]);
    expect(records).toEqual([
      { line: 1, fields: ['ok', '1'] },
      { line: 2, fields: ['ab"c', '2'] },
      { line: 3, fields: ['"x"y', '3'] },
      { line: 4, fields: ['fine', '4'] },
    ]);
  });

  it('reports a quoted field that is never closed with the line it opened on', () => {
    // Act
    const { records, problems } = parseCsv('a,b\n1,"open\n2,3\n');

    // Assess
    expect(records).toEqual([{ line: 1, fields: ['a', 'b'] }]);
    expect(problems).toEqual([{ line: 2, message: 'the quoted field opened on line 2 is never closed' }]);
  });
});
