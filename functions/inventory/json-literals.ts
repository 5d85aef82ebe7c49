/**
 * Reading JSON as written: JSON.parse folds duplicate members and rounds integers past 2^53, and the API refuses
 * the first and must keep the second exact, so both the update body and the CLI's import read the source text.
 */

/** A JSON integer literal as the API accepts it: no sign but `-`, no leading zero, fraction or exponent. */
export const INTEGER_LITERAL = /^-?(0|[1-9][0-9]*)$/;

/** The reviver context JSON.parse passes revivers on Node.js 22 or later (proposal-json-parse-with-source). */
interface ReviverContext {
  source?: string;
}

/**
 * Throws unless `parse` hands revivers the source text of each primitive. Without it no literal can be read, and
 * every body would be refused as the client's fault: the module refuses to load instead.
 */
export function requireSourceTextAccess(parse: typeof JSON.parse = JSON.parse): void {
  let source: string | undefined;
  parse('1', (_key: string, value: unknown, context?: ReviverContext) => {
    source = context?.source;
    return value;
  });
  if (source !== '1') throw new Error('JSON.parse source-text access is missing: Node.js 22 or later is required');
}

requireSourceTextAccess();

/** Parsed JSON and the source text of each primitive member. */
export interface JsonWithLiterals {
  value: unknown;
  /** The literal a member was written as (`5.0`, `9223372036854775807`, `"x"`), or undefined for objects. */
  literalOf(holder: object, key: string): string | undefined;
}

/** Parses JSON text, keeping the source literal of each primitive by the object holding it. @throws SyntaxError */
export function parseJsonWithLiterals(text: string): JsonWithLiterals {
  const literals = new WeakMap<object, Map<string, string>>();
  const value: unknown = JSON.parse(
    text,
    function collectLiterals(this: unknown, key: string, member: unknown, context?: ReviverContext) {
      if (this !== null && typeof this === 'object' && context?.source !== undefined) {
        let members = literals.get(this);
        if (!members) {
          members = new Map();
          literals.set(this, members);
        }
        members.set(key, context.source);
      }
      return member;
    },
  );
  return { value, literalOf: (holder, key) => literals.get(holder)?.get(key) };
}

/** Whether a parsed JSON value is an object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A describing word for a JSON value in messages: `null`, `an array`, `an object`, `a string`, ... */
export function describeJsonType(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** The elements or members of valid JSON's top-level array or object, with their lines; repeats count. */
export function topLevelParts(text: string): { line: number; text: string }[] {
  const parts: { line: number; text: string }[] = [];
  let depth = 0;
  let start = -1;
  let startLine = 1;
  for (const { ch, index, line } of significantCharacters(text)) {
    if (depth === 1 && start === -1 && ch !== ',' && ch !== ']' && ch !== '}') {
      start = index;
      startLine = line;
    }
    if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') depth--;
    const partEnds = depth === 1 ? ch === ',' : depth === 0 && start !== -1;
    if (partEnds) {
      parts.push({ line: startLine, text: text.slice(start, index) });
      start = -1;
    }
  }
  return parts;
}

/** The characters of JSON text outside whitespace and strings (a string yields its opening quote), with lines. */
function* significantCharacters(text: string): Generator<{ ch: string; index: number; line: number }> {
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '\n' || (ch === '\r' && text[i + 1] !== '\n')) line++;
    else if (ch !== ' ' && ch !== '\t' && ch !== '\r') {
      yield { ch, index: i, line };
      if (ch === '"') i = closingQuote(text, i);
    }
  }
}

/** The index of the quote that closes the string opened at `open`. */
function closingQuote(text: string, open: number): number {
  let i = open + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i;
}
