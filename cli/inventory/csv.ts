import { type CsvError, type Info, parse } from 'csv-parse/sync';

/** One CSV record and the line it starts on (a quoted field may span lines). */
export interface CsvRecord {
  line: number;
  fields: string[];
}

/** A data row of a CSV table: the line it starts on and its fields by column name, optional columns `O`. */
export interface CsvRow<C extends string, O extends string = never> {
  line: number;
  fields: Record<C, string> & Partial<Record<O, string>>;
}

/** A record or row that cannot be used, and the line it starts on. */
export interface LineProblem {
  line: number;
  message: string;
}

const LINE_BREAK = /\r\n|\r|\n/g;
const BOM = '\uFEFF';

/** An operator's file without the byte order mark a spreadsheet may have put first. */
export function stripBom(text: string): string {
  return text.startsWith(BOM) ? text.slice(1) : text;
}

/**
 * Runs one rule of a row, collecting its message (without the final period) instead of stopping at the row's first
 * problem; undefined when it refused.
 */
export function check<T>(errors: string[], read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    errors.push((error as Error).message.replace(/\.$/, ''));
    return undefined;
  }
}

/** The problem of a row naming a pet an earlier row named (a file names a pet once); `seen` keeps each first line. */
export function repeatedPetId(seen: Map<string, number>, petId: string, line: number): string | undefined {
  const earlier = seen.get(petId);
  if (earlier === undefined) seen.set(petId, line);
  return earlier === undefined ? undefined : `petId ${petId} is already on line ${earlier}`;
}

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

/**
 * The rows of a CSV table whose header names each of `columns` and any of `optional` once, in any order (a column left
 * out is absent from the fields), and every problem with its line. A missing or wrong header reads no rows.
 */
export function readCsvTable<C extends string, O extends string = never>(
  text: string,
  columns: readonly C[],
  optional: readonly O[] = [],
): { rows: CsvRow<C, O>[]; problems: LineProblem[] } {
  const { records, problems } = parseCsv(text);
  const [header, ...data] = records;
  const expected = `${columns.join(',')}${optional.length > 0 ? ` and any of ${optional.join(',')}` : ''}`;
  if (header === undefined) {
    if (problems.length === 0)
      problems.push({ line: 1, message: `the file is empty; expected the header ${expected}` });
    return { rows: [], problems };
  }
  const names = header.fields;
  const once = (name: string) => names.filter((c) => c === name).length === 1;
  const known = (name: string) =>
    (columns as readonly string[]).includes(name) || (optional as readonly string[]).includes(name);
  if (!columns.every(once) || !names.every((name) => known(name) && once(name))) {
    const got = names.map((name) => JSON.stringify(name)).join(',');
    problems.push({
      line: header.line,
      message: `the header must name the columns ${expected} (in any order); got ${got}`,
    });
    return { rows: [], problems };
  }
  const rows: CsvRow<C, O>[] = [];
  for (const { line, fields } of data) {
    if (fields.length !== names.length)
      problems.push({ line, message: `expected ${names.length} fields (${names.join(',')}), got ${fields.length}` });
    // The header names every required column, so each has its field.
    else
      rows.push({
        line,
        fields: Object.fromEntries(names.map((name, i) => [name, fields[i]])) as CsvRow<C, O>['fields'],
      });
  }
  return { rows, problems };
}
