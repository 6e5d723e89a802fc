import semver, { type SemVer } from "semver";
import { isValidTag } from "../image-ref.js";
import { compileGlob } from "../patterns/glob.js";
import { compileRange } from "./policy-range.js";
import type { Policy } from "./schema.js";
import { compileAllow, compileExtract } from "./tag-pattern.js";

/**
 * A policy compiled once for a whole tag list: the allow regex, the ignore globs and the semver
 * range are built here, never per tag (selection over 100,000 tags must stay linear and cheap).
 *
 * A tag's *value* is what the strategy compares: the tag itself, or what `extract` makes of the
 * `allow` match. Its *key* is the parsed value (a SemVer, a number, a string).
 */
export interface TagOrder<Key = unknown> {
  policy: Policy;
  /** The key of a tag the policy admits by name (valid, allowed, not ignored, in range); else undefined. */
  admit(tag: string): Key | undefined;
  /** The key of any tag the strategy can read (allow + extract + parse), ignoring `ignore` and range: used for the current tag. */
  read(tag: string): Key | undefined;
  /**
   * Compares by what the policy means by "newer": > 0 when `a` is newer than `b`, 0 when the
   * policy cannot tell them apart (`1.0.0+b1` vs `1.0.0+b2`, numerical `007` vs `7`).
   * Undefined for strategies that order by metadata (newest-build, digest).
   */
  compare?: (a: Key, b: Key) => number;
  /** Breaks ties of `compare` the same way whatever the input order: > 0 when `a` wins. */
  tieBreak(a: Key, b: Key, tagA: string, tagB: string): number;
  /** "semver ^1.0.0", "numerical asc", "newest-build", "digest of latest" — for reasons. */
  describe: string;
  /**
   * Semver only: a first look that decides most tags of a long list without constructing a key
   * (`admit` constructs a SemVer for every version-like tag). `NOT_ADMITTED`: `admit(tag)` is
   * undefined. `PLAIN`: `admit(tag)` is the plain version (no prerelease, no build) whose parts
   * were written to `main`. `ASK_ADMIT`: anything else (a prerelease the range may admit, build
   * metadata, a part too long to read exactly); `admit` decides.
   */
  triage?(tag: string, main: MainVersion): Triage;
}

/** The `X.Y.Z` of a plain version, written by `triage`. */
export interface MainVersion {
  major: number;
  minor: number;
  patch: number;
}

export const NOT_ADMITTED = 0;
export const PLAIN = 1;
export const ASK_ADMIT = 2;
export type Triage = typeof NOT_ADMITTED | typeof PLAIN | typeof ASK_ADMIT;

/** Tags whose `allow` result one compiled policy remembers (a registry lists at most 200,000). */
const MAX_REMEMBERED_VALUES = 200_000;

/** Compiles a policy into its tag order. The policy must have passed `policySchema`. */
export function compileTagOrder(policy: Policy): TagOrder {
  const allow = policy.allow !== undefined ? compileAllow(policy.allow) : undefined;
  const extract = policy.extract !== undefined ? compileExtract(policy.extract) : undefined;
  const ignore = policy.ignore.map(compileIgnore);

  /**
   * The value the strategy compares, or undefined when `allow` does not match. RE2 costs
   * microseconds per tag where a backtracking RegExp costs less, and a plan reads each tag more
   * than once (rankTags, then selectTag), so each tag is matched once per compiled policy.
   */
  const values = new Map<string, string | undefined>();
  const valueOf = (tag: string): string | undefined => {
    if (allow === undefined) return tag;
    if (values.has(tag)) return values.get(tag);
    let value: string | undefined;
    if (extract === undefined) value = allow.test(tag) ? tag : undefined;
    else {
      const match = allow.match(tag);
      value = match === undefined ? undefined : extract(match);
    }
    if (values.size >= MAX_REMEMBERED_VALUES) values.clear();
    values.set(tag, value);
    return value;
  };
  const ignored = (tag: string): boolean => ignore.some((glob) => glob(tag));
  const filters = describeFilters(policy);

  switch (policy.strategy) {
    case "semver": {
      const range = compileRange(policy.range ?? "*", policy.prerelease);
      const read = (tag: string): SemVer | undefined => {
        const value = valueOf(tag);
        return value === undefined ? undefined : parseSemver(value, policy.underscoreIsBuildMetadata);
      };
      return {
        policy,
        read,
        admit: (tag) => {
          if (!isValidTag(tag) || ignored(tag)) return undefined;
          const version = read(tag);
          return version !== undefined && range.test(version) ? version : undefined;
        },
        compare: (a, b) => (a as SemVer).compare(b as SemVer),
        // Build metadata does not order versions (semver.org §10), but a choice must not depend
        // on the registry's listing order: the higher build wins, then the most exact tag.
        tieBreak: (a, b, tagA, tagB) => (a as SemVer).compareBuild(b as SemVer) || preferExact(tagA, tagB),
        describe: `semver ${policy.range ?? "*"}${policy.prerelease ? " (prereleases admitted)" : ""}${filters}`,
        triage: (tag, main) => {
          const value = allow === undefined ? tag : valueOf(tag);
          if (value === undefined) return NOT_ADMITTED;
          const end = scanMain(value, main);
          if (end === NOT_A_VERSION) return NOT_ADMITTED;
          if (end === TOO_LONG) return ASK_ADMIT;
          if (end < value.length) {
            // `-` after X.Y.Z starts a prerelease (or the value is no version): either way a range
            // that admits no prerelease does not admit it. `_` (build metadata or not) and the rest: admit.
            return value.charCodeAt(end) === 45 /* - */ && !range.admitsPrerelease ? NOT_ADMITTED : ASK_ADMIT;
          }
          // Cheapest test first; each is a condition of `admit`. Without `allow` the tag is the
          // value, `v?X.Y.Z` of at most 48 characters: a valid OCI tag.
          if (!range.testPlain(main.major, main.minor, main.patch)) return NOT_ADMITTED;
          if (allow !== undefined && !isValidTag(tag)) return NOT_ADMITTED;
          return ignored(tag) ? NOT_ADMITTED : PLAIN;
        },
      };
    }
    case "numerical":
    case "alphabetical": {
      const parse = policy.strategy === "numerical" ? parseDecimal : (value: string) => value;
      const ascending = policy.strategy === "numerical" ? compareDecimals : compareBytes;
      const direction = policy.order === "asc" ? 1 : -1;
      const read = (tag: string) => {
        const value = valueOf(tag);
        return value === undefined ? undefined : parse(value);
      };
      return {
        policy,
        read,
        admit: (tag) => (isValidTag(tag) && !ignored(tag) ? read(tag) : undefined),
        compare: (a, b) => direction * ascending(a as never, b as never),
        tieBreak: (_a, _b, tagA, tagB) => preferExact(tagA, tagB),
        describe: `${policy.strategy} ${policy.order}${filters}`,
      };
    }
    case "newest-build": {
      const read = (tag: string) => (valueOf(tag) === undefined ? undefined : tag);
      return {
        policy,
        read,
        admit: (tag) => (isValidTag(tag) && !ignored(tag) ? read(tag) : undefined),
        // Argo CD Image Updater, update-strategies.md: several tags built at the same time are
        // sorted by name and the lexically highest is picked.
        tieBreak: (_a, _b, tagA, tagB) => compareBytes(tagA, tagB),
        describe: `newest-build${filters}`,
      };
    }
    case "digest": {
      const moving = policy.tag!;
      return {
        policy,
        read: (tag) => (tag === moving ? tag : undefined),
        admit: (tag) =>
          tag === moving && isValidTag(tag) && !ignored(tag) && valueOf(tag) !== undefined ? tag : undefined,
        tieBreak: (_a, _b, tagA, tagB) => compareBytes(tagA, tagB),
        describe: `digest of ${moving}`,
      };
    }
  }
}

function describeFilters(policy: Policy): string {
  let text = "";
  if (policy.allow !== undefined) text += ` matching /${policy.allow}/`;
  if (policy.extract !== undefined) text += ` by ${policy.extract}`;
  return text;
}

/**
 * Strict `X.Y.Z[-pre][+build]`, with an optional `v` prefix (Argo CD Image Updater treats `v1.2.3`
 * and `1.2.3` alike). Not the loose or coerced forms: a numeric git SHA or a date such as `20240101`
 * must not read as version 20240101.0.0 and outrank every release (https://github.com/fluxcd/flux/issues/2729).
 *
 * OCI tags cannot contain `+`. Some publishers write build metadata as `_` (Helm's convention for
 * chart versions in OCI registries), but most `_` tags are other things (`17.0.10_7-jre`, an
 * Eclipse Temurin build and flavour): Flux, Argo CD Image Updater and Kargo read them as no
 * version at all and ignore them. So does Ferry, unless the policy opts in with
 * `underscoreIsBuildMetadata`: then the first `_` reads as `+`.
 */
export function parseSemver(value: string, underscoreIsBuildMetadata = false): SemVer | undefined {
  // A cheap first check skips most non-versions without constructing a SemVer.
  const first = value.charCodeAt(0);
  if (!(first === 118 /* v */ || (first >= 48 && first <= 57))) return undefined;
  const text = underscoreIsBuildMetadata && !value.includes("+") ? value.replace("_", "+") : value;
  try {
    return new semver.SemVer(text, { loose: false });
  } catch {
    return undefined;
  }
}

/** `scanMain`: the value does not start with `v?X.Y.Z`, so it is no version (strict node-semver). */
const NOT_A_VERSION = -1;
/** `scanMain`: a part has more than 15 digits, past what a double holds exactly. */
const TOO_LONG = -2;

/**
 * Reads the `v?X.Y.Z` a strict version starts with (each part `0|[1-9][0-9]*`, node-semver's
 * MAINVERSION) into `main`, by one scan and without a RegExp or a SemVer: the index after Z, or
 * NOT_A_VERSION (then `parseSemver` is undefined too), or TOO_LONG. What follows Z is the caller's.
 */
function scanMain(value: string, main: MainVersion): number {
  const length = value.length;
  let index = value.charCodeAt(0) === 118 /* v */ ? 1 : 0;
  for (let part = 0; part < 3; part++) {
    if (part > 0) {
      if (index >= length || value.charCodeAt(index) !== 46 /* . */) return NOT_A_VERSION;
      index++;
    }
    const start = index;
    let number = 0;
    while (index < length) {
      const digit = value.charCodeAt(index) - 48;
      if (digit < 0 || digit > 9) break;
      number = number * 10 + digit;
      index++;
    }
    const digits = index - start;
    if (digits === 0) return NOT_A_VERSION;
    // A leading zero is a part of its own (`0`), so a digit after it fails the match.
    if (digits > 1 && value.charCodeAt(start) === 48 /* 0 */) return NOT_A_VERSION;
    if (digits > 15) return TOO_LONG;
    if (part === 0) main.major = number;
    else if (part === 1) main.minor = number;
    else main.patch = number;
  }
  return index;
}

/** An exact decimal: sign, integer digits without leading zeros, fraction digits without trailing zeros. */
export interface Decimal {
  negative: boolean;
  integer: string;
  fraction: string;
}

const DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?$/;
const PLAIN_INTEGER = /^(?:0|[1-9]\d*)$/;

/**
 * Reads a decimal number exactly. Flux's numerical policy uses Go's ParseFloat, which loses
 * precision past 2^53 (long build numbers, nanosecond timestamps); comparing digit strings keeps
 * the order exact. Exponents, `inf` and `NaN` are not build numbers and are not read.
 */
export function parseDecimal(value: string): Decimal | undefined {
  // Fast path for the common plain integer without leading zeros (build numbers, timestamps).
  if (PLAIN_INTEGER.test(value)) return { negative: false, integer: value, fraction: "" };
  const match = DECIMAL.exec(value);
  if (match === null) return undefined;
  const integer = match[2]!.replace(/^0+(?=\d)/, "");
  const fraction = (match[3] ?? "").replace(/0+$/, "");
  const zero = integer === "0" && fraction === "";
  return { negative: match[1] === "-" && !zero, integer, fraction };
}

export function compareDecimals(a: Decimal, b: Decimal): number {
  if (a.negative !== b.negative) return a.negative ? -1 : 1;
  const sign = a.negative ? -1 : 1;
  if (a.integer.length !== b.integer.length) return sign * (a.integer.length - b.integer.length);
  return sign * (compareBytes(a.integer, b.integer) || compareBytes(a.fraction, b.fraction));
}

/**
 * Between two tags with the same value (`1.2.3` and `1.2.3-debug` both extracting 1.2.3; `v1.0.0`
 * and `1.0.0`; numerical `007` and `7`): > 0 when `a` wins. The shorter tag wins, the one the
 * pattern matches most exactly, with the fewest characters beyond the value; between tags of the
 * same length, the byte-wise higher one. Flux keeps whichever its registry listed last
 * (fluxcd/image-reflector-controller internal/policy/filter.go maps each value to one tag); Ferry's
 * choice never depends on the listing order.
 */
export function preferExact(tagA: string, tagB: string): number {
  return tagB.length - tagA.length || compareBytes(tagA, tagB);
}

/** Byte-wise order (Go's sort.Strings, which Flux's alphabetical policy uses); never locale-aware. */
export function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A glob without any special character: it names one tag. */
const LITERAL_TAG = /^[A-Za-z0-9._-]*$/;

/**
 * An `ignore` glob compiled once, on the one pattern engine (src/core/patterns: RE2, linear in
 * the tag's length whatever the glob). A glob that names one tag is compared as a string.
 */
export function compileIgnore(pattern: string): (tag: string) => boolean {
  if (LITERAL_TAG.test(pattern)) return (tag) => tag === pattern;
  const glob = compileGlob(pattern, "glob");
  return (tag) => glob.test(tag);
}
