import { type CsvError, type Info, parse } from 'csv-parse/sync';

/** One CSV record and the line it starts on (a quoted field may span lines). */
export interface CsvRecord {
  line: number;
  fields: string[];
}

/** A record or row that cannot be used, and the line it starts on. */
export interface LineProblem {
  line: number;
  message: string;
}

const LINE_BREAK = /\r\n|\r|\n/g;

/**
 * CSV (RFC 4180) with each record's starting line; any line ending, blank lines skipped. A stray quote stays text for
 * the row's rules to name; only a quoted field never closed ends the file. The caller strips a byte order mark.
 */
export function parseCsv(text: string): { records: CsvRecord[]; problems: LineProblem[] } {
  const lines = text.split(LINE_BREAK);
  const records: CsvRecord[] = [];
  const problems: LineProblem[] = [];
  // csv-parse counts the line a record ends on; a record starts on the first non-blank line after the previous one.
  let previousEnd = 0;
  const startAfter = (end: number) => {
    let line = end + 1;
    while (lines[line - 1] === '') line++;
    return line;
  };
  parse(lines.join('\n'), {
    info: true,
    raw: true,
    relax_quotes: true,
    relax_column_count: true,
    record_delimiter: '\n',
    skip_empty_lines: true,
    skip_records_with_error: true,
    // With `info` and `raw`, csv-parse passes each record wrapped with them (its types do not say so).
    on_record: (output: unknown) => {
      const { record, info, raw } = output as { record: string[]; info: Info; raw: string };
      // `raw` starts with the blank lines skipped before the record and ends with its line break.
      const breaksInside = (raw.replace(/^\n+|\n$/g, '').match(LINE_BREAK) ?? []).length;
      records.push({ line: info.lines - breaksInside, fields: record });
      previousEnd = info.lines;
      return null;
    },
    on_skip: (error: CsvError | undefined) => {
      const line = startAfter(previousEnd);
      const message =
        error?.code === 'CSV_QUOTE_NOT_CLOSED'
          ? `the quoted field opened on line ${line} is never closed`
          : (error?.message ?? 'unreadable record');
      problems.push({ line, message });
      previousEnd = Math.max(line, (error as { lines?: number } | undefined)?.lines ?? line);
    },
  });
  return { records, problems };
}
