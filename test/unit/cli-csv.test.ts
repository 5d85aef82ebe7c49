import { type CsvRecord, type LineProblem, parseCsv } from '../../cli/inventory/csv';

const CASES: { behaviour: string; text: string; records: CsvRecord[]; problems?: LineProblem[] }[] = [
  {
    behaviour: 'reads LF, CRLF and lone CR line endings alike and numbers each record by its line',
    text: 'a,b\r\nc,d\ne,f\rg,h',
    records: [
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['c', 'd'] },
      { line: 3, fields: ['e', 'f'] },
      { line: 4, fields: ['g', 'h'] },
    ],
  },
  {
    behaviour: 'keeps commas, doubled quotes and line breaks inside quoted fields, and counts the lines they span',
    text: '"a,b","say ""hi""","two\r\nlines"\r\nnext,"",x\r\n',
    records: [
      { line: 1, fields: ['a,b', 'say "hi"', 'two\nlines'] },
      { line: 3, fields: ['next', '', 'x'] },
    ],
  },
  {
    behaviour: 'skips blank lines, including a blank trailing line, but keeps a record of one quoted empty field',
    text: 'a\n\n""\r\n\r\n',
    records: [
      { line: 1, fields: ['a'] },
      { line: 3, fields: [''] },
    ],
  },
  {
    behaviour: 'keeps an empty last field after a trailing comma',
    text: 'a,b,\n',
    records: [{ line: 1, fields: ['a', 'b', ''] }],
  },
  {
    behaviour: 'keeps a stray quote inside a field as text (the row rules then refuse the value) and reads on',
    text: 'ok,1\nab"c,2\n"x"y,3\nfine,4\n',
    records: [
      { line: 1, fields: ['ok', '1'] },
      { line: 2, fields: ['ab"c', '2'] },
      { line: 3, fields: ['"x"y', '3'] },
      { line: 4, fields: ['fine', '4'] },
    ],
  },
  {
    behaviour: 'reports a quoted field that is never closed with the line it opened on',
    text: 'a,b\n1,"open\n2,3\n',
    records: [{ line: 1, fields: ['a', 'b'] }],
    problems: [{ line: 2, message: 'the quoted field opened on line 2 is never closed' }],
  },
];

describe('Function: parseCsv', () => {
  it.each(CASES)('$behaviour', ({ text, records, problems = [] }) => {
    // Act
    const parsed = parseCsv(text);

    // Assess
    expect(parsed).toEqual({ records, problems });
  });
});
