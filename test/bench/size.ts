/**
 * `npm run bench -- --quick`: every group at small sizes, so CI proves each figure can still be
 * measured in a couple of minutes; the figures' names carry the sizes they were measured at
 * (docs/testing.md "Bench"). Quick figures are not the README's.
 */
export const quick = process.argv.includes("--quick");

/** `full` in a normal run, `small` in a quick one. */
export function sized<T>(full: T, small: T): T {
  return quick ? small : full;
}
