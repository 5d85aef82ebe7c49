/** One CSV record and the line it starts on (a quoted field may span lines). */
export interface CsvRecord {
  line: number;
  fields: string[];
}

/** A record that could not be read, and the line it starts on. */
export interface CsvProblem {
  line: number;
  message: string;
}

/**
 * Parses CSV text (RFC 4180): comma separators; CRLF, LF or CR line endings; fields in double quotes may hold
 * commas, line breaks and doubled quotes (`""`). Blank lines are skipped. A malformed record is reported with its
 * line number and parsing carries on with the next record, so every bad line of a file is named at once.
 * A leading byte order mark is the caller's to strip.
 */
export function parseCsv(text: string): { records: CsvRecord[]; problems: CsvProblem[] } {
  const records: CsvRecord[] = [];
  const problems: CsvProblem[] = [];
  const length = text.length;
  let i = 0;
  let line = 1;
  const isRecordEnd = (ch: string | undefined) => ch === undefined || ch === '\n' || ch === '\r';
  while (i < length) {
    const startLine = line;
    const fields: string[] = [];
    let problem: string | undefined;
    let quoted = false;
    for (;;) {
      if (text[i] === '"') {
        quoted = true;
        const openedOn = line;
        let value = '';
        let closed = false;
        i++;
        while (i < length) {
          const ch = text[i] as string;
          if (ch === '"') {
            if (text[i + 1] === '"') {
              value += '"';
              i += 2;
              continue;
            }
            i++;
            closed = true;
            break;
          }
          if (ch === '\n' || (ch === '\r' && text[i + 1] !== '\n')) line++;
          value += ch;
          i++;
        }
        if (!closed) problem ??= `the quoted field opened on line ${openedOn} is never closed`;
        else if (text[i] !== ',' && !isRecordEnd(text[i])) {
          problem ??= 'text after a closing quote (a quote inside a quoted field is written twice: "")';
          while (text[i] !== ',' && !isRecordEnd(text[i])) i++;
        }
        fields.push(value);
      } else {
        const start = i;
        while (text[i] !== ',' && !isRecordEnd(text[i])) {
          if (text[i] === '"')
            problem ??= 'a quote inside an unquoted field (quote the whole field and write the quote twice: "a""b")';
          i++;
        }
        fields.push(text.slice(start, i));
      }
      if (text[i] === ',') {
        i++;
        continue;
      }
      break;
    }
    if (text[i] === '\r') {
      i++;
      if (text[i] === '\n') i++;
      line++;
    } else if (text[i] === '\n') {
      i++;
      line++;
    }
    if (problem !== undefined) problems.push({ line: startLine, message: problem });
    else if (!(fields.length === 1 && fields[0] === '' && !quoted)) records.push({ line: startLine, fields });
  }
  return { records, problems };
}
