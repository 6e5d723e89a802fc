import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import {
  startEmbeddedRegistry,
  type EmbeddedRegistry,
} from "../../packages/sandbox/src/registry/embedded-registry.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { captureIo } from "../support/cli-io.js";

/** `ferry plan --why IMAGE[@TAG]`: the reason chain for one tag, from a checkout and a registry. */
describe("ferry plan --why", () => {
  let registry: EmbeddedRegistry;
  let dir: string;
  beforeAll(async () => {
    registry = await startEmbeddedRegistry();
    const host = new URL(registry.url).host;
    // 1.9.0 was built an hour before the test's clock: too young for staging's minAge of 1d.
    await pushImage(registry.url, "acme/shop", "1.8.0", {
      content: "1.8.0",
      created: new Date("2026-11-01T00:00:00Z"),
    });
    await pushImage(registry.url, "acme/shop", "1.9.0", {
      content: "1.9.0",
      created: new Date(Date.now() - 3600_000),
    });
    await pushImage(registry.url, "acme/shop", "2.0.0-rc.1", { content: "rc" });
    dir = mkdtempSync(join(tmpdir(), "ferry-plan-why-"));
    const files: Record<string, string> = {
      ".github/ferry.yml": [
        "images:",
        "  shop:",
        `    repository: ${host}/acme/shop`,
        "    policy: {strategy: semver, minAge: 1d}",
        "environments:",
        "  staging:",
        "    paths: [overlays/staging]",
        "  prod:",
        "    paths: [overlays/prod]",
        "    from: staging",
        "    update: manual",
        "",
      ].join("\n"),
      "overlays/staging/kustomization.yaml": `images:\n  - name: ${host}/acme/shop\n    newTag: "1.7.0"\n`,
      "overlays/prod/kustomization.yaml": `images:\n  - name: ${host}/acme/shop\n    newTag: "1.7.0"\n`,
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
  });
  afterAll(async () => {
    await registry.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("without a tag explains the policy's newest: 1.9.0 is too young for minAge", async () => {
    const io = captureIo(dir);
    expect(await main(["plan", "--env", "staging", "--why", "shop"], io)).toBe(0);
    expect(io.err).toBe("");
    expect(io.out).toMatch(/^shop@1\.9\.0 in staging: not used: metadata: .*minAge/m);
  });

  it("with a tag: a prerelease is refused by the policy; in prod, by update: manual and the upstream", async () => {
    const io = captureIo(dir);
    expect(await main(["plan", "--why", "shop@2.0.0-rc.1", "--json"], io)).toBe(0);
    const answers = JSON.parse(io.out) as {
      environment: string;
      summary: string;
      steps: { check: string; verdict: string; detail: string }[];
    }[];
    expect(answers.map((answer) => answer.environment)).toEqual(["staging", "prod"]);
    expect(answers[0]!.summary).toMatch(/policy: .*prerelease/);
    const prod = answers[1]!.steps;
    expect(prod.find((step) => step.check === "update")?.verdict).toBe("waits");
    expect(prod.find((step) => step.check === "upstream")?.detail).toMatch(/staging runs 1\.7\.0/);
    // What only the App can know is said to be unknown, not passed.
    expect(prod.find((step) => step.check === "floor")?.verdict).toBe("n/a");
  });

  it("an unknown image is a one-line error", async () => {
    const io = captureIo(dir);
    expect(await main(["plan", "--why", "nope"], io)).toBe(1);
    expect(io.err.trim().split("\n")).toHaveLength(1);
    expect(io.err).toMatch(/unknown image "nope"/);
  });
});
