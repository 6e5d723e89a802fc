import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parsePolicy } from "../../../src/core/policy/parse-policy.js";
import {
  selectTag,
  selectTagGeneral,
  type SelectOptions,
  type TagCandidate,
} from "../../../src/core/policy/select-tag.js";
import type { PolicyInput } from "../../../src/core/policy/schema.js";
import { compileTagOrder, NOT_ADMITTED, PLAIN } from "../../../src/core/policy/tag-order.js";

/**
 * selectTag's fast path for semver policies without metadata (tag-order `triage`, select-tag
 * `bestByName`) against the general loop (`selectTagGeneral`): the same Selection, reason and
 * notice included, over random tag lists heavy in the cases the fast path reads itself or hands
 * back (v prefixes, leading zeros, prereleases valid and not, `_` builds, parts past 15 digits,
 * extra parts, non-versions, repeats).
 */

const NOW = new Date("2024-06-01T12:00:00Z");
const RUNS = { numRuns: 600, seed: 20261203 };

// Small pools make ties and repeats (1.0.0 vs v1.0.0 vs 1.0.0_b1, a tag listed twice) frequent.
const number = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 4 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom("00", "01", "10", "007") },
  { weight: 1, arbitrary: fc.constantFrom("999999999999999", "1000000000000000", "9007199254740993") },
);
const prerelease = fc.constantFrom(
  "-rc.1",
  "-rc.2",
  "-alpha",
  "-0",
  "-01",
  "-rc..1",
  "-",
  "-x-y",
  "-beta.3.z",
);
const suffix = fc.constantFrom("_b1", "_b2", "_build.10", "_", "_b_c", ".4", "x", "-rc.1_b1", "..", "v");
const versionTag = fc
  .tuple(
    fc.constantFrom("", "", "v", "V", "vv"),
    number,
    number,
    number,
    fc.option(prerelease, { nil: undefined, freq: 3 }),
    fc.option(suffix, { nil: undefined, freq: 4 }),
  )
  .map(([v, a, b, c, pre, tail]) => `${v}${a}.${b}.${c}${pre ?? ""}${tail ?? ""}`);
const tag = fc.oneof(
  { weight: 10, arbitrary: versionTag },
  {
    weight: 2,
    arbitrary: fc.constantFrom("latest", "1.2", "v2", "1", "1.2.", ".1.2.3", "abc123", "1a2b3c4", "-bad", ""),
  },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,8}$/) },
);
const candidates = fc.array(fc.tuple(tag, fc.boolean()), { maxLength: 40 }).map((list) =>
  list.map(([name, withDigest], index): TagCandidate =>
    // A digest on some listings tells which listing of a repeated tag is returned.
    withDigest ? { tag: name, digest: `sha256:${String(index).padStart(64, "0")}` } : { tag: name },
  ),
);

const policy: fc.Arbitrary<PolicyInput> = fc
  .record(
    {
      range: fc.constantFrom(
        "*",
        "^1.0.0",
        ">=2.0.0 <9.0.0",
        "~3.4",
        "1.x || 4.x",
        ">=1.0, !=1.5.0",
        "^1.x-0",
        "2.x-0 || >= 3",
        "=1.1.1",
        ">1",
        "<=2.1",
        "!=1.x",
        "1.0.0 - 3.0.0",
        ">= 1.0.0-rc.1",
        "~1.2.0-0",
      ),
      prerelease: fc.boolean(),
      underscoreIsBuildMetadata: fc.boolean(),
      ignore: fc.constantFrom(["*-rc.*"], ["v1.*"], ["1.1.1"], ["*_b?", "v*"]),
      allow: fc.constantFrom("^v?\\d+\\.\\d+\\.\\d+$", "^1\\.", "^v?(?P<v>\\d+\\.\\d+\\.\\d+)"),
      allowDowngrade: fc.boolean(),
    },
    { requiredKeys: [] },
  )
  .map((input) => {
    // extract needs an allow with the named group.
    if (input.allow === "^v?(?P<v>\\d+\\.\\d+\\.\\d+)") return { ...input, extract: "$v" } as PolicyInput;
    return input as PolicyInput;
  });

const current = fc.option(fc.oneof(versionTag, fc.constantFrom("latest", "2.0.0", "v1.1.1", "3.0.0-rc.1")), {
  nil: undefined,
  freq: 2,
});

describe("selectTag's fast path chooses what the general loop chooses", () => {
  it("the same Selection for random tag lists, semver policies and running tags", () => {
    fc.assert(
      fc.property(candidates, policy, current, (list, input, running) => {
        const options: SelectOptions = { policy: parsePolicy(input), now: NOW };
        if (running !== undefined) options.current = running;
        // A fresh policy object for each: nothing compiled or remembered is shared.
        const reference: SelectOptions = { ...options, policy: parsePolicy(input) };
        expect(selectTag(list, options)).toEqual(selectTagGeneral(list, reference));
      }),
      RUNS,
    );
  });

  it("triage says NOT_ADMITTED exactly when admit says undefined, and PLAIN only for the plain versions admit returns", () => {
    fc.assert(
      fc.property(fc.array(tag, { maxLength: 20 }), policy, (tags, input) => {
        const order = compileTagOrder(parsePolicy(input));
        const main = { major: -1, minor: -1, patch: -1 };
        for (const name of tags) {
          const verdict = order.triage!(name, main);
          const key = order.admit(name) as
            | { major: number; minor: number; patch: number; prerelease: unknown[]; build: unknown[] }
            | undefined;
          if (verdict === NOT_ADMITTED) expect(key, name).toBeUndefined();
          if (verdict === PLAIN) {
            expect(key, name).toBeDefined();
            expect({ ...main, prerelease: [], build: [] }).toEqual({
              major: key!.major,
              minor: key!.minor,
              patch: key!.patch,
              prerelease: key!.prerelease,
              build: key!.build,
            });
          }
        }
      }),
      RUNS,
    );
  });

  it("a long list in every order: ascending, descending, shuffled, with the best repeated", () => {
    const tags: string[] = [];
    for (let major = 0; major < 5; major++)
      for (let minor = 0; minor < 12; minor++)
        for (let patch = 0; patch < 12; patch++) {
          tags.push(
            `${major}.${minor}.${patch}`,
            `v${major}.${minor}.${patch}`,
            `${major}.${minor}.${patch}-rc.1`,
          );
        }
    const shuffled = [...tags].sort((a, b) => hash(a) - hash(b) || (a < b ? -1 : 1));
    for (const list of [tags, [...tags].reverse(), shuffled, [...shuffled, ...shuffled]]) {
      for (const input of [
        { range: "^3.0.0" },
        { range: "*", prerelease: true },
        { range: "<4.11.11" },
      ] as PolicyInput[]) {
        for (const running of [undefined, "3.5.5", "v4.11.11", "9.9.9", "latest"]) {
          const candidates = list.map((name) => ({ tag: name }));
          const options: SelectOptions = { policy: parsePolicy(input), now: NOW };
          if (running !== undefined) options.current = running;
          expect(selectTag(candidates, options)).toEqual(
            selectTagGeneral(candidates, { ...options, policy: parsePolicy(input) }),
          );
        }
      }
    }
  });
});

function hash(text: string): number {
  let value = 2166136261;
  for (let index = 0; index < text.length; index++)
    value = Math.imul(value ^ text.charCodeAt(index), 16777619);
  return value >>> 0;
}
