import { describe, expect, it } from "vitest";
import { parsePolicy } from "../../../src/core/policy/parse-policy.js";
import { tagRefusal } from "../../../src/core/policy/tag-refusal.js";
import { explainTag, formatExplanation, type TagFacts } from "../../../src/core/why/explain-tag.js";

const NOW = new Date("2026-12-02T12:00:00Z");
const DIGEST = `sha256:${"a".repeat(64)}`;

/** A tag that passes everything; each case below breaks one thing. */
function facts(overrides: Partial<TagFacts> = {}, policy = "strategy: semver"): TagFacts {
  return {
    environment: "prod",
    image: "shop",
    tag: "1.8.0",
    policy: parsePolicy(policy),
    now: NOW,
    current: { tag: "1.7.0" },
    listed: true,
    description: { digest: DIGEST, created: new Date("2026-11-01T00:00:00Z"), platforms: ["linux/amd64"] },
    state: {},
    update: "auto",
    ...overrides,
  };
}

const verdictOf = (input: TagFacts, check: string) =>
  explainTag(input).steps.find((step) => step.check === check);

describe("why a tag is not used", () => {
  it("says nothing holds a tag back when every check passes", () => {
    const explanation = explainTag(facts());
    expect(explanation.steps.filter((step) => step.verdict === "blocks" || step.verdict === "waits")).toEqual(
      [],
    );
    expect(explanation.summary).toMatch(/nothing holds it back/);
  });

  const cases: [string, TagFacts, string, RegExp][] = [
    [
      "an ignore glob",
      facts({}, "{strategy: semver, ignore: ['1.8.*']}"),
      "policy",
      /ignored by the policy's ignore "1\.8\.\*"/,
    ],
    [
      "allow",
      facts({ tag: "main-abc" }, "{strategy: alphabetical, allow: '^release-'}"),
      "policy",
      /does not match the policy's allow/,
    ],
    [
      "the range",
      facts({}, "{strategy: semver, range: '^1.9'}"),
      "policy",
      /outside the policy's range \^1\.9/,
    ],
    ["a prerelease", facts({ tag: "1.8.0-rc.1" }), "policy", /is a prerelease/],
    ["not semver", facts({ tag: "latest" }), "policy", /not a semver version/],
    ["not listed", facts({ listed: false }), "listed", /does not list 1\.8\.0/],
    ["not newer", facts({ current: { tag: "1.9.0" } }), "newer", /not newer than 1\.9\.0/],
    ["already running", facts({ current: { tag: "1.8.0" } }), "newer", /already runs 1\.8\.0/],
    ["the floor", facts({ state: { floor: "1.8.0" } }), "floor", /at or below the floor 1\.8\.0/],
    [
      "minAge",
      facts(
        { description: { digest: DIGEST, created: new Date("2026-12-02T11:00:00Z") } },
        "{strategy: semver, minAge: 1d}",
      ),
      "metadata",
      /minAge|young/,
    ],
    ["platforms", facts({}, "{strategy: semver, platforms: [linux/arm64]}"), "metadata", /platform/],
    [
      "an unreadable manifest",
      facts({ description: { error: "manifest unknown" } }),
      "metadata",
      /manifest unknown/,
    ],
    ["CI", facts({ ci: "revision 1a2b3c4 in acme/shop failed CI" }), "ci", /failed CI/],
    ["update: manual", facts({ update: "manual" }), "update", /only \/promote/],
    [
      "a hold",
      facts({ state: { hold: { by: "mona", at: "2026-12-01T00:00:00Z", reason: "hold" } } }),
      "hold",
      /on hold .* @mona/,
    ],
    [
      "the upstream",
      facts({ upstream: { environment: "staging", runs: { tag: "1.7.5" } } }),
      "upstream",
      /staging runs 1\.7\.5/,
    ],
    [
      "the soak",
      facts({
        upstream: {
          environment: "staging",
          runs: { tag: "1.8.0" },
          soakPending: "staging has been healthy for 5m of 30m",
        },
      }),
      "soak",
      /5m of 30m/,
    ],
  ];
  for (const [name, input, check, detail] of cases) {
    it(`names ${name} as what holds the tag back, in the summary too`, () => {
      const step = verdictOf(input, check);
      expect(step?.verdict === "blocks" || step?.verdict === "waits").toBe(true);
      expect(step!.detail).toMatch(detail);
      expect(explainTag(input).summary).toContain(`${check}: `);
      // Every other case passes this check: the verdict comes from the fact, not the check.
      expect(verdictOf(facts(), check)?.verdict ?? "ok").not.toBe(step!.verdict);
    });
  }

  it("reports a signature check under verify, and none without it", () => {
    const input = facts({ signature: { verified: false, reason: "no signature found" } });
    input.policy = { ...input.policy, verify: { key: "-----BEGIN PUBLIC KEY-----" } };
    expect(verdictOf(input, "signature")).toMatchObject({ verdict: "blocks", detail: "no signature found" });
    expect(verdictOf(facts(), "signature")?.verdict).toBe("n/a");
  });

  it("says what it could not know instead of guessing", () => {
    const input = facts({
      ci: { unknown: "not checked here" },
      upstream: { environment: "staging", runs: { tag: "1.8.0" }, soakUnknown: "not checked here" },
    });
    delete input.state;
    delete input.listed;
    const steps = explainTag(input).steps;
    for (const check of ["listed", "floor", "ci", "soak"])
      expect(steps.find((step) => step.check === check)?.verdict).toBe("n/a");
  });

  it("prints a markdown table with the pipe in a detail escaped", () => {
    const text = formatExplanation(explainTag(facts({ ci: "a | b" })), true);
    expect(text).toContain("| ci | ⏳ | a \\| b |");
  });
});

describe("tagRefusal", () => {
  it("is undefined exactly when the policy admits the tag", () => {
    const policy = parsePolicy("{strategy: semver, range: '^1', ignore: ['*-debug']}");
    expect(tagRefusal(policy, "1.2.3")).toBeUndefined();
    expect(tagRefusal(policy, "1.2.3-debug")).toMatch(/ignore/);
    expect(tagRefusal(policy, "2.0.0")).toMatch(/range \^1/);
    expect(tagRefusal(parsePolicy("{strategy: numerical, order: asc}"), "abc")).toMatch(/not a number/);
    expect(tagRefusal(parsePolicy("{strategy: digest, tag: latest}"), "main")).toMatch(/only the tag latest/);
    expect(tagRefusal(policy, "-bad")).toMatch(/not a valid OCI tag/);
  });
});
