import { describe, expect, it } from "vitest";
import { gateOutcome, gateWaitMessage } from "../../../src/core/policy/ci-gating.js";

describe("CI gating wording", () => {
  it("names the missing label and git tag when no revision is known", () => {
    const outcome = gateOutcome({ tag: "1.9.0", source: "acme/shop" });
    expect(outcome).toEqual({ eligible: false, why: "no revision label and no tag 1.9.0 in acme/shop" });
    expect(gateWaitMessage("1.9.0", outcome.eligible ? "" : outcome.why)).toBe(
      "1.9.0 waits for CI gating: no revision label and no tag 1.9.0 in acme/shop",
    );
  });

  it("says whether the revision's CI failed, runs or has not reported, and admits a passed one", () => {
    const sha = "c427ed1f00000000000000000000000000000000";
    const label = { sha, from: "label" as const };
    expect(gateOutcome({ tag: "1.9.0", source: "acme/shop", revision: label, ci: "failure" })).toEqual({
      eligible: false,
      why: "revision c427ed1 in acme/shop failed CI",
    });
    expect(
      gateOutcome({ tag: "1.9.0", source: "acme/shop", revision: { sha, from: "git-tag" }, ci: "none" }),
    ).toEqual({ eligible: false, why: "tag 1.9.0 → c427ed1 in acme/shop has no CI result yet" });
    expect(gateOutcome({ tag: "1.9.0", source: "acme/shop", revision: label, ci: "pending" })).toEqual({
      eligible: false,
      why: "revision c427ed1 in acme/shop has CI still running",
    });
    expect(gateOutcome({ tag: "1.9.0", source: "acme/shop", revision: label, ci: "success" })).toEqual({
      eligible: true,
    });
  });
});
