import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import { formatPlanReport, type PlanReport } from "../../src/cli/plan.js";
import type { FerryServer } from "../../src/server/ferry-server.js";
import { type GitHubEmulator, accounts, inspect, repos } from "../../packages/sandbox/src/github/index.js";
import {
  startEmbeddedRegistry,
  type EmbeddedRegistry,
} from "../../packages/sandbox/src/registry/embedded-registry.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import type { RunningDistribution } from "../support/registry-distribution.js";
import { captureIo } from "../support/cli-io.js";
import {
  startNotifiedDistribution,
  type NotifiedDistributionWorld,
} from "../support/notified-distribution-world.js";
import { writeTempTree } from "../support/temp-tree.js";

function configRepo(registryHost: string, staging: string, prod: string): Record<string, string> {
  return {
    ".github/ferry.yml": `images:\n  shop:\n    repository: ${registryHost}/acme/shop\n    policy: { range: "^1.0.0" }\nenvironments:\n  staging:\n    paths: [overlays/staging]\n    merge: auto\n  prod:\n    paths: [overlays/prod]\n    from: staging\n    update: manual\n`,
    "overlays/staging/kustomization.yaml": `resources:\n  - ../../base\nimages:\n  - name: ${registryHost}/acme/shop\n    newTag: "${staging}" # staging follows the registry\n`,
    "overlays/prod/kustomization.yaml": `resources:\n  - ../../base\nimages:\n  - name: ${registryHost}/acme/shop\n    newTag: "${prod}"\n`,
  };
}

describe("ferry plan against the embedded registry", () => {
  let registry: EmbeddedRegistry;
  const digests: Record<string, string> = {};
  beforeAll(async () => {
    registry = await startEmbeddedRegistry();
    for (const tag of ["1.6.0", "1.7.3", "1.8.0", "2.0.0", "latest"])
      digests[tag] = (await pushImage(registry.url, "acme/shop", tag, { content: tag })).digest;
  });
  afterAll(async () => registry.close());

  it("prints staging's next tag within its range and prod's promotion to exactly what staging runs", async () => {
    const dir = writeTempTree("ferry-plan-", configRepo(registry.host, "1.7.3", "1.6.0"));
    const io = captureIo(dir);
    const code = await main(["plan", "--json"], io);
    expect(io.err).toBe("");
    expect(code).toBe(0);
    const output = JSON.parse(io.out) as PlanReport;
    expect(output.changes).toEqual([
      expect.objectContaining({
        environment: "staging",
        image: "shop",
        file: "overlays/staging/kustomization.yaml",
        line: 5,
        from: "1.7.3",
        to: "1.8.0",
        digest: digests["1.8.0"],
      }),
      // prod gets staging's version and its exact digest (written next to the tag).
      expect.objectContaining({
        environment: "prod",
        image: "shop",
        file: "overlays/prod/kustomization.yaml",
        from: "1.6.0",
        to: "1.7.3",
        digest: digests["1.7.3"],
      }),
      expect.objectContaining({
        environment: "prod",
        image: "shop",
        line: 6,
        from: "",
        to: digests["1.7.3"],
      }),
    ]);
    expect(output.changes[0]!.reason).toMatch(/\^1\.0\.0/);
    expect(output.changes[1]!.reason).toMatch(/promotion from staging/);
    rmSync(dir, { recursive: true });
  });

  it("says, for an image CI-gated on its source repo, that the app proposes the tag only once its commit passed CI", async () => {
    const files = configRepo(registry.host, "1.7.3", "1.6.0");
    files[".github/ferry.yml"] = files[".github/ferry.yml"]!.replace(
      "acme/shop\n    policy",
      "acme/shop\n    source: acme/shop\n    policy",
    );
    const dir = writeTempTree("ferry-plan-", files);
    const io = captureIo(dir);
    expect(await main(["plan", "--env", "staging"], io)).toBe(0);
    expect(io.out).toContain(
      "staging  shop  notice: CI gating: the app proposes 1.8.0 only once the commit of tag 1.8.0 in acme/shop (the image has no org.opencontainers.image.revision label) passed CI in acme/shop",
    );
    rmSync(dir, { recursive: true });
  });

  it("exits 3 and says why when nothing would change", async () => {
    const dir = writeTempTree("ferry-plan-", configRepo(registry.host, "1.8.0", "1.8.0"));
    const io = captureIo(dir);
    expect(await main(["plan", "--dir", dir, "--env", "staging"], io)).toBe(3);
    expect(io.out).toMatch(/staging {2}shop {2}unchanged: .*1\.8\.0/);
    rmSync(dir, { recursive: true });
  });

  it("plans the images it can read and reports a missing repository as that image's error, exit 1", async () => {
    const files = configRepo(registry.host, "1.7.3", "1.7.3");
    files[".github/ferry.yml"] = files[".github/ferry.yml"]!.replace(
      "environments:",
      `  gone:\n    repository: ${registry.host}/acme/gone\nenvironments:`,
    );
    files["overlays/staging/kustomization.yaml"] +=
      `  - name: ${registry.host}/acme/gone\n    newTag: "1.0.0"\n`;
    const dir = writeTempTree("ferry-plan-", files);
    const io = captureIo(dir);
    expect(await main(["plan", "--env", "staging", "--json"], io)).toBe(1);
    const output = JSON.parse(io.out) as PlanReport;
    expect(output.changes).toEqual([expect.objectContaining({ image: "shop", to: "1.8.0" })]);
    expect(output.unchanged).toEqual([
      expect.objectContaining({
        image: "gone",
        error: true,
        reason: expect.stringMatching(/^registry error: /),
      }),
    ]);
    rmSync(dir, { recursive: true });
  });

  it("refuses an unknown environment and a broken config with exit 1", async () => {
    const dir = writeTempTree("ferry-plan-", configRepo(registry.host, "1.8.0", "1.8.0"));
    const io = captureIo(dir);
    expect(await main(["plan", "--env", "qa"], io)).toBe(1);
    expect(io.err).toMatch(/unknown environment "qa"/);
    writeFileSync(join(dir, ".github/ferry.yml"), "images: {}\nenvironments: { x: { paths: [../etc] } }\n");
    const broken = captureIo(dir);
    expect(await main(["plan"], broken)).toBe(1);
    expect(broken.err).toMatch(/\.github\/ferry\.yml:2:\d+ .*must not leave the repository/);
    rmSync(dir, { recursive: true });
  });
});

describe("ferry plan's text output", () => {
  it("says (none) where a field is added, as set-image does, instead of an empty gap", () => {
    const digest = `sha256:${"a".repeat(64)}`;
    const text = formatPlanReport({
      changes: [
        {
          environment: "prod",
          image: "shop",
          file: "overlays/prod/kustomization.yaml",
          line: 6,
          from: "",
          to: digest,
          digest,
          reason: "pinned",
        },
      ],
      unchanged: [],
      notices: [],
    });
    expect(text).toBe(
      `prod  shop  overlays/prod/kustomization.yaml:6  (none) -> ${digest}  sha256:aaaaaaaaaaaa  (pinned)\n`,
    );
  });
});

describe("ferry plan for an environment with from", () => {
  let registry: EmbeddedRegistry;
  beforeAll(async () => {
    registry = await startEmbeddedRegistry();
    for (const tag of ["1.0.0", "1.1.0"]) await pushImage(registry.url, "acme/web", tag, { content: tag });
  });
  afterAll(async () => registry.close());

  it("proposes nothing from the registry for an image its upstream does not run", async () => {
    const dir = writeTempTree("ferry-plan-", {
      ".github/ferry.yml": `images:\n  web:\n    repository: ${registry.host}/acme/web\nenvironments:\n  staging:\n    paths: [overlays/staging]\n  prod:\n    paths: [overlays/prod]\n    from: staging\n`,
      "overlays/staging/kustomization.yaml": "resources: []\n",
      "overlays/prod/web.yaml": `spec:\n  containers:\n  - image: ${registry.host}/acme/web:1.0.0\n`,
    });
    const io = captureIo(dir);
    expect(await main(["plan", "--env", "prod", "--json"], io)).toBe(3);
    expect(JSON.parse(io.out)).toEqual({
      changes: [],
      unchanged: [
        { environment: "prod", image: "web", reason: expect.stringMatching(/staging does not run web/) },
      ],
      notices: [],
    });
    rmSync(dir, { recursive: true });
  });
});

describe("ferry plan when a registry cannot be reached", () => {
  it("says which registry in one line, without calling it an internal error, and exits 1", async () => {
    const host = "127.0.0.1:1";
    const dir = writeTempTree("ferry-plan-", configRepo(host, "1.7.3", "1.7.3"));
    const io = captureIo(dir);
    expect(await main(["plan", "--env", "staging"], io)).toBe(1);
    expect(io.out).toMatch(
      /^staging {2}shop {2}unchanged: registry error: 127\.0\.0\.1:1: unreachable .*\n$/,
    );
    expect(io.err).toBe("ferry plan: staging/shop could not be planned (registry errors above)\n");
    rmSync(dir, { recursive: true });
  });
});

describe("a push to a real CNCF distribution registry, notified to ferry serve's distribution route", () => {
  let distribution: RunningDistribution;
  let emu: GitHubEmulator;
  let server: FerryServer;
  let world: NotifiedDistributionWorld;
  const WEBHOOK_SECRET = "plan-e2e-webhook-secret";
  const NOTIFY_SECRET = "Bearer notify-secret-7f3a";
  beforeAll(async () => {
    world = await startNotifiedDistribution({
      webhookSecret: WEBHOOK_SECRET,
      notifySecret: NOTIFY_SECRET,
    });
    ({ emu, server, distribution } = world);
    await pushImage(distribution.url, "acme/shop", "1.7.3", { content: "old" });
    await repos.createRepo(emu, "acme", "config", { files: configRepo(distribution.host, "1.7.3", "1.7.3") });
    accounts.installApp(emu, world.appId, "acme");
  });
  afterAll(async () => {
    await world?.close();
  });

  it("opens the staging PR Ferry verified against the registry, and ferry plan on a checkout proposes the same tag and digest", async () => {
    const pushed = await pushImage(distribution.url, "acme/shop", "1.8.0", { content: "new" });
    // Distribution notifies asynchronously and Ferry re-reads the registry: wait (bounded by count) for the PR.
    let pull: { head: { sha: string }; title: string } | undefined;
    for (let i = 0; i < 200 && !pull; i++) {
      await new Promise((r) => setTimeout(r, 50));
      pull = (await inspect.listPulls(emu, "acme", "config")).find(
        (p: { head: { ref: string } }) => p.head.ref === "ferry/staging",
      );
    }
    expect(pull?.title).toBe("Promote shop 1.8.0 to staging");
    const overlay = await inspect.readFile(
      emu,
      "acme",
      "config",
      pull!.head.sha,
      "overlays/staging/kustomization.yaml",
    );
    expect(overlay).toContain('newTag: "1.8.0" # staging follows the registry');
    expect(await server.metrics.getSingleMetricAsString("ferry_registry_hints_total")).toMatch(
      /ferry_registry_hints_total [1-9]/,
    );

    const dir = writeTempTree("ferry-plan-", configRepo(distribution.host, "1.7.3", "1.7.3"));
    const io = captureIo(dir);
    expect(await main(["plan", "--env", "staging", "--json"], io)).toBe(0);
    const output = JSON.parse(io.out) as PlanReport;
    expect(output.changes).toEqual([
      expect.objectContaining({ environment: "staging", from: "1.7.3", to: "1.8.0", digest: pushed.digest }),
    ]);
    rmSync(dir, { recursive: true });
  });
});
