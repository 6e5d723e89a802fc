import { describe, expect, it } from "vitest";
import {
  diffConclusion,
  diffEnvironment,
  formatDiffReport,
  GITHUB_CHECK_LIMITS,
  type KubeObject,
} from "../../../src/core/diff/index.js";

const configMap = (name: string, value: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "shop" },
  data: { value },
});
const web = (tag: string): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "shop" },
  spec: { template: { spec: { containers: [{ name: "web", image: `ghcr.io/acme/shop:${tag}` }] } } },
});

describe("formatDiffReport", () => {
  it("writes a table, the images, the dangers and each object's diff, per environment", () => {
    const staging = diffEnvironment([web("1.7.3"), configMap("old", "x")], [web("1.8.0")]);
    const prod = diffEnvironment([web("1.7.3")], [web("1.7.3")]);
    const report = formatDiffReport(
      [
        { environment: "staging", diff: staging },
        { environment: "prod", diff: prod },
      ],
      GITHUB_CHECK_LIMITS,
      "ferry diff --base main",
    );
    expect(report.truncated).toBe(false);
    expect(report.omittedObjects).toBe(0);
    expect(report.summary.split("\n").slice(0, 4)).toEqual([
      "| Environment | Added | Changed | Removed | Unchanged | Dangers |",
      "| --- | --- | --- | --- | --- | --- |",
      "| staging | 0 | 1 | 1 | 0 | 1 |",
      "| prod | 0 | 0 | 0 | 1 | 0 |",
    ]);
    expect(report.summary).toContain("### staging: 0 added, 1 changed, 1 removed, 0 unchanged");
    expect(report.summary).toContain("**Dangers (the check fails):** 1 object would be pruned.");
    expect(report.summary).toContain("- **prune**: `ConfigMap shop/old would be pruned`");
    expect(report.summary).toContain(
      "- `ghcr.io/acme/shop 1.7.3 → 1.8.0 (container web of Deployment.apps shop/web)`",
    );
    expect(report.summary).toContain("| changed | `Deployment.apps shop/web` |");
    expect(report.summary).toContain("### prod: 0 added, 0 changed, 0 removed, 1 unchanged\nNo change.");
    expect(report.text).toContain(
      "### staging\n#### removed `ConfigMap shop/old`\n```diff\n--- base/v1/ConfigMap/shop/old",
    );
    expect(report.text).toContain(
      "-          image: ghcr.io/acme/shop:1.7.3\n+          image: ghcr.io/acme/shop:1.8.0",
    );
    expect(report.text).not.toContain("### prod");
  });

  it("stops at the limits and counts the objects it left out, pointing at the CLI", () => {
    const base = Array.from({ length: 60 }, (_, i) => configMap(`c${i}`, "before".repeat(20)));
    const head = Array.from({ length: 60 }, (_, i) => configMap(`c${i}`, "after".repeat(20)));
    const diff = diffEnvironment(base, head);
    const limits = { summaryChars: 1500, textChars: 3000 };
    const report = formatDiffReport(
      [{ environment: "prod", diff }],
      limits,
      "ferry diff --env prod --base main",
    );
    expect(report.truncated).toBe(true);
    expect(report.summary.length).toBeLessThanOrEqual(limits.summaryChars);
    expect(report.text.length).toBeLessThanOrEqual(limits.textChars);
    const shownInText = (report.text.match(/^#### changed/gm) ?? []).length;
    expect(shownInText).toBeGreaterThan(0);
    expect(report.omittedObjects).toBe(
      60 - Math.min(shownInText, (report.summary.match(/^\| changed/gm) ?? []).length),
    );
    expect(report.text).toMatch(
      new RegExp(
        `_${60 - shownInText} more objects not shown — run \`ferry diff --env prod --base main\` for the whole diff\\._$`,
      ),
    );
    expect(report.summary).toContain("more objects not shown — run `ferry diff --env prod --base main`");
  });

  it("keeps untrusted names and diffs from breaking out of their Markdown", () => {
    const evil = configMap("x", "```\n**not bold** | col");
    evil.metadata.name = "a`b|c";
    const report = formatDiffReport(
      [{ environment: "prod|x", diff: diffEnvironment([], [evil]) }],
      GITHUB_CHECK_LIMITS,
      "ferry diff",
    );
    expect(report.summary).toContain("| prod\\|x |");
    expect(report.summary).toContain("| added | ``ConfigMap shop/a`b\\|c`` |");
    expect(report.text).toContain("````diff\n");
    expect(report.text).toContain("\n````");
  });
});

describe("diffConclusion", () => {
  it("fails when any environment has a danger, and succeeds otherwise", () => {
    const clean = diffEnvironment([web("1")], [web("2")]);
    const pruning = diffEnvironment([web("1"), configMap("c", "v")], [web("1")]);
    expect(diffConclusion([{ diff: clean }])).toBe("success");
    expect(diffConclusion([])).toBe("success");
    expect(diffConclusion([{ diff: clean }, { diff: pruning }])).toBe("failure");
  });
});
