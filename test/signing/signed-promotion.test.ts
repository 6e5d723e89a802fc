import { rmSync } from "node:fs";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import type { PlanReport } from "../../src/cli/plan.js";
import { parseNotices } from "../../src/core/pr/dashboard.js";
import type { FerryServer } from "../../src/server/ferry-server.js";
import { type GitHubEmulator, accounts, inspect, repos } from "../../packages/sandbox/src/github/index.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import type { RunningDistribution } from "../support/registry-distribution.js";
import { generateKeyPair, pushSignature, signWithKey } from "./cosign-artifacts.js";
import { COSIGN_VERSION, cosignBinary, createSigner, type Signer } from "./cosign-cli.js";
import { captureIo } from "../support/cli-io.js";
import {
  startNotifiedDistribution,
  type NotifiedDistributionWorld,
} from "../support/notified-distribution-world.js";
import { writeTempTree } from "../support/temp-tree.js";

/**
 * The route a user and an attacker take: images pushed to a real CNCF distribution 2.8 (no
 * referrers API), notified to `ferry serve`, signed with cosign (the CLI when build-cosign.sh has
 * built it, else the same artifacts from node:crypto), config merged in the GitHub emulator.
 */

function configRepo(host: string, publicPem: string, staging: string, prod: string): Record<string, string> {
  const key = publicPem
    .trim()
    .split("\n")
    .map((line) => `          ${line}`)
    .join("\n");
  return {
    ".github/ferry.yml": `images:\n  shop:\n    repository: ${host}/acme/shop\n    policy:\n      range: "^1.0.0"\n      verify:\n        name: acme/shop release key\n        key: |\n${key}\nenvironments:\n  staging:\n    paths: [overlays/staging]\n    merge: review\n  prod:\n    paths: [overlays/prod]\n    from: staging\n    update: manual\n`,
    "overlays/staging/kustomization.yaml": `resources: []\nimages:\n  - name: ${host}/acme/shop\n    newTag: "${staging}"\n`,
    "overlays/prod/kustomization.yaml": `resources: []\nimages:\n  - name: ${host}/acme/shop\n    newTag: "${prod}"\n`,
  };
}

async function plan(dir: string, env: string): Promise<PlanReport> {
  const io = captureIo(dir);
  await main(["plan", "--env", env, "--json"], io);
  expect(io.err).toBe("");
  return JSON.parse(io.out) as PlanReport;
}

const SIGNED_WITH =
  cosignBinary() !== undefined ? `cosign ${COSIGN_VERSION}` : "node:crypto (cosign not built)";

describe(`signed images through ferry serve and a real distribution registry, signed with ${SIGNED_WITH}`, () => {
  let distribution: RunningDistribution;
  let emu: GitHubEmulator;
  let server: FerryServer;
  let world: NotifiedDistributionWorld;
  let signer: Signer;
  let name: string;
  let octokit: Octokit;
  const WEBHOOK_SECRET = "signed-e2e-webhook-secret";
  const NOTIFY_SECRET = "Bearer notify-secret-5e1b";
  const STATUS_TOKEN = "status-token-5e1b";

  async function stagingPull(): Promise<{ title: string; head: { sha: string } } | undefined> {
    return (await inspect.listPulls(emu, "acme", "config")).find(
      (pull: { head: { ref: string } }) => pull.head.ref === "ferry/staging",
    );
  }

  beforeAll(async () => {
    signer = createSigner();
    world = await startNotifiedDistribution({
      webhookSecret: WEBHOOK_SECRET,
      notifySecret: NOTIFY_SECRET,
      server: {
        status: { token: STATUS_TOKEN },
      },
    });
    ({ emu, server, distribution } = world);
    name = `${distribution.host}/acme/shop`;
    await pushImage(distribution.url, "acme/shop", "1.8.0", { content: "1.8.0" });
    const mona = accounts.createUser(emu, "mona");
    await repos.createRepo(emu, "acme", "config", {
      files: configRepo(distribution.host, signer.publicPem, "1.8.0", "1.8.0"),
      collaborators: { mona: "maintain" },
    });
    accounts.installApp(emu, world.appId, "acme");
    octokit = new Octokit({ baseUrl: emu.apiUrl, auth: mona.token, request: { retries: 0 } });
  });
  afterAll(async () => {
    await world?.close();
  });

  it("opens a staging PR for a signed 1.9.0, not for an unsigned 1.9.1 pushed after it, and says why", async () => {
    let before = await world.hints();
    const signed = await pushImage(distribution.url, "acme/shop", "1.9.0", { content: "1.9.0" });
    await world.settleAfter(before);
    // Pushed but not yet signed: not eligible.
    expect(await stagingPull()).toBeUndefined();

    before = await world.hints();
    await signer.sign(distribution.url, "acme/shop", name, signed.digest);
    // The signature's own push notifies Ferry, which looks again and now finds 1.9.0 signed.
    await world.settleAfter(before);
    expect((await stagingPull())?.title).toBe("Promote shop 1.9.0 to staging");

    before = await world.hints();
    await pushImage(distribution.url, "acme/shop", "1.9.1", { content: "1.9.1" });
    await world.settleAfter(before);
    const pull = await stagingPull();
    expect(pull?.title).toBe("Promote shop 1.9.0 to staging");
    const overlay = await inspect.readFile(
      emu,
      "acme",
      "config",
      pull!.head.sha,
      "overlays/staging/kustomization.yaml",
    );
    expect(overlay).toContain('newTag: "1.9.0"');

    // The dashboard the periodic scan keeps says why 1.9.1 is not proposed.
    await server.scanNow();
    await server.idle();
    const { data: issues } = await octokit.rest.issues.listForRepo({
      owner: "acme",
      repo: "config",
      state: "open",
    });
    const dashboard = issues.find((issue) => issue.title === "Ferry dashboard");
    expect(parseNotices(dashboard?.body)).toEqual([
      {
        environment: "staging",
        image: "shop",
        message: expect.stringMatching(
          /^1\.9\.1 not signed by acme\/shop release key \(no cosign signature found/,
        ),
      },
    ]);

    // GET /status and the `/ferry status` command say the same.
    const status = (await (
      await fetch(`${server.url}/status`, { headers: { authorization: `Bearer ${STATUS_TOKEN}` } })
    ).json()) as Record<string, { notices?: { message: string }[] }>;
    expect(status["acme/config"]?.notices?.map((notice) => notice.message)).toEqual([
      expect.stringMatching(/^1\.9\.1 not signed by acme\/shop release key/),
    ]);
    const { data: issue } = await octokit.rest.issues.create({
      owner: "acme",
      repo: "config",
      title: "Release",
    });
    await octokit.rest.issues.createComment({
      owner: "acme",
      repo: "config",
      issue_number: issue.number,
      body: "/ferry status",
    });
    let reply: string | undefined;
    for (let i = 0; i < 200 && reply === undefined; i++) {
      await emu.idle();
      await server.idle();
      const { data: comments } = await octokit.rest.issues.listComments({
        owner: "acme",
        repo: "config",
        issue_number: issue.number,
      });
      reply = comments.find((comment) => comment.body?.includes("| Environment |"))?.body;
      if (reply === undefined) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(reply).toMatch(/staging\*\* \/ shop: 1\\\.9\\\.1 not signed by acme\/shop release key/);

    // What `ferry plan` shows on a checkout of the PR's branch: the reason 1.9.1 is not taken.
    const dir = writeTempTree(
      "ferry-signed-",
      configRepo(distribution.host, signer.publicPem, "1.9.0", "1.8.0"),
    );
    const report = await plan(dir, "staging");
    expect(report.changes).toEqual([]);
    expect(report.unchanged).toEqual([
      expect.objectContaining({
        image: "shop",
        reason: expect.stringMatching(
          /^1\.9\.1 not signed by acme\/shop release key \(no cosign signature found/,
        ),
      }),
    ]);
    rmSync(dir, { recursive: true });
  });

  it.each([
    [
      "1.9.2",
      "another key",
      /^1\.9\.2 not signed by acme\/shop release key \(.*does not verify with the key/,
    ],
    ["1.9.3", "the right key for another digest", /^1\.9\.3 not signed by .*signature is for another digest/],
    [
      "1.9.4",
      "the right key over a payload edited afterwards",
      /^1\.9\.4 not signed by .*does not verify with the key/,
    ],
  ])(
    "does not choose %s, signed with %s, and says why",
    async (tag, _what, reason) => {
      const pushed = await pushImage(distribution.url, "acme/shop", tag, { content: tag });
      const sibling = await pushImage(distribution.url, "acme/shop", `${tag}-sibling`, {
        content: `${tag}-x`,
      });
      const signBytes = tag === "1.9.2" ? signWithKey(generateKeyPair().privateKey) : signer.signBytes;
      await pushSignature(distribution.url, "acme/shop", name, pushed.digest, signBytes, {
        ...(tag === "1.9.3" ? { payloadDigest: sibling.digest } : {}),
        ...(tag === "1.9.4" ? { tamper: true } : {}),
      });
      const dir = writeTempTree(
        "ferry-signed-",
        configRepo(distribution.host, signer.publicPem, "1.9.1", "1.8.0"),
      );
      const report = await plan(dir, "staging");
      expect(report.changes).toEqual([]);
      expect(report.unchanged).toEqual([
        expect.objectContaining({ image: "shop", reason: expect.stringMatching(reason) }),
      ]);
      expect(report.notices).toEqual([
        expect.objectContaining({ image: "shop", message: expect.stringMatching(reason) }),
      ]);
      rmSync(dir, { recursive: true });
    },
    60_000,
  );

  it("refuses to promote to prod a digest staging runs but nobody signed", async () => {
    // Someone edited staging to run the unsigned 1.9.1: `from: staging` carries its exact digest.
    const dir = writeTempTree(
      "ferry-signed-",
      configRepo(distribution.host, signer.publicPem, "1.9.1", "1.8.0"),
    );
    const report = await plan(dir, "prod");
    expect(report.changes).toEqual([]);
    expect(report.unchanged).toEqual([
      expect.objectContaining({
        image: "shop",
        reason: expect.stringMatching(
          /^1\.9\.1 not signed by acme\/shop release key \(sha256:[0-9a-f]{12}: no cosign/,
        ),
      }),
    ]);
    rmSync(dir, { recursive: true });
  });

  it("promotes to prod the signed digest staging runs", async () => {
    const dir = writeTempTree(
      "ferry-signed-",
      configRepo(distribution.host, signer.publicPem, "1.9.0", "1.8.0"),
    );
    const report = await plan(dir, "prod");
    expect(report.changes).toEqual(
      expect.arrayContaining([expect.objectContaining({ environment: "prod", from: "1.8.0", to: "1.9.0" })]),
    );
    rmSync(dir, { recursive: true });
  });
});
