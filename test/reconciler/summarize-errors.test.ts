import { describe, expect, it } from "vitest";
import { summarizeErrors } from "../../src/reconciler/cycle-result.js";

describe("summarizeErrors", () => {
  it("keeps a short list as it is", () => {
    expect(summarizeErrors(["apply: a", "prune: b"])).toEqual(["apply: a", "prune: b"]);
  });

  it("turns 644 errors from a dead API server into a few lines: the first ones and a count by kind", () => {
    const errors = Array.from(
      { length: 644 },
      (_, index) =>
        `apply: apply ConfigMap shop/config-${index}: request to https://10.0.0.1/api/v1/namespaces/shop/configmaps/config-${index} failed, reason: connect ECONNREFUSED 10.0.0.1:443`,
    );
    const summary = summarizeErrors(errors);
    expect(summary).toHaveLength(6);
    expect(summary.slice(0, 5)).toEqual(errors.slice(0, 5));
    expect(summary[5]).toBe(
      "… and 639 more: 639 × apply: request to … failed, reason: connect ECONNREFUSED 10.0.0.1:443",
    );
    expect(JSON.stringify(summary).length).toBeLessThan(4_000);
  });
});
