/**
 * docs/reliability.md rows 7–9 and 21–23 (goals G2, G3, G5, G6, G7) and row 25 (G10) against the
 * whole app: the real Ferry server(s) on the GitHub emulator and the embedded registry, every
 * credential a canary. Figures: events tried, duplicates that had an effect, events lost, canary hits.
 */
import { execFileSync } from "node:child_process";
import fc from "fast-check";
import semver from "semver";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { RegistryHint } from "../../src/handlers/registry/index.js";
import type { FerryServer } from "../../src/server/ferry-server.js";
import { CanaryWatch } from "../support/canary.js";
import { startAppWorld, type AppWorld } from "../support/reliability-app-world.js";
import { send } from "../support/raw-http.js";
import { finishFile, ledgerFile, record } from "../support/reliability-ledger.js";
import { inspect } from "../../packages/sandbox/src/github/index.js";

ledgerFile("app-github");

const canary = new CanaryWatch();
afterAll(() => finishFile("app-github"));

/** Runs `body` on a fresh world, then scans everything it produced for canaries and closes it. */
async function withWorld(
  body: (world: AppWorld) => Promise<void>,
  options: Parameters<typeof startAppWorld>[1] = {},
): Promise<void> {
  const world = await startAppWorld(canary, options);
  try {
    await body(world);
  } finally {
    await world.settle().catch(() => undefined);
    await world.scanEverything();
    await world.close();
  }
}

/** The refs the emulator sees forced (not a fast-forward) from now on. */
function watchForcedPushes(world: AppWorld): { readonly forced: string[] } {
  const from = world.emu.forcedRefUpdates.length;
  return {
    get forced() {
      return world.emu.forcedRefUpdates.slice(from).map((update) => update.ref);
    },
  };
}

const stagingPulls = async (world: AppWorld) =>
  (await world.pulls()).filter((pull) => pull.head.ref === "ferry/staging");

describe("row 7 (G2): duplicates have one effect", () => {
  it("row 7: a push replayed 1–5 times (registry re-notifications and GitHub redeliveries) gives one branch, one PR and one commit", async () => {
    const replayCounts = fc.sample(fc.integer({ min: 1, max: 5 }), { seed: 7, numRuns: 2 });
    let tried = 0;
    let duplicateEffects = 0;
    let lost = 0;
    for (const replays of replayCounts) {
      await withWorld(async (world) => {
        await world.push("1.8.0");
        tried++;
        for (let i = 0; i < replays; i++) {
          // Same tag, same digest: the registry notifies again (a semantic duplicate, new delivery).
          await world.push("1.8.0");
          // And every GitHub delivery so far is redelivered with its original delivery id.
          for (const delivery of world.emu.webhooks.deliveries().filter((d) => !d.redelivery))
            world.emu.webhooks.redeliver(delivery.id);
          // And a different delivery naming the same repository and tag.
          await world.server.ferry.hint(world.server.probot, [
            {
              source: "generic",
              registry: world.registry.host,
              repository: "acme/shop",
              tag: "1.8.0",
            } satisfies RegistryHint,
          ]);
          tried += 3;
        }
        await world.settle();
        const pulls = await stagingPulls(world);
        const commits = await world.branchCommits("staging");
        if (pulls.length === 0) lost++;
        duplicateEffects += Math.max(0, pulls.length - 1) + Math.max(0, commits.length - 1);
        expect(pulls.map((pull) => pull.title)).toEqual(["Promote shop 1.8.0 to staging"]);
        expect(commits).toHaveLength(1);
        expect(await world.stagingTag()).toBe("1.8.0");
      });
    }
    record("app: duplicate events", { tried, sideEffects: duplicateEffects, eventsLost: lost });
  });
});

describe("row 8 (G3): order does not matter and nothing moves backwards", () => {
  it("row 8: tags pushed in any order end on the newest, and the staging PR never names an older tag than before", async () => {
    const orders = fc.sample(
      fc.shuffledSubarray(["1.8.0", "1.8.1", "1.9.0"], { minLength: 3, maxLength: 3 }),
      { seed: 8, numRuns: 2 },
    );
    let tried = 0;
    let downgrades = 0;
    for (const order of orders) {
      await withWorld(async (world) => {
        let highest = "1.7.0";
        for (const tag of order) {
          await world.push(tag);
          tried++;
          const staged = (await world.stagingTag()) ?? "1.7.0";
          if (semver.lt(staged, highest)) downgrades++;
          expect(
            semver.gte(staged, highest),
            `after pushing ${order.join(", ")}: ${staged} < ${highest}`,
          ).toBe(true);
          highest = staged;
        }
        expect(await world.stagingTag()).toBe("1.9.0");
        expect(await stagingPulls(world)).toHaveLength(1);
      });
    }
    record("app: out-of-order events", { tried, sideEffects: downgrades });
  });
});

describe("row 9 (G5): a crash right after the ack loses nothing", () => {
  it("row 9: Ferry killed after acknowledging a registry webhook; the periodic scan of a fresh instance opens the PR", async () => {
    let lost = 0;
    // The first instance holds hints for a minute before acting: it is closed (killed) first.
    await withWorld(
      async (world) => {
        await world.push("1.8.0");
        await world.server.close();
        expect(await stagingPulls(world)).toEqual([]);
        const fresh: FerryServer = await world.startReplica({ registryCoalesceMs: 20 });
        await fresh.scanNow();
        await world.settle();
        const pulls = await stagingPulls(world);
        if (pulls.length !== 1) lost++;
        expect(pulls.map((pull) => pull.title)).toEqual(["Promote shop 1.8.0 to staging"]);
      },
      { server: { registryCoalesceMs: 60_000 } },
    );
    record("app: crash after ack", { tried: 1, eventsLost: lost });
  });
});

describe("rows 21–23 (G6, G7): GitHub faults", () => {
  it("row 21: primary and secondary rate limits defer the promotion, never drop it, and retries stay bounded", async () => {
    let lost = 0;
    await withWorld(
      async (world) => {
        world.emu.faults.rateLimit({ kind: "secondary", count: 2, retryAfterSeconds: 1 });
        world.emu.faults.rateLimit({ kind: "primary", count: 1, retryAfterSeconds: 1 });
        await world.push("1.8.0");
        // Deferred work lands once the limits lift (bounded by rounds, not by time).
        for (let round = 0; round < 20 && (await stagingPulls(world)).length === 0; round++)
          await world.settle();
        const limited = world.emu
          .requests()
          .filter((request) => request.status === 403 || request.status === 429);
        if ((await stagingPulls(world)).length !== 1) lost++;
        expect(await stagingPulls(world)).toHaveLength(1);
        // Each armed limit answered exactly once: no hot loop against a limited API.
        expect(limited).toHaveLength(3);
      },
      { server: { Octokit: undefined } },
    );
    record("app: GitHub rate limits", { tried: 3, eventsLost: lost });
  });

  it("row 21: GitHub 5xx during a promotion is retried or deferred and the periodic scan completes it", async () => {
    let lost = 0;
    await withWorld(async (world) => {
      world.emu.faults.serverError({ status: 502, count: 3 });
      await world.push("1.8.0");
      // The scheduler catches a failed scan and runs it again next interval: up to 5 intervals here.
      for (let interval = 0; interval < 5 && (await stagingPulls(world)).length === 0; interval++) {
        await world.server.scanNow().catch(() => undefined);
        await world.settle();
      }
      if ((await stagingPulls(world)).length !== 1) lost++;
      expect(await stagingPulls(world)).toHaveLength(1);
      expect(await world.branchCommits("staging")).toHaveLength(1);
    });
    record("app: GitHub 5xx", { tried: 1, eventsLost: lost });
  });

  it("row 21: a sync that GitHub's 5xx outlasts is retried by the work queue after a growing delay, with no scan", async () => {
    let lost = 0;
    await withWorld(
      async (world) => {
        world.emu.faults.serverError({ status: 502, count: 4 });
        await world.pushOnly("1.8.0");
        await vi
          .waitFor(async () => expect(await stagingPulls(world)).toHaveLength(1), {
            timeout: 60_000,
            interval: 50,
          })
          .catch(() => lost++);
        expect(await stagingPulls(world)).toHaveLength(1);
        expect(world.logs.some((line) => line.includes("background task failed for now; retrying"))).toBe(
          true,
        );
      },
      { server: { ferry: { workRetry: { attempts: 8, firstDelayMs: 20, maxDelayMs: 200 } } } },
    );
    record("app: GitHub 5xx outlasting Octokit", { tried: 1, eventsLost: lost });
  });

  it("row 22 (G7): 50 concurrent promotions to one repository from 5 replicas lose no update and force nothing", async () => {
    let lost = 0;
    await withWorld(async (world) => {
      const replicas = [
        world.server,
        ...(await Promise.all(Array.from({ length: 4 }, () => world.startReplica()))),
      ];
      const forced = watchForcedPushes(world);
      const mainBefore = await inspect.branchSha(world.emu, "acme", "config", "main");
      const tags = Array.from({ length: 10 }, (_, i) => `1.8.${i}`);
      world.emu.faults.refRace({ ref: "heads/ferry/staging", count: 5 });
      const hint: RegistryHint = {
        source: "generic",
        registry: world.registry.host,
        repository: "acme/shop",
      };
      // Pushes of ten new tags race 50 promotions spread over five replicas (no shared lock).
      const hints: Promise<void>[] = [];
      const pushes = (async () => {
        for (const tag of tags) await world.pushOnly(tag);
      })();
      for (let i = 0; i < 50; i++) {
        await new Promise((resolve) => setImmediate(resolve));
        const replica = replicas[i % replicas.length]!;
        hints.push(replica.ferry.hint(replica.probot, [hint]));
        if (i % 5 === 4) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // The race is only over once every tag is in the registry: under load the 50 hints can all be
      // handled before the last push lands. Each push comes with its notification in real life, so
      // the last one is delivered after the last push, to a replica the race did not end on.
      await pushes;
      hints.push(replicas[1]!.ferry.hint(replicas[1]!.probot, [hint]));
      await Promise.all(hints);
      // No periodic scan here: the last push wins through its own notification.
      await world.settle();
      const pulls = await stagingPulls(world);
      const open = pulls.filter((pull) => pull.state === "open");
      if ((await world.stagingTag()) !== "1.8.9") lost++;
      expect(open).toHaveLength(1);
      expect(await world.stagingTag()).toBe("1.8.9");
      expect(open[0]!.title).toBe("Promote shop 1.8.9 to staging");
      expect(forced.forced).toEqual([]);
      // main was never written by Ferry.
      expect(await inspect.branchSha(world.emu, "acme", "config", "main")).toBe(mainBefore);
    });
    record("app: concurrent promotions", { tried: 50, eventsLost: lost });
  });
});

describe("row 10: a hint is only a hint", () => {
  it("row 10: an authenticated notification naming a tag the registry does not have commits nothing", async () => {
    let sideEffects = 0;
    await withWorld(async (world) => {
      const body = JSON.stringify({
        events: [
          {
            id: "forged-1",
            action: "push",
            target: {
              mediaType: "application/vnd.oci.image.manifest.v1+json",
              digest: `sha256:${"f".repeat(64)}`,
              repository: "acme/shop",
              tag: "9.9.9",
              url: `http://${world.registry.host}/v2/acme/shop/manifests/9.9.9`,
            },
            request: { host: world.registry.host, method: "PUT" },
          },
        ],
      });
      const response = await send(world.server.url, {
        path: "/registry/distribution",
        headers: [
          ["Content-Type", "application/vnd.docker.distribution.events.v1+json"],
          ["Authorization", world.secrets.registryWebhook],
        ],
        body,
      });
      expect(response.status).toBe(202);
      await world.settle();
      const pulls = await stagingPulls(world);
      sideEffects += pulls.length;
      expect(pulls).toEqual([]);
      expect(await inspect.branchSha(world.emu, "acme", "config", "ferry/staging")).toBeUndefined();
    });
    record("app: forged registry hints", { tried: 1, sideEffects });
  });
});

describe("row 15: symlinks in the config repo are never written through", () => {
  it("row 15: a symlink under an environment path pointing at a workflow file leaves the workflow and the link untouched", async () => {
    let sideEffects = 0;
    await withWorld(async (world) => {
      const workflow = `jobs:\n  deploy:\n    container:\n      image: ${world.registry.host}/acme/shop:1.7.0\n`;
      const mainSha = (await inspect.branchSha(world.emu, "acme", "config", "main"))!;
      const kit = world.mona;
      const { data: base } = await kit.rest.git.getCommit({
        owner: "acme",
        repo: "config",
        commit_sha: mainSha,
      });
      const { data: tree } = await kit.rest.git.createTree({
        owner: "acme",
        repo: "config",
        base_tree: base.tree.sha,
        tree: [
          { path: ".github/workflows/deploy.yml", mode: "100644", type: "blob", content: workflow },
          {
            path: "overlays/staging/linked.yaml",
            mode: "120000",
            type: "blob",
            content: "../../.github/workflows/deploy.yml",
          },
        ],
      });
      const { data: commit } = await kit.rest.git.createCommit({
        owner: "acme",
        repo: "config",
        message: "add a symlink",
        tree: tree.sha,
        parents: [mainSha],
      });
      await kit.rest.git.updateRef({ owner: "acme", repo: "config", ref: "heads/main", sha: commit.sha });
      await world.settle();
      await world.push("1.8.0");
      const head = await inspect.branchSha(world.emu, "acme", "config", "ferry/staging");
      expect(head).toBeDefined();
      const gitDir = world.emu.repo("acme", "config").git.gitDir;
      // The link really is a symlink in Git (mode 120000), so the test can see a write through it.
      expect(
        execFileSync("git", ["--git-dir", gitDir, "ls-tree", "main", "overlays/staging/linked.yaml"], {
          encoding: "utf8",
        }),
      ).toMatch(/^120000 /);
      const changed = execFileSync(
        "git",
        ["--git-dir", gitDir, "diff", "--name-only", `main...ferry/staging`],
        { encoding: "utf8" },
      )
        .split("\n")
        .filter(Boolean);
      const unexpected = changed.filter((file) => file !== "overlays/staging/kustomization.yaml");
      sideEffects += unexpected.length;
      expect(changed).toEqual(["overlays/staging/kustomization.yaml"]);
      expect(
        await inspect.readFile(world.emu, "acme", "config", "ferry/staging", ".github/workflows/deploy.yml"),
      ).toBe(workflow);
    });
    record("injection: symlinks in the config repo", { tried: 1, sideEffects });
  });
});

describe("row 25 (G10): no credential leaks anywhere the app writes or logs", () => {
  it("row 25: no canary (webhook secrets, private key, registry password, installation tokens) in logs, PRs, comments, checks or commits", () => {
    expect(canary.scanned).toBeGreaterThan(0);
    record("secrets: app logs, PRs, commits, comments, checks", {
      tried: canary.scanned,
      canaryHits: canary.hits.length,
    });
    expect(canary.hits).toEqual([]);
  });
});
