import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import type { PlanReport } from "../../src/cli/plan.js";
import {
  startEmbeddedRegistry,
  type EmbeddedRegistry,
} from "../../packages/sandbox/src/registry/embedded-registry.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { captureIo } from "../support/cli-io.js";

/**
 * Tag policies through the route a user takes: a `.github/ferry.yml` in the config repo, tags
 * pushed to a registry, `ferry plan`.
 */
function writeRepo(host: string, images: Record<string, { policy: string; running: string }>): string {
  const dir = mkdtempSync(join(tmpdir(), "ferry-plan-policy-"));
  const config = [
    "images:",
    ...Object.entries(images).flatMap(([name, image]) => [
      `  ${name}:`,
      `    repository: ${host}/acme/${name}`,
      `    policy: ${image.policy}`,
    ]),
    "environments:",
    "  staging:",
    "    paths: [overlays/staging]",
    "",
  ].join("\n");
  const kustomization = [
    "resources:",
    "  - ../../base",
    "images:",
    ...Object.entries(images).flatMap(([name, image]) => [
      `  - name: ${host}/acme/${name}`,
      `    newTag: "${image.running}"`,
    ]),
    "",
  ].join("\n");
  for (const [path, text] of Object.entries({
    ".github/ferry.yml": config,
    "overlays/staging/kustomization.yaml": kustomization,
  })) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

async function plan(dir: string): Promise<{ code: number; output: PlanReport; text: string }> {
  const json = captureIo(dir);
  const code = await main(["plan", "--json"], json);
  expect(json.err).toBe("");
  const text = captureIo(dir);
  await main(["plan"], text);
  return { code, output: JSON.parse(json.out) as PlanReport, text: text.out };
}

// 42-character tags: each one stalled V8's backtracking engine for seconds to minutes under the
// nested-quantifier pattern below, with or without its experimental linear fallback.
const NEAR_MISSES = Array.from({ length: 4 }, (_, i) => `main-${"a".repeat(36)}${i}`);

describe("ferry plan with policies written as the peers write them", () => {
  let registry: EmbeddedRegistry;
  beforeAll(async () => {
    registry = await startEmbeddedRegistry();
    const push = async (repository: string, tags: string[]) => {
      for (const tag of tags) await pushImage(registry.url, repository, tag, { content: tag });
    };
    await push("acme/builds", [...NEAR_MISSES, "main-feature-x-1a2b3c4", "main-fix-2-abcdef0"]);
    await push("acme/shop", ["1.0.0", "1.1.0-rc.1", "1.2.0-rc.2", "1.2.0", "2.0.0-rc.1"]);
    await push("acme/api", ["1.8.0", "1.9.0", "2.0.0"]);
    // A valid 128-character tag: under the report's ignore glob, hours on a backtracking matcher.
    await push("acme/cart", ["1.0.0", "a".repeat(128), "1.1.0"]);
  });
  afterAll(async () => registry.close());

  it("plans with the nested-quantifier allow pattern from the ReDoS report over near-miss tags", async () => {
    const dir = writeRepo(registry.host, {
      builds: {
        policy: '{ strategy: alphabetical, allow: "^main-([a-z0-9]+-?)+-[0-9a-f]{7,40}$" }',
        running: "main-a-0000000",
      },
    });
    const { code, output } = await plan(dir);
    expect(code).toBe(0);
    expect(output.changes).toEqual([
      expect.objectContaining({ image: "builds", from: "main-a-0000000", to: "main-fix-2-abcdef0" }),
    ]);
    rmSync(dir, { recursive: true });
  });

  it("plans past a 128-character tag under the security report's ignore glob *a*a*a*a*a*a*a*a*b", async () => {
    const dir = writeRepo(registry.host, {
      cart: { policy: '{ range: "^1.0.0", ignore: ["*a*a*a*a*a*a*a*a*b", "*-debug"] }', running: "1.0.0" },
    });
    const { code, output } = await plan(dir);
    expect(code).toBe(0);
    expect(output.changes).toEqual([expect.objectContaining({ image: "cart", from: "1.0.0", to: "1.1.0" })]);
    rmSync(dir, { recursive: true });
  });

  it("chooses the latest 1.x release candidate with Flux's documented pattern '.*-rc.*' and range '^1.x-0'", async () => {
    const dir = writeRepo(registry.host, {
      shop: { policy: '{ allow: ".*-rc.*", range: "^1.x-0" }', running: "1.0.0" },
    });
    const { output } = await plan(dir);
    expect(output.changes).toEqual([
      expect.objectContaining({ image: "shop", from: "1.0.0", to: "1.2.0-rc.2" }),
    ]);
    rmSync(dir, { recursive: true });
  });

  it("keeps 2.0.0 under a range narrowed to 1.x and prints why; with allowDowngrade plans 1.9.0", async () => {
    const kept = writeRepo(registry.host, { api: { policy: '{ range: "1.x" }', running: "2.0.0" } });
    const first = await plan(kept);
    expect(first.code).toBe(3);
    expect(first.output.notices).toEqual([
      {
        environment: "staging",
        image: "api",
        message: expect.stringMatching(
          /^running 2\.0\.0 is outside the policy \(semver 1\.x\).*allowDowngrade: true/,
        ),
      },
    ]);
    expect(first.text).toMatch(/^staging {2}api {2}notice: running 2\.0\.0 is outside the policy/m);
    rmSync(kept, { recursive: true });

    const back = writeRepo(registry.host, {
      api: { policy: '{ range: "1.x", allowDowngrade: true }', running: "2.0.0" },
    });
    const second = await plan(back);
    expect(second.output.changes).toEqual([
      expect.objectContaining({ image: "api", from: "2.0.0", to: "1.9.0" }),
    ]);
    expect(second.output.notices[0]?.message).toBe(
      "running 2.0.0 is outside the policy (semver 1.x): allowDowngrade moves it back to 1.9.0",
    );
    rmSync(back, { recursive: true });
  });
});
