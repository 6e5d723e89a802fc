import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parsePolicy } from "../../../src/core/policy/parse-policy.js";
import { isNewer, rankTags, selectTag, type TagCandidate } from "../../../src/core/policy/select-tag.js";
import type { PolicyInput } from "../../../src/core/policy/schema.js";

const NOW = new Date("2024-06-01T12:00:00Z");
const RUNS = { numRuns: 300, seed: 20240601 };

// Small number pools make ties (1.0.0 vs v1.0.0, 007 vs 7, equal builds) frequent.
const part = fc.integer({ min: 0, max: 12 });
const semverTag = fc
  .tuple(
    fc.boolean(),
    part,
    part,
    part,
    fc.option(fc.constantFrom("rc.1", "rc.2", "alpha", "beta.3"), { nil: undefined }),
    fc.option(fc.constantFrom("b1", "b2", "build.10"), { nil: undefined }),
  )
  .map(
    ([v, major, minor, patch, pre, build]) =>
      `${v ? "v" : ""}${major}.${minor}.${patch}${pre ? `-${pre}` : ""}${build ? `_${build}` : ""}`,
  );
const numberTag = fc
  .tuple(
    fc.constantFrom("", "0", "00"),
    fc.integer({ min: 0, max: 300 }),
    fc.option(fc.integer({ min: 0, max: 99 }), { nil: undefined }),
  )
  .map(([zeros, whole, fraction]) => `${zeros}${whole}${fraction !== undefined ? `.${fraction}` : ""}`);
const wordTag = fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,8}$/);
const anyTag = fc.oneof(
  semverTag,
  numberTag,
  wordTag,
  fc.constantFrom("latest", "main", "1.2", "v2", "-bad", "a+b", ""),
);
const tagList = fc.array(anyTag, { maxLength: 40 });

const namePolicy: fc.Arbitrary<PolicyInput> = fc
  .oneof(
    fc.record(
      {
        range: fc.constantFrom(
          "*",
          "^1.0.0",
          ">=2.0.0 <9.0.0",
          "~3.4",
          "1.x || 4.x",
          ">=1.0, !=1.5.0",
          "^1.x-0",
          "2.x-0 || >= 9",
        ),
        prerelease: fc.boolean(),
        underscoreIsBuildMetadata: fc.boolean(),
      },
      { requiredKeys: [] },
    ),
    fc.record({
      strategy: fc.constant("numerical" as const),
      order: fc.constantFrom("asc" as const, "desc" as const),
    }),
    fc.record({
      strategy: fc.constant("alphabetical" as const),
      order: fc.constantFrom("asc" as const, "desc" as const),
    }),
    fc.record({
      strategy: fc.constant("numerical" as const),
      allow: fc.constant("^0*(?<n>\\d+)"),
      extract: fc.constant("$n"),
    }),
    fc.record({ ignore: fc.constant(["*-rc.*", "v1.*"]), range: fc.constant("*") }),
    fc.record({
      allow: fc.constant("^v?(?P<v>\\d+\\.\\d+\\.\\d+)"),
      extract: fc.constantFrom("$v", "$1"),
    }),
  )
  .map((input) => input as PolicyInput);

function select(policyInput: PolicyInput, list: string[], current?: string) {
  const options: Parameters<typeof selectTag>[1] = { policy: parsePolicy(policyInput), now: NOW };
  if (current !== undefined) options.current = current;
  return selectTag(
    list.map((tag) => ({ tag })),
    options,
  );
}

describe("selectTag properties", () => {
  it("chooses an admitted tag, and no admitted tag is newer than the chosen one", () => {
    fc.assert(
      fc.property(namePolicy, tagList, (input, list) => {
        const policy = parsePolicy(input);
        const selection = selectTag(
          list.map((tag) => ({ tag })),
          { policy, now: NOW },
        );
        const admitted = rankTags(list, policy);
        if (selection.kind === "none") return admitted.length === 0;
        expect(admitted).toContain(selection.tag);
        for (const tag of admitted) expect(isNewer(tag, selection.tag, policy)).toBe(false);
        return true;
      }),
      RUNS,
    );
  });

  it("agrees with rankTags: the chosen tag is the first ranked one", () => {
    fc.assert(
      fc.property(namePolicy, tagList, fc.option(anyTag, { nil: undefined }), (input, list, current) => {
        const policy = parsePolicy(input);
        const selection = select(input, list, current);
        const ranked = rankTags(list, policy, current);
        expect(selection.kind === "selected" ? selection.tag : undefined).toBe(ranked[0]);
      }),
      RUNS,
    );
  });

  it("never goes below or back to the current tag when the policy can read it", () => {
    fc.assert(
      fc.property(namePolicy, tagList, anyTag, (input, list, current) => {
        const policy = parsePolicy(input);
        const selection = select(input, list, current);
        const readable = isNewer(current, current, policy) !== undefined;
        if (selection.kind === "selected" && readable)
          expect(isNewer(selection.tag, current, policy)).toBe(true);
      }),
      RUNS,
    );
  });

  it("does not depend on the order of the tag list", () => {
    fc.assert(
      fc.property(
        namePolicy,
        tagList.chain((list) =>
          fc.tuple(
            fc.constant(list),
            fc.shuffledSubarray(list, { minLength: list.length, maxLength: list.length }),
          ),
        ),
        fc.option(anyTag, { nil: undefined }),
        (input, [list, shuffled], current) => {
          expect(select(input, shuffled, current)).toEqual(select(input, list, current));
        },
      ),
      RUNS,
    );
  });

  it("between tags that extract the same value, chooses the shortest, then the byte-wise highest, in any order", () => {
    const variant = fc
      .tuple(
        fc.constantFrom("", "v"),
        fc.constantFrom("1.2.3", "1.2.4"),
        fc.constantFrom("", "-debug", "-slim", "-r1", "-alpine3.19"),
      )
      .map(([v, version, suffix]) => `${v}${version}${suffix}`);
    const policy = parsePolicy({ allow: "^v?(?P<v>\\d+\\.\\d+\\.\\d+)", extract: "$v" });
    fc.assert(
      fc.property(
        fc
          .uniqueArray(variant, { minLength: 1, maxLength: 12 })
          .chain((list) =>
            fc.tuple(
              fc.constant(list),
              fc.shuffledSubarray(list, { minLength: list.length, maxLength: list.length }),
            ),
          ),
        ([list, shuffled]) => {
          const selection = selectTag(
            list.map((tag) => ({ tag })),
            { policy, now: NOW },
          );
          expect(selection.kind).toBe("selected");
          if (selection.kind !== "selected") return;
          const highest = list.some((tag) => tag.replace(/^v/, "").startsWith("1.2.4")) ? "1.2.4" : "1.2.3";
          const ties = list.filter((tag) => tag.replace(/^v/, "").startsWith(highest));
          const expected = [...ties].sort((a, b) => a.length - b.length || (a < b ? 1 : a > b ? -1 : 0))[0];
          expect(selection.tag).toBe(expected);
          expect(
            selectTag(
              shuffled.map((tag) => ({ tag })),
              { policy, now: NOW },
            ),
          ).toEqual(selection);
        },
      ),
      RUNS,
    );
  });

  it("chooses the most recently built admitted tag under newest-build, in any order", () => {
    const build = fc.record({
      tag: fc.constantFrom("a", "b", "c", "d", "e", "latest"),
      created: fc.integer({ min: 0, max: 5 }).map((h) => new Date(NOW.getTime() - h * 3_600_000)),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(build, { selector: (entry) => entry.tag, maxLength: 6 }),
        (list: TagCandidate[]) => {
          const policy = parsePolicy({ strategy: "newest-build", ignore: ["latest"] });
          const selection = selectTag(list, { policy, now: NOW });
          const eligible = list.filter((entry) => entry.tag !== "latest");
          if (eligible.length === 0) return selection.kind === "none";
          const newest = Math.max(...eligible.map((entry) => entry.created!.getTime()));
          const chosen = list.find((entry) => selection.kind === "selected" && entry.tag === selection.tag);
          expect(chosen?.created!.getTime()).toBe(newest);
          expect(selectTag([...list].reverse(), { policy, now: NOW })).toEqual(selection);
          return true;
        },
      ),
      RUNS,
    );
  });

  it("never chooses a tag that is not a valid OCI tag, for any string", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "grapheme", maxLength: 20 }), { maxLength: 10 }), (list) => {
        const selection = select({ strategy: "alphabetical" }, list);
        if (selection.kind === "selected")
          expect(selection.tag).toMatch(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/);
      }),
      RUNS,
    );
  });
});
