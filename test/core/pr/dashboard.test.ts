import { describe, expect, it } from "vitest";
import {
  formatDashboard,
  formatMermaid,
  formatState,
  parseState,
  type StatusInput,
} from "../../../src/core/pr/dashboard.js";
import { emptyState, formatStateFile, parseStateFile } from "../../../src/core/state/ferry-state.js";
import { formatConfigCheck } from "../../../src/core/pr/check-run.js";

const input: StatusInput = {
  environments: [{ name: "staging" }, { name: "prod", from: "staging" }],
  images: ["shop"],
  running: {
    staging: { shop: { tag: "1.8.0", digest: `sha256:${"a".repeat(64)}` } },
    prod: { shop: { tag: "1.7.0" } },
  },
  pulls: { prod: { number: 7, title: "Promote shop 1.8.0 to prod" }, staging: undefined },
  holds: { prod: { by: "mona", at: "2026-01-01T00:00:00.000Z", reason: "rollback" } },
};

describe("dashboard", () => {
  it("round-trips holds and floors through the hidden state block", () => {
    const state = {
      version: 1 as const,
      holds: input.holds,
      floors: { prod: { shop: "1.8.1" } },
      history: {},
    };
    expect(parseState(formatDashboard(input, state, new Date(0)))).toEqual(state);
  });

  it("drops hand-edited state that is not well formed", () => {
    const text = formatState({
      version: 1,
      holds: { prod: { by: "<script>", at: "x", reason: "hold" } },
      floors: { prod: { shop: "a b" } },
      history: {},
    });
    expect(parseState(text)).toEqual(emptyState());
  });

  it("round-trips holds and floors through the state file", () => {
    const state = {
      version: 1 as const,
      holds: input.holds,
      floors: { prod: { shop: "1.8.1" } },
      history: {},
    };
    expect(parseStateFile(formatStateFile(state))).toEqual(state);
  });

  it("writes the same state as the same bytes whatever order it was built in", () => {
    const hold = { by: "mona", at: "2026-01-01T00:00:00.000Z", reason: "hold" as const };
    const one = formatStateFile({
      version: 1,
      holds: { staging: hold, prod: { ...hold } },
      floors: { prod: { web: "2.0.0", shop: "1.0.0" }, dev: { shop: "1.1.0" } },
      history: {},
    });
    const other = formatStateFile({
      version: 1,
      holds: { prod: { reason: "hold", at: hold.at, by: "mona" }, staging: hold },
      floors: { dev: { shop: "1.1.0" }, prod: { shop: "1.0.0", web: "2.0.0" } },
      history: {},
    });
    expect(one).toBe(other);
    expect(one.endsWith("}\n")).toBe(true);
  });

  it("reads a state file that is not JSON, or not a version it knows, as no holds and no floors", () => {
    expect(parseStateFile("{ not json")).toEqual(emptyState());
    expect(parseStateFile('{"version":2,"holds":{"prod":{}}}')).toEqual(emptyState());
    expect(parseStateFile(undefined)).toEqual(emptyState());
  });

  it("drops a hand-edited hold in the state file that is not well formed, keeping the rest", () => {
    const text = JSON.stringify({
      version: 1,
      holds: {
        prod: { by: "mona", at: "2026-01-01T00:00:00.000Z", reason: "hold" },
        staging: { by: "mona", at: "yesterday", reason: "hold" },
      },
      floors: {},
      history: {},
    });
    expect(Object.keys(parseStateFile(text).holds)).toEqual(["prod"]);
  });

  it("shows every environment × image with PRs and holds", () => {
    const text = formatDashboard(input, emptyState(), new Date(0));
    expect(text).toContain("| prod | shop | `1.7.0` |  | #7 | on hold (rollback by @mona) |");
    expect(text).toContain("| staging | shop | `1.8.0` | `sha256:aaaaaaaaaaaa` |");
  });

  it("draws the promotion graph in Mermaid", () => {
    expect(formatMermaid(input)).toContain("env_staging --> env_prod");
  });
});

describe("config check", () => {
  it("annotates each offending line", () => {
    const output = formatConfigCheck(".github/ferry.yml", [
      { path: "environments.prod.soak", message: "invalid duration", line: 12, column: 11 },
    ]);
    expect(output.conclusion).toBe("failure");
    expect(output.annotations).toEqual([
      {
        path: ".github/ferry.yml",
        start_line: 12,
        end_line: 12,
        start_column: 11,
        end_column: 11,
        annotation_level: "failure",
        message: "invalid duration",
        title: "environments.prod.soak",
      },
    ]);
  });

  it("passes a valid config", () => {
    expect(formatConfigCheck(".github/ferry.yml", []).conclusion).toBe("success");
  });
});
