import { compileRE2 } from "../patterns/engine.js";
import type { SemVer } from "semver";

/**
 * Semver ranges as Flux (`policy.semver.range`), Argo CD Image Updater (the constraint after the
 * image name) and Kargo (`constraint`/`semverConstraint`) read them: all three hand the string
 * to Masterminds/semver v3 `NewConstraint` and test versions with `Check`. This is a port of
 * that code (github.com/Masterminds/semver, constraints.go), so a range copied from their docs
 * admits the same versions:
 *
 * - `,` or whitespace joins constraints with AND, `||` joins groups with OR;
 * - operators `=`, `!=`, `>`, `<`, `>=`/`=>`, `<=`/`=<`, `~`/`~>`, `^`, none (= `=`);
 * - `x`, `X` or `*` in any part, or a missing part, is a wildcard (`1.2.x`, `2`, `^1.x`, `*`);
 * - `A - B` is `>= A, <= B`;
 * - a version with a prerelease is admitted only when the policy sets `prerelease: true`
 *   (Masterminds' `IncludePrerelease`) or when a constraint of the same OR group names a
 *   prerelease (`^1.x-0`, `2.x-0`, `>=1.0.0-0`); then every prerelease within the bounds
 *   counts, not only those of the named `X.Y.Z` as npm's semver would have it.
 *
 * Versions themselves are parsed elsewhere (strict `X.Y.Z`, see `parseSemver`); comparison is
 * node-semver's, which orders prereleases as semver.org §11 does, as Masterminds does.
 */

/** Longest range accepted: bounds parsing before any work starts. */
export const MAX_RANGE_LENGTH = 256;

export class RangeSyntaxError extends Error {}

export interface SemverRange {
  /** Does the version satisfy the range? */
  test(version: SemVer): boolean;
  /**
   * Does the plain version `major.minor.patch` (no prerelease, no build) satisfy the range? The
   * same answer as `test` of that SemVer, without constructing one: a tag list's fast path.
   */
  testPlain(major: number, minor: number, patch: number): boolean;
  /** Whether any version with a prerelease can satisfy the range (`prerelease: true`, or a group naming one). */
  admitsPrerelease: boolean;
}

/** What the constraint checks read of a version: a SemVer, or the plain version of `testPlain`. */
type Version = Pick<SemVer, "major" | "minor" | "patch" | "prerelease" | "compare" | "comparePre">;

/**
 * A plain `X.Y.Z` as the checks read it, compared as node-semver compares a SemVer without a
 * prerelease (`compareMain || comparePre`). One per range, overwritten by each `testPlain`.
 */
class PlainVersion implements Version {
  major = 0;
  minor = 0;
  patch = 0;
  readonly prerelease: (string | number)[] = [];

  compare(other: SemVer): 1 | 0 | -1 {
    if (this.major !== other.major) return this.major < other.major ? -1 : 1;
    if (this.minor !== other.minor) return this.minor < other.minor ? -1 : 1;
    if (this.patch !== other.patch) return this.patch < other.patch ? -1 : 1;
    return this.comparePre(other);
  }

  /** Not having a prerelease is greater than having one (semver.org §11). */
  comparePre(other: SemVer): 1 | 0 | -1 {
    return other.prerelease.length > 0 ? 1 : 0;
  }
}

// The patterns of constraints.go, compiled with RE2 like Go's regexp: a range is config text,
// and these nested, alternating quantifiers must not backtrack on it.
const CV = String.raw`v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?`;
const OPS = String.raw`=||!=|>|<|>=|=>|<=|=<|~|~>|\^`;
// Compiled at the first range parsed, not when the module loads: a command that parses no range
// does not pay for four automata.
const lazyRE2 = (source: string): (() => ReturnType<typeof compileRE2>) => {
  let re: ReturnType<typeof compileRE2> | undefined;
  return () => (re ??= compileRE2(source));
};
const CONSTRAINT = lazyRE2(String.raw`^\s*(${OPS})\s*(${CV})\s*$`);
const CONSTRAINT_RANGE = lazyRE2(String.raw`\s*(${CV})\s+-\s+(${CV})\s*`);
const FIND_CONSTRAINT = lazyRE2(String.raw`(${OPS})\s*(${CV})`);
const VALID_CONSTRAINT = lazyRE2(
  String.raw`^(\s*(${OPS})\s*(${CV})\s*)((?:\s+|,\s*)(${OPS})\s*(${CV})\s*)*$`,
);

type Operator = "" | "=" | "!=" | ">" | "<" | ">=" | "=>" | "<=" | "=<" | "~" | "~>" | "^";

interface Constraint {
  /** The version compared against, wildcards zeroed (`1.x` → 1.0.0). */
  con: SemVer;
  /** As written, for messages. */
  orig: string;
  op: Operator;
  dirty: boolean;
  minorDirty: boolean;
  patchDirty: boolean;
}

/**
 * Parses a Masterminds/semver constraint string. `makeVersion` builds a SemVer from a full
 * `X.Y.Z[-pre][+build]` (node-semver, strict); it throws for anything else. Throws
 * RangeSyntaxError with Masterminds' message ("improper constraint: …").
 */
export function parseRange(
  text: string,
  options: { includePrerelease: boolean; makeVersion: (version: string) => SemVer },
): SemverRange {
  if (text.length > MAX_RANGE_LENGTH)
    throw new RangeSyntaxError(`range is ${text.length} characters long, over the ${MAX_RANGE_LENGTH} limit`);
  const groups: { constraints: Constraint[]; hasPre: boolean }[] = [];
  // The default range (a policy without one) is what the patterns below make of "*", without
  // compiling them: one wildcard constraint, no prerelease (a test holds it to the general path).
  if (text === "*") {
    const con = options.makeVersion("0.0.0");
    const wildcard: Constraint = {
      con,
      orig: "*",
      op: "",
      dirty: true,
      minorDirty: false,
      patchDirty: false,
    };
    groups.push({ constraints: [wildcard], hasPre: false });
  }
  for (const segment of text === "*" ? [] : rewriteRange(text).split("||")) {
    if (!VALID_CONSTRAINT().test(segment))
      throw new RangeSyntaxError(`improper constraint: ${quote(segment)}`);
    const found = [...FIND_CONSTRAINT().matchAll(segment)].map((match) => match[0] as string);
    const constraints = (found.length > 0 ? found : [segment]).map((part) =>
      parseConstraint(part, options.makeVersion),
    );
    groups.push({ constraints, hasPre: constraints.some((c) => c.con.prerelease.length > 0) });
  }
  // Plain loops, no closure per call: a tag list's fast path tests every plain version.
  const test = (version: Version) => {
    for (const { constraints, hasPre } of groups) {
      const includePre = options.includePrerelease || hasPre;
      let all = true;
      for (const constraint of constraints) {
        if (!check(version, constraint, includePre)) {
          all = false;
          break;
        }
      }
      if (all) return true;
    }
    return false;
  };
  const plain = new PlainVersion();
  return {
    test,
    testPlain: (major, minor, patch) => {
      plain.major = major;
      plain.minor = minor;
      plain.patch = patch;
      return test(plain);
    },
    admitsPrerelease: options.includePrerelease || groups.some((group) => group.hasPre),
  };
}

/** `A - B` becomes `>= A, <= B ` (constraints.go rewriteRange), before splitting on `||`. */
function rewriteRange(text: string): string {
  let out = text;
  for (const match of CONSTRAINT_RANGE().matchAll(text)) {
    out = out.replace(match[0] as string, () => `>= ${match[1] as string}, <= ${match[11] as string} `);
  }
  return out;
}

function isX(part: string): boolean {
  return part === "x" || part === "X" || part === "*";
}

function parseConstraint(text: string, makeVersion: (version: string) => SemVer): Constraint {
  const m = CONSTRAINT().exec(text) as (string | undefined)[] | null;
  if (m === null) throw new RangeSyntaxError(`improper constraint: ${quote(text)}`);
  const [op, orig, major, minor = "", patch = "", pre = ""] = [m[1]!, m[2]!, m[3]!, m[4], m[5], m[6]];
  let version = orig;
  let dirty = false;
  let minorDirty = false;
  let patchDirty = false;
  if (isX(major)) {
    version = `0.0.0${pre}`;
    dirty = true;
  } else if (minor === "" || isX(minor.slice(1))) {
    minorDirty = dirty = true;
    version = `${major}.0.0${pre}`;
  } else if (patch === "" || isX(patch.slice(1))) {
    patchDirty = dirty = true;
    version = `${major}${minor}.0${pre}`;
  }
  let con: SemVer;
  try {
    con = makeVersion(version);
  } catch {
    throw new RangeSyntaxError(`improper constraint: ${quote(text.trim())}`);
  }
  return { con, orig, op: op as Operator, dirty, minorDirty, patchDirty };
}

function quote(text: string): string {
  return JSON.stringify(text);
}

/** constraints.go's constraint functions, one per operator. */
function check(v: Version, c: Constraint, includePre: boolean): boolean {
  // The existence of prereleases is decided per OR group and passed in.
  if (v.prerelease.length > 0 && !includePre) return false;
  switch (c.op) {
    case "":
    case "=":
      return c.dirty ? tilde(v, c) : v.compare(c.con) === 0;
    case "!=":
      return notEqual(v, c);
    case ">":
      return greaterThan(v, c);
    case "<":
      return v.compare(c.con) < 0;
    case ">=":
    case "=>":
      return v.compare(c.con) >= 0;
    case "<=":
    case "=<":
      return lessThanOrEqual(v, c);
    case "~":
    case "~>":
      return tilde(v, c);
    case "^":
      return caret(v, c);
  }
}

function notEqual(v: Version, c: Constraint): boolean {
  if (c.dirty) {
    if (c.con.major !== v.major) return true;
    if (c.con.minor !== v.minor && !c.minorDirty) return true;
    if (c.minorDirty) return false;
    if (c.con.patch !== v.patch && !c.patchDirty) return true;
    if (c.patchDirty) {
      if (v.prerelease.length > 0 || c.con.prerelease.length > 0) return v.comparePre(c.con) !== 0;
      return false;
    }
  }
  return v.compare(c.con) !== 0;
}

function greaterThan(v: Version, c: Constraint): boolean {
  if (!c.dirty) return v.compare(c.con) === 1;
  if (v.major > c.con.major) return true;
  if (v.major < c.con.major) return false;
  // `>11` needs 12 or higher; `>11.1` needs 11.2 or higher.
  if (c.minorDirty) return false;
  if (c.patchDirty) return v.minor > c.con.minor;
  return v.compare(c.con) === 1;
}

function lessThanOrEqual(v: Version, c: Constraint): boolean {
  if (!c.dirty) return v.compare(c.con) <= 0;
  if (v.major > c.con.major) return false;
  if (v.major === c.con.major && v.minor > c.con.minor && !c.minorDirty) return false;
  return true;
}

// ~2, ~2.x --> >=2.0.0 <3.0.0; ~1.2, ~1.2.3 --> >=1.2.x <1.3.0; ~0.0.0 --> any.
function tilde(v: Version, c: Constraint): boolean {
  if (v.compare(c.con) < 0) return false;
  if (c.con.major === 0 && c.con.minor === 0 && c.con.patch === 0 && !c.minorDirty && !c.patchDirty)
    return true;
  if (v.major !== c.con.major) return false;
  if (v.minor !== c.con.minor && !c.minorDirty) return false;
  return true;
}

// ^1.2.3 --> >=1.2.3 <2.0.0; ^0.2.3 --> >=0.2.3 <0.3.0; ^0.0.3 --> =0.0.3; ^0.0 --> <0.1.0; ^0 --> <1.0.0.
function caret(v: Version, c: Constraint): boolean {
  if (v.compare(c.con) < 0) return false;
  if (c.con.major > 0 || c.minorDirty) return v.major === c.con.major;
  if (v.major > 0) return false;
  if (c.con.minor > 0 || c.patchDirty) return v.minor === c.con.minor;
  if (v.minor > 0) return false;
  return v.patch === c.con.patch;
}
