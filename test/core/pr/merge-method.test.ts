import { describe, expect, it } from "vitest";
import { chooseMergeMethod } from "../../../src/core/pr/merge-method.js";

describe("chooseMergeMethod", () => {
  it("squashes by default when the repository allows it", () => {
    expect(chooseMergeMethod({ squash: true, merge: true, rebase: true })).toBe("squash");
  });

  it("uses the configured method when the repository allows it", () => {
    expect(chooseMergeMethod({ squash: true, merge: true, rebase: true }, "rebase")).toBe("rebase");
  });

  it("falls back to an allowed method, in the order squash, merge, rebase", () => {
    expect(chooseMergeMethod({ squash: false, merge: true, rebase: true }, "squash")).toBe("merge");
    expect(chooseMergeMethod({ squash: false, merge: false, rebase: true }, "merge")).toBe("rebase");
    expect(chooseMergeMethod({ squash: true, merge: false, rebase: false }, "rebase")).toBe("squash");
  });

  it("keeps the preference when the settings could not be read", () => {
    expect(chooseMergeMethod(undefined, "merge")).toBe("merge");
    expect(chooseMergeMethod(undefined)).toBe("squash");
  });
});
