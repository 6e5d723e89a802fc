import { describe, expect, it } from "vitest";
import { shortSha } from "../../src/core/commit-sha.js";

describe("shortSha", () => {
  it("shows a commit by its first 7 hex digits, as git and GitHub do", () => {
    expect(shortSha("9bc3dd0f2a6e4b1c8d7e6f5a4b3c2d1e0f9a8b7c")).toBe("9bc3dd0");
  });

  it("leaves a SHA already short as it is", () => {
    expect(shortSha("9bc3d")).toBe("9bc3d");
  });
});
