import { describe, expect, it } from "vitest";
import { formatConfigCheck } from "../../../src/core/pr/check-run.js";

const SCHEMA_PROBLEM = { path: "environments.prod.soak", message: "invalid duration", line: 12, column: 11 };
const NOT_REFERENCED = {
  file: ".github/ferry.yml",
  line: 7,
  column: 5,
  message: "image api (ghcr.io/acme/api) is not referenced in environment staging's paths (overlays/staging)",
};

describe("formatConfigCheck", () => {
  it("reports reference problems as warnings on a successful check, with line and column", () => {
    const output = formatConfigCheck(".github/ferry.yml", [], [NOT_REFERENCED]);
    expect(output.conclusion).toBe("success");
    expect(output.title).toContain("1 warning");
    expect(output.summary).toContain(".github/ferry.yml:7:5");
    expect(output.annotations).toEqual([
      {
        path: ".github/ferry.yml",
        start_line: 7,
        end_line: 7,
        start_column: 5,
        end_column: 5,
        annotation_level: "warning",
        message: NOT_REFERENCED.message,
        title: "ferry check",
      },
    ]);
  });

  it("annotates a warning in an environment file on that file", () => {
    const output = formatConfigCheck(
      ".github/ferry.yml",
      [],
      [{ file: "overlays/prod/kustomization.yaml", line: 3, column: 2, message: "YAML: bad indentation" }],
    );
    expect(output.annotations[0]).toMatchObject({ path: "overlays/prod/kustomization.yaml", start_line: 3 });
  });

  it("fails on schema problems and leaves warnings out, since they were not checked against a valid config", () => {
    const output = formatConfigCheck(".github/ferry.yml", [SCHEMA_PROBLEM], [NOT_REFERENCED]);
    expect(output.conclusion).toBe("failure");
    expect(output.annotations.map((annotation) => annotation.annotation_level)).toEqual(["failure"]);
  });

  it("annotates up to 500 lines and says the rest are only in the summary", () => {
    const warnings = Array.from({ length: 510 }, (_, index) => ({ ...NOT_REFERENCED, line: index + 1 }));
    const output = formatConfigCheck(".github/ferry.yml", [], warnings);
    expect(output.annotations).toHaveLength(500);
    expect(output.summary.split("\n").filter((line) => line.startsWith("- "))).toHaveLength(510);
    expect(output.summary).toContain("first 500");
  });

  it("puts a problem reported at line 0 or column 0 on the first line and column GitHub accepts", () => {
    const output = formatConfigCheck(".github/ferry.yml", [], [{ ...NOT_REFERENCED, line: 0, column: 0 }]);
    expect(output.annotations[0]).toMatchObject({
      start_line: 1,
      end_line: 1,
      start_column: 1,
      end_column: 1,
    });
  });

  it("passes a clean config with no annotations", () => {
    const output = formatConfigCheck(".github/ferry.yml", [], []);
    expect(output.conclusion).toBe("success");
    expect(output.annotations).toEqual([]);
  });
});
