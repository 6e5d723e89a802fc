import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import type { PlanReport } from "../../src/cli/plan.js";
import { parseNotices } from "../../src/core/pr/dashboard.js";
import type { FerryServer } from "../../src/server/ferry-server.js";
import { serverOptionsFromEnv } from "../../src/server/server-options.js";
import { type GitHubEmulator, accounts, inspect, repos } from "../../packages/sandbox/src/github/index.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import type { RunningDistribution } from "../support/registry-distribution.js";
import {
  BUNDLE_MEDIA_TYPE,
  createTestSigstore,
  pushReferrer,
  type TestSigstore,
} from "./sigstore-fixtures.js";
import { captureIo } from "../support/cli-io.js";
import { writeTempTree } from "../support/temp-tree.js";
import {
  startNotifiedDistribution,
  type NotifiedDistributionWorld,
} from "../support/notified-distribution-world.js";

/**
 * The GitHub Actions keyless setup of the README, end to end on the routes users take: images
 * pushed to a real distribution 2.8 and notified to `ferry serve`, each signed keyless by a
 * workflow identity (a bundle from the test's Fulcio-like CA and Rekor-like log, stored as an OCI
 * 1.1 referrer), the config merged in the GitHub emulator, the operator's trusted root given by
 * FERRY_SIGSTORE_TRUSTED_ROOT; and `ferry plan` on a checkout.
 */
const ISSUER = "https://token.actions.githubusercontent.com";
const RELEASE = (tag: string) =>
  `https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/v${tag}`;
const NIGHTLY = "https://github.com/acme/shop/.github/workflows/nightly.yml@refs/heads/main";

function configRepo(host: string, staging: string): Record<string, string> {
  return {
    ".github/ferry.yml": `images:\n  shop:\n    repository: ${host}/acme/shop\n    policy:\n      range: "^1.0.0"\n      verify:\n        issuer: ${ISSUER}\n        subject: "https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/v*"\nenvironments:\n  staging:\n    paths: [overlays/staging]\n    merge: review\n`,
    "overlays/staging/kustomization.yaml": `resources: []\nimages:\n  - name: ${host}/acme/shop\n    newTag: "${staging}"\n`,
  };
}

describe("keyless signatures from a GitHub Actions release workflow, through ferry serve and ferry plan", () => {
  let distribution: RunningDistribution;
  let emu: GitHubEmulator;
  let server: FerryServer;
  let world: NotifiedDistributionWorld;
  let sigstore: TestSigstore;
  let octokit: Octokit;
  let rootDir: string;
  let env: Record<string, string>;
  const WEBHOOK_SECRET = "keyless-e2e-webhook-secret";
  const NOTIFY_SECRET = "Bearer notify-secret-k3y1";

  /** Pushes `tag`, lets Ferry see it unsigned, then signs it; the signature's push is a hint too. */
  async function pushSigned(tag: string, subject: string): Promise<void> {
    let before = await world.hints();
    const { digest } = await pushImage(distribution.url, "acme/shop", tag, { content: tag });
    await world.settleAfter(before);
    before = await world.hints();
    const bundle = await sigstore.bundle({ digest, identity: { issuer: ISSUER, subject } });
    await pushReferrer(
      distribution.url,
      "acme/shop",
      digest,
      BUNDLE_MEDIA_TYPE,
      Buffer.from(JSON.stringify(bundle)),
    );
    await world.settleAfter(before);
  }

  beforeAll(async () => {
    sigstore = await createTestSigstore();
    rootDir = mkdtempSync(join(tmpdir(), "ferry-keyless-"));
    writeFileSync(join(rootDir, "trusted_root.json"), JSON.stringify(sigstore.trustedRoot));
    env = { FERRY_SIGSTORE_TRUSTED_ROOT: join(rootDir, "trusted_root.json") };
    world = await startNotifiedDistribution({
      webhookSecret: WEBHOOK_SECRET,
      notifySecret: NOTIFY_SECRET,
      server: {
        // What serverOptionsFromEnv makes of FERRY_SIGSTORE_TRUSTED_ROOT.
        ferry: serverOptionsFromEnv({ ...env, APP_ID: "1", PRIVATE_KEY: "x" }).ferry,
      },
    });
    ({ emu, server, distribution } = world);
    await pushImage(distribution.url, "acme/shop", "1.8.0", { content: "1.8.0" });
    const mona = accounts.createUser(emu, "mona");
    await repos.createRepo(emu, "acme", "config", {
      files: configRepo(distribution.host, "1.8.0"),
      collaborators: { mona: "maintain" },
    });
    accounts.installApp(emu, world.appId, "acme");
    octokit = new Octokit({ baseUrl: emu.apiUrl, auth: mona.token, request: { retries: 0 } });
  });
  afterAll(async () => {
    await world?.close();
    if (rootDir) rmSync(rootDir, { recursive: true, force: true });
  });

  it("opens a staging PR for 1.9.0 signed by the release workflow, not for 1.9.1 signed by the nightly one, and says why", async () => {
    await pushSigned("1.9.0", RELEASE("1.9.0"));
    const pulls = async () =>
      (await inspect.listPulls(emu, "acme", "config")).find(
        (pull: { head: { ref: string } }) => pull.head.ref === "ferry/staging",
      );
    expect((await pulls())?.title).toBe("Promote shop 1.9.0 to staging");

    await pushSigned("1.9.1", NIGHTLY);
    expect((await pulls())?.title).toBe("Promote shop 1.9.0 to staging");

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
        message: `1.9.1 not signed by acme/shop's release workflow (signed by ${NIGHTLY} (issuer ${ISSUER}))`,
      },
    ]);

    // `ferry plan` on a checkout of the PR's branch says the same.
    const dir = writeTempTree("ferry-keyless-plan-", configRepo(distribution.host, "1.9.0"));
    const io = captureIo(dir, { env });
    await main(["plan", "--env", "staging", "--json"], io);
    expect(io.err).toBe("");
    const report = JSON.parse(io.out) as PlanReport;
    expect(report.changes).toEqual([]);
    expect(report.unchanged).toEqual([
      expect.objectContaining({
        image: "shop",
        reason: expect.stringMatching(
          /^1\.9\.1 not signed by acme\/shop's release workflow \(signed by https:\/\/github\.com\/acme\/shop\/\.github\/workflows\/nightly\.yml/,
        ),
      }),
    ]);
    rmSync(dir, { recursive: true });
  });
});
