import { describe, expect, it } from "vitest";
import { refusalText, ruleViolations, rulesFingerprint } from "../../src/core/rule-violation.js";

// GitHub's refusal texts as tools meet them (googleapis/release-please-action#1194,
// satisfactory-factories/application#67, vercel/sandbox#169).
describe("ruleset refusals", () => {
  it("reads each broken rule's words out of GitHub's message, and nothing else", () => {
    expect(
      ruleViolations(
        "Repository rule violations found\n\nCannot create ref due to creations being restricted.\n\n",
      ),
    ).toEqual(["Cannot create ref due to creations being restricted."]);
    expect(
      ruleViolations(
        "Repository rule violations found\n\nChanges must be made through a pull request.\n\nCommits must have verified signatures.\nFound 1 violation:\n\n  027faa7121ee9df79db623e1a2848d2cc88a8dba\n\n",
      ),
    ).toEqual(["Changes must be made through a pull request.", "Commits must have verified signatures."]);
    expect(ruleViolations("Update is not a fast forward")).toBeUndefined();
    expect(
      ruleViolations(`Repository rule violations found\n\n${"x".repeat(5000)}`)![0]!.length,
    ).toBeLessThan(300);
  });

  it("names the fix", () => {
    expect(refusalText("ferry/prod", ["Cannot update this protected ref."])).toBe(
      "GitHub's rulesets refused Ferry's write to ferry/prod: Cannot update this protected ref. Add the Ferry app to the ruleset's bypass list, or exclude refs/heads/ferry/** from it; Ferry tries again when the rules or the config change.",
    );
  });

  it("fingerprints rules in any order alike, and moves with a ruleset's edit", () => {
    const rules = [
      { type: "creation", rulesetId: 1 },
      { type: "update", rulesetId: 2 },
    ];
    const a = rulesFingerprint(rules, [{ id: 1, updatedAt: "t1" }]);
    expect(rulesFingerprint([...rules].reverse(), [{ id: 1, updatedAt: "t1" }])).toBe(a);
    expect(rulesFingerprint(rules, [{ id: 1, updatedAt: "t2" }])).not.toBe(a);
  });
});
