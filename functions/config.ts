/**
 * Reads a required environment variable once.
 *
 * @throws Error "X environment variable is not set" when it is missing or empty.
 */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value.length === 0) throw new Error(`${name} environment variable is not set`);
  return value;
}

/** Reads an optional positive integer environment variable, with a default. */
export function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.length === 0) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`${name} environment variable must be a non-negative integer`);
  return value;
}

/** Builds a value on first use and returns the same one after: module-scope dependencies that tests can bypass. */
export function once<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => {
    built ??= { value: build() };
    return built.value;
  };
}
