/** Headers every response carries: inventory figures change with every update, so nothing may cache them. */
export const COMMON_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'application/json',
  'Cache-Control': 'no-store',
};
