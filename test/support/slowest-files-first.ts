/**
 * The order `npm test` starts its files in (docs/testing.md "Test suite timing"). Vitest runs the
 * files it has timed before longest first, and on a clean clone (CI, a new machine: no timings
 * yet) the largest files first. A small file that runs a shared suite defeats the second rule:
 * `test/sandbox/cluster/scan-fleet.test.ts` is 1 KB, so it started last and ran alone for its
 * 200 s at the end of a clean-clone run. The files listed here start first either way.
 */
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Files that take far longer than their size says, slowest first (paths from the repo's root). */
export const LONG_RUNNING_FILES: readonly string[] = [
  // Three `ferry serve` processes on their own wall clocks, waiting out real Lease durations.
  "test/sandbox/cluster/scan-fleet.test.ts",
];

/** `items` in their order, except that those whose path is in `first` come before all others, in `first`'s order. */
export function withLongRunningFirst<T>(
  items: readonly T[],
  pathOf: (item: T) => string,
  first: readonly string[] = LONG_RUNNING_FILES,
): T[] {
  const rank = (item: T) => {
    const index = first.indexOf(pathOf(item));
    return index === -1 ? first.length : index;
  };
  // Array.prototype.sort is stable: every other file keeps Vitest's order.
  return [...items].sort((a, b) => rank(a) - rank(b));
}

export class SlowestFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    return withLongRunningFirst(await super.sort(files), (file) =>
      relative(root, file.moduleId).split("\\").join("/"),
    );
  }
}
