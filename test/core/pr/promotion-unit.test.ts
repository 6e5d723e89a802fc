import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadConfig, formatProblems } from "../../../src/core/config/load-config.js";
import type { FerryConfig } from "../../../src/core/config/schema.js";
import {
  formatBranchName,
  formatLabels,
  parseBranchName,
  parseUnitBranch,
  type UnitGroup,
} from "../../../src/core/pr/branch.js";
import {
  formatPlanBlock,
  parsePlanBlock,
  planSealInput,
  type PlanBlock,
} from "../../../src/core/pr/plan-block.js";
import { promotionUnits, unitOfBranch, unitOfImage } from "../../../src/core/pr/promotion-unit.js";
import { formatTitle, parseTitle } from "../../../src/core/pr/title.js";
import { GITHUB_BODY_LIMIT, GITHUB_TITLE_LIMIT } from "../../../src/core/pr/github-limits.js";
import { formatBody, parseBody } from "../../../src/core/pr/body.js";
import { changesThatFit } from "../../../src/core/pr/plan-block.js";

const name = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,62}$/);
const group = fc.oneof(
  fc.constant(undefined),
  fc.record({ kind: fc.constantFrom("group" as const, "image" as const), name }),
);

function config(text: string): FerryConfig {
  const result = loadConfig(text);
  if (!result.ok) throw new Error(formatProblems("ferry.yml", result.problems));
  return result.config;
}

const GROUPED = config(`images:
  shop: { repository: ghcr.io/acme/shop, group: team-a }
  cart: { repository: ghcr.io/acme/cart, group: team-a }
  search: { repository: ghcr.io/acme/search, group: team-b }
  mail: { repository: ghcr.io/acme/mail }
  auth: { repository: ghcr.io/acme/auth }
environments:
  staging: { paths: [overlays/staging], merge: auto }
  prod: { paths: [overlays/prod], from: staging, grouping: image }
`);

describe("unit branch names", () => {
  it("read back to the unit they were made from, for any environment and group", () => {
    fc.assert(
      fc.property(name, group, (environment, unitGroup: UnitGroup | undefined) => {
        const branch = formatBranchName(environment, unitGroup);
        const parsed = parseUnitBranch(branch);
        expect(parsed).toEqual({ environment, ...(unitGroup ? { group: unitGroup } : {}) });
        expect(parseUnitBranch(`refs/heads/${branch}`)).toEqual(parsed);
        expect(parseBranchName(branch)).toBe(environment);
      }),
    );
  });

  it("keep today's ferry/<env> for the default unit and never nest one unit's ref under another's", () => {
    expect(formatBranchName("prod")).toBe("ferry/prod");
    expect(formatBranchName("prod", { kind: "group", name: "team-a" })).toBe("ferry-group/prod/team-a");
    expect(formatBranchName("prod", { kind: "image", name: "shop" })).toBe("ferry-image/prod/shop");
    // git refuses refs/heads/a when refs/heads/a/b exists (and the other way round): no unit's
    // branch is a folder of another's.
    fc.assert(
      fc.property(name, group, name, group, (e1, g1, e2, g2) => {
        const a = formatBranchName(e1, g1);
        const b = formatBranchName(e2, g2);
        expect(a.startsWith(`${b}/`) || b.startsWith(`${a}/`)).toBe(false);
      }),
    );
  });

  it("refuse what Ferry would not write", () => {
    for (const ref of [
      "ferry/prod/x",
      "ferry-group/prod",
      "ferry-group/prod/a/b",
      "ferry-group/Prod/a",
      "ferry-image//shop",
      "ferry-groups/prod/a",
      "main",
    ])
      expect(parseUnitBranch(ref), ref).toBeUndefined();
  });

  it("label a unit's PR with its group or image", () => {
    expect(formatLabels("prod")).toEqual(["ferry", "env:prod"]);
    expect(formatLabels("prod", { kind: "group", name: "team-a" })).toEqual([
      "ferry",
      "env:prod",
      "group:team-a",
    ]);
    expect(formatLabels("prod", { kind: "image", name: "shop" })).toEqual([
      "ferry",
      "env:prod",
      "image:shop",
    ]);
  });
});

describe("promotion units", () => {
  it("split an environment's images by group, the rest in the default unit, or one each with grouping: image", () => {
    expect(promotionUnits(GROUPED, "staging").map(({ branch, images }) => [branch, images])).toEqual([
      ["ferry/staging", ["mail", "auth"]],
      ["ferry-group/staging/team-a", ["shop", "cart"]],
      ["ferry-group/staging/team-b", ["search"]],
    ]);
    expect(promotionUnits(GROUPED, "prod").map(({ branch }) => branch)).toEqual([
      "ferry-group/prod/team-a",
      "ferry-group/prod/team-b",
      "ferry-image/prod/auth",
      "ferry-image/prod/mail",
    ]);
    expect(promotionUnits(GROUPED, "staging", ["cart"]).map(({ images }) => images)).toEqual([["cart"]]);
  });

  it("give a branch its (environment, group, images), for the checks that run after a merge too", () => {
    expect(unitOfBranch(GROUPED, "ferry-group/prod/team-a")).toEqual({
      environment: "prod",
      group: { kind: "group", name: "team-a" },
      branch: "ferry-group/prod/team-a",
      images: ["shop", "cart"],
    });
    expect(unitOfBranch(GROUPED, "refs/heads/ferry/staging")?.images).toEqual(["mail", "auth"]);
    // prod has no default unit: every image there is in a group or on its own.
    expect(unitOfBranch(GROUPED, "ferry/prod")?.images).toEqual([]);
    expect(unitOfBranch(GROUPED, "ferry-group/qa/team-a")).toBeUndefined();
    expect(unitOfBranch(GROUPED, "feature/x")).toBeUndefined();
    expect(unitOfImage(GROUPED, "prod", "mail").branch).toBe("ferry-image/prod/mail");
  });

  it("refuses a group name Ferry could not put in a branch", () => {
    const result = loadConfig(
      `images:\n  shop: { repository: ghcr.io/acme/shop, group: "Team A" }\nenvironments:\n  staging: { paths: [overlays/staging] }\n`,
    );
    expect(result.ok).toBe(false);
  });
});

describe("a unit's plan block and title", () => {
  const block: PlanBlock = {
    version: 1,
    environment: "staging",
    kind: "bump",
    changes: [
      {
        image: "shop",
        repository: "ghcr.io/acme/shop",
        from: { tag: "1.7.0" },
        to: { tag: "1.8.0", digest: `sha256:${"a".repeat(64)}` },
      },
    ],
  };

  it("carries the group, and a default unit's block seals as it did before groups", () => {
    const grouped = { ...block, group: { kind: "group" as const, name: "team-a" } };
    expect(parsePlanBlock(formatPlanBlock(grouped))).toEqual(grouped);
    expect(planSealInput(grouped)).not.toBe(planSealInput(block));
    expect(JSON.parse(planSealInput(block))).toHaveLength(7);
    expect(
      parsePlanBlock(formatPlanBlock({ ...block, group: { kind: "team", name: "x" } } as never)),
    ).toBeUndefined();
  });

  it("names the group in the title and stays within GitHub's 256 characters with 300 images", () => {
    const title = formatTitle("staging", [{ image: "shop", version: "1.8.0" }], "promote", "team-a");
    expect(title).toBe("Promote shop 1.8.0 to staging (team-a)");
    expect(parseTitle(title)).toMatchObject({ environment: "staging", group: "team-a" });
    const many = Array.from({ length: 300 }, (_, index) => ({
      image: `image-${index}`,
      version: "10.20.30",
    }));
    const long = formatTitle("e".repeat(63), many, "rollback", "g".repeat(63));
    expect(long.length).toBeLessThanOrEqual(GITHUB_TITLE_LIMIT);
    expect(long).toBe(`Roll back 300 images in ${"e".repeat(63)} (${"g".repeat(63)})`);
  });

  it("proposes a 300-image unit in parts whose bodies each fit GitHub's 65,536 characters", () => {
    const hex = (index: number, length: number) => index.toString(16).padStart(length, "0");
    const changes = Array.from({ length: 300 }, (_, index) => ({
      image: `image-${index}`,
      repository: `ghcr.io/acme-platform/team-${index % 30}/image-${index}`,
      from: { tag: "1.0.0", digest: `sha256:${hex(index, 64)}` },
      to: { tag: "1.1.0", digest: `sha256:${hex(index + 1000, 64)}` },
      revision: hex(index, 40),
    }));
    const whole: PlanBlock = { ...block, group: { kind: "group", name: "platform" }, changes };
    const fit = changesThatFit(whole);
    expect(fit).toBeGreaterThan(0);
    expect(fit).toBeLessThan(300);
    let left = changes;
    while (left.length > 0) {
      const count = changesThatFit({ ...whole, changes: left });
      const part: PlanBlock = {
        ...whole,
        changes: left.slice(0, count),
        head: "a".repeat(40),
        seal: "b".repeat(64),
      };
      const body = formatBody({ plan: part, rows: {}, webUrl: "https://github.com" });
      expect(body.length).toBeLessThanOrEqual(GITHUB_BODY_LIMIT);
      expect(parseBody(body)?.changes).toHaveLength(count);
      left = left.slice(count);
    }
  });
});
