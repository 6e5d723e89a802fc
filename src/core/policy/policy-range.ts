/**
 * A policy's `range` compiled to a matcher. It sits apart from tag ordering so that the schema can check a
 * range without importing the ordering, which reads the schema's types.
 */
import semver from "semver";
import { parseRange, type SemverRange } from "./semver-range.js";

/** A policy's range (Masterminds/semver syntax and meaning, see semver-range.ts). */
export function compileRange(range: string, includePrerelease: boolean): SemverRange {
  return parseRange(range, {
    includePrerelease,
    makeVersion: (version) => new semver.SemVer(version, { loose: false }),
  });
}
