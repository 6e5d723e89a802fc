import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatBody, parseBody } from "../../../src/core/pr/body.js";
import {
  formatBranchName,
  formatLabels,
  parseBranchName,
  parseEnvironmentLabel,
} from "../../../src/core/pr/branch.js";
import { formatPlanBlock, parsePlanBlock, type PlanBlock } from "../../../src/core/pr/plan-block.js";
import { formatTitle, parseTitle } from "../../../src/core/pr/title.js";
import { escapeMarkdown, formatHiddenBlock, parseHiddenBlock } from "../../../src/core/pr/markdown.js";

const digest = (c: string): string => `sha256:${c.repeat(64)}`;
const envName = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,20}$/);
const tag = fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,30}$/);

const plan: PlanBlock = {
  version: 1,
  environment: "staging",
  kind: "bump",
  base: "a".repeat(40),
  changes: [
    {
      image: "shop",
      repository: "ghcr.io/acme/shop",
      from: { tag: "1.7.0" },
      to: { tag: "1.8.0", digest: digest("b") },
      revision: "c".repeat(40),
    },
  ],
};

describe("branch names and labels", () => {
  it("names the branch ferry/<env> and reads the environment back", () => {
    fc.assert(
      fc.property(envName, (environment) => parseBranchName(formatBranchName(environment)) === environment),
    );
    expect(parseBranchName("refs/heads/ferry/prod")).toBe("prod");
  });

  it("does not take other branches for Ferry's", () => {
    expect(parseBranchName("main")).toBeUndefined();
    expect(parseBranchName("ferry/../main")).toBeUndefined();
    expect(() => formatBranchName("Prod!")).toThrow();
  });

  it("labels a PR ferry and env:<env>, and reads the environment from them", () => {
    expect(formatLabels("prod")).toEqual(["ferry", "env:prod"]);
    expect(parseEnvironmentLabel(formatLabels("prod"))).toBe("prod");
  });
});

describe("titles", () => {
  it("writes Promote shop 1.8.0 to staging", () => {
    expect(formatTitle("staging", [{ image: "shop", version: "1.8.0" }])).toBe(
      "Promote shop 1.8.0 to staging",
    );
  });

  it("lists several images separated by commas", () => {
    expect(
      formatTitle("staging", [
        { image: "shop", version: "1.8.0" },
        { image: "cart", version: "2.1.0" },
      ]),
    ).toBe("Promote shop 1.8.0, cart 2.1.0 to staging");
  });

  it("reads back every title it writes", () => {
    const image = fc.record({ image: envName, version: tag });
    fc.assert(
      fc.property(
        envName,
        fc.array(image, { minLength: 1, maxLength: 4 }),
        fc.constantFrom("promote" as const, "rollback" as const),
        (environment, images, kind) => {
          expect(parseTitle(formatTitle(environment, images, kind))).toEqual({ kind, environment, images });
        },
      ),
    );
  });

  it("names the count instead when the list would pass GitHub's 256 characters; the count form names no image", () => {
    const images = Array.from({ length: 12 }, (_, i) => ({
      image: `image-with-a-long-name-${i}`,
      version: "1.10.0",
    }));
    expect(formatTitle("prod", images)).toBe("Promote 12 images to prod");
    expect(formatTitle("prod", images, "rollback")).toBe("Roll back 12 images in prod");
    expect(formatTitle("prod", images.slice(0, 3))).toMatch(/^Promote image-with-a-long-name-0 1\.10\.0, /);
    expect(formatTitle("prod", [{ image: "a", version: "v".repeat(300) }])).toBe("Promote 1 image to prod");
    expect(parseTitle("Promote 12 images to prod")).toBeUndefined();
  });

  it("does not parse titles people wrote", () => {
    expect(parseTitle("Fix the login page")).toBeUndefined();
  });
});

describe("hidden plan block", () => {
  it("round-trips through the PR body", () => {
    const body = formatBody({
      plan,
      rows: {
        shop: { image: "shop", policy: "semver ^1.0.0", source: { repo: "acme/shop", to: "c".repeat(40) } },
      },
      webUrl: "https://github.com",
    });
    expect(parseBody(body)).toEqual(plan);
  });

  it("cannot be closed early by a value containing -->", () => {
    const block = formatHiddenBlock("x", { note: "--> <script>" });
    expect(block.indexOf("-->")).toBe(block.length - 3);
    expect(parseHiddenBlock("x", `before ${block} after`)).toEqual({ note: "--> <script>" });
  });

  it("rejects a block whose tag is not an OCI tag, as a hand-edited body might carry", () => {
    const tampered = formatPlanBlock({
      ...plan,
      changes: [{ ...plan.changes[0]!, to: { tag: "v1\n---\nkind: X", digest: digest("b") } }],
    });
    expect(parsePlanBlock(tampered)).toBeUndefined();
  });

  it("ignores a body without Ferry's marker", () => {
    expect(parseBody(formatPlanBlock(plan))).toBeUndefined();
  });
});

describe("body", () => {
  it("shows image, from → to, digest, policy and the source compare link", () => {
    const body = formatBody({
      plan,
      rows: {
        shop: {
          image: "shop",
          policy: "semver ^1.0.0",
          source: { repo: "acme/shop", from: "d".repeat(40), to: "c".repeat(40) },
        },
      },
      webUrl: "https://github.com",
    });
    expect(body).toContain("| shop | `1.7.0` → `1.8.0` | `sha256:bbbbbbbbbbbb` |");
    expect(body).toContain(`(https://github.com/acme/shop/compare/${"d".repeat(40)}...${"c".repeat(40)})`);
  });

  it("escapes markdown and HTML in user-controlled fields", () => {
    const body = formatBody({
      plan,
      rows: { shop: { image: "shop", policy: "<img src=x onerror=alert(1)> | [x](http://evil)" } },
      webUrl: "https://github.com",
    });
    expect(body).not.toContain("<img");
    expect(body).not.toContain("](http://evil)");
  });

  it("escapes every markdown control character", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const escaped = escapeMarkdown(text);
        expect(escaped).not.toMatch(/(^|[^\\])[<>|\n[\]]/);
      }),
    );
  });
});
