/**
 * Health from Argo CD, Flux and check runs, read by the GitHub adapter over real HTTP from the
 * emulator (docs/config.md "Health"). The writes are built from the engines' own formats
 * (docs/with-argocd.md "What Argo CD writes", docs/with-flux.md "What Flux writes"), and a report
 * counts only from the identity the config names: the login that created the commit status or
 * Deployment, the app id of the check run — as GitHub returns them (`creator.login`, `app.id`).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGitHubRepo, type GitHubRepoAdapter } from "../../../src/adapters/github/github-repo.js";
import { loadConfig } from "../../../src/core/config/load-config.js";
import { healthSourceOf, type HealthSource } from "../../../src/core/health/health-source.js";
import { installApp, startWorld, type World } from "../../support/github-emulator-world.js";

type CommitSource = Exclude<HealthSource, { kind: "deployments" }>;

/** The source `health:` of staging names, as Ferry reads it. */
function sourceOf(health: string): HealthSource {
  const loaded = loadConfig(`images:
  shop: { repository: ghcr.io/acme/shop }
environments:
  staging:
    paths: [overlays/staging]
    health: ${health}
`);
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  return healthSourceOf(loaded.config, "staging", "ferry[bot]");
}

describe("health from the engine that applies, against the emulator", () => {
  let world: World;
  let github: GitHubRepoAdapter;
  let head: string;
  beforeEach(async () => {
    world = await startWorld();
    const ferry = await installApp(world);
    github = createGitHubRepo(ferry.installation, "acme", "config");
    head = (await github.getBranch("main"))!.sha;
  });
  afterEach(async () => {
    await world.emu.close();
  });

  const read = (source: HealthSource) =>
    github.commitHealth({ source: source as CommitSource, branch: "main", commits: 20 });

  it("records a commit status's, a Deployment's and a check run's creator as GitHub returns it", async () => {
    const notifier = await installApp(world, {
      slug: "argocd-notifier",
      permissions: { statuses: "write", deployments: "write", checks: "write" },
    });
    const status = await notifier.installation.rest.repos.createCommitStatus({
      owner: "acme",
      repo: "config",
      sha: head,
      state: "success",
      context: "continuous-delivery/shop-staging",
    });
    expect(status.data.creator?.login).toBe("argocd-notifier[bot]");
    const listed = await world
      .as("mona")
      .rest.repos.listCommitStatusesForRef({ owner: "acme", repo: "config", ref: head });
    expect(listed.data[0]?.creator?.login).toBe("argocd-notifier[bot]");
    const run = await notifier.installation.rest.checks.create({
      owner: "acme",
      repo: "config",
      head_sha: head,
      name: "continuous-delivery/shop-staging",
      status: "completed",
      conclusion: "success",
    });
    expect(run.data.app?.id).toBe(notifier.appId);
    const { data: deployment } = await notifier.installation.rest.repos.createDeployment({
      owner: "acme",
      repo: "config",
      ref: head,
      environment: "staging",
      required_contexts: [],
      auto_merge: true,
    });
    expect((deployment as { creator: { login: string } }).creator.login).toBe("argocd-notifier[bot]");
    expect((deployment as { performed_via_github_app: { id: number } }).performed_via_github_app.id).toBe(
      notifier.appId,
    );
  });

  it("reads Argo CD's commit status on the synced revision, only from its reporter, the newest commit first", async () => {
    const source = sourceOf(
      `{ source: argocd, application: shop-staging, reporters: ["argocd-notifier[bot]"] }`,
    );
    const notifier = await installApp(world, { slug: "argocd-notifier", permissions: { statuses: "write" } });
    const post = (as: typeof notifier.installation, sha: string, state: "success" | "failure") =>
      as.rest.repos.createCommitStatus({
        owner: "acme",
        repo: "config",
        sha,
        state,
        context: "continuous-delivery/shop-staging",
        description: "Application shop-staging is now running new version of deployments manifests.",
      });
    expect(await read(source)).toBeUndefined();
    await post(notifier.installation, head, "success");
    // hubot may write to the repository: its "failure" in Argo CD's context is not Argo CD's.
    await post(world.as("hubot"), head, "failure");
    // Another Application's status on the same commit is not staging's.
    await notifier.installation.rest.repos.createCommitStatus({
      owner: "acme",
      repo: "config",
      sha: head,
      state: "failure",
      context: "continuous-delivery/shop-prod",
    });
    expect(await read(source)).toMatchObject({ sha: head, state: "success" });
    const next = await github.createCommit({
      baseTreeSha: (await github.getBranch("main"))!.treeSha,
      parents: [head],
      files: { "README.md": "next\n" },
      message: "next",
    });
    await github.updateRef("main", next.sha);
    // A newer commit with no report from Argo CD: the newest report is still the one on head.
    expect((await read(source))?.sha).toBe(head);
    await post(notifier.installation, next.sha, "failure");
    expect(await read(source)).toMatchObject({ sha: next.sha, state: "failure" });
  });

  it("reads Argo CD's Deployment statuses for its GitHub environment with deployment:", async () => {
    const source = sourceOf(
      `{ source: argocd, application: shop-staging, deployment: staging, reporters: ["argocd-notifier[bot]"] }`,
    );
    expect(source).toMatchObject({ kind: "deployments", environment: "staging" });
    const notifier = await installApp(world, {
      slug: "argocd-notifier",
      permissions: { deployments: "write" },
    });
    // notifications-engine: CreateDeployment{Ref: revision, Environment, RequiredContexts: [], AutoMerge: true}, then a status.
    const { data } = await notifier.installation.rest.repos.createDeployment({
      owner: "acme",
      repo: "config",
      ref: head,
      environment: "staging",
      required_contexts: [],
      auto_merge: true,
      transient_environment: false,
    });
    await notifier.installation.rest.repos.createDeploymentStatus({
      owner: "acme",
      repo: "config",
      deployment_id: (data as { id: number }).id,
      state: "success",
      description: "Application shop-staging is now running new version of deployments manifests.",
      environment: "staging",
      log_url: "http://127.0.0.1:8080/applications/shop-staging?operation=true",
    });
    if (source.kind !== "deployments") throw new Error("deployments expected");
    expect(await github.deploymentHealth(source.environment, source.reporters)).toMatchObject({
      sha: head,
      state: "success",
    });
    expect(await github.deploymentHealth(source.environment, ["hubot"])).toBeUndefined();
  });

  it("reads Flux's kind/name/<provider id> context, and not another object's", async () => {
    const source = sourceOf(`{ source: flux, kustomization: shop-staging, reporters: [hubot] }`);
    const post = (context: string, state: "success" | "failure") =>
      world.as("hubot").rest.repos.createCommitStatus({
        owner: "acme",
        repo: "config",
        sha: head,
        state,
        context,
        description: "reconciliation succeeded",
      });
    await post("kustomization/shop-staging-canary/7c2b5a04", "failure");
    await post("kustomization/shop-staging/7c2b5a04/extra", "failure");
    expect(await read(source)).toBeUndefined();
    await post("kustomization/shop-staging/7c2b5a04", "success");
    expect(await read(source)).toMatchObject({ state: "success", description: "reconciliation succeeded" });
  });

  it("reads a check run only from the app the config names, whatever its name", async () => {
    const deployer = await installApp(world, { slug: "deployer", permissions: { checks: "write" } });
    const other = await installApp(world, { slug: "other", permissions: { checks: "write" } });
    const source = sourceOf(`{ source: check-run, checkRun: deploy/staging, appId: ${deployer.appId} }`);
    const run = (as: typeof deployer.installation, conclusion: "success" | "failure") =>
      as.rest.checks.create({
        owner: "acme",
        repo: "config",
        head_sha: head,
        name: "deploy/staging",
        status: "completed",
        conclusion,
        completed_at: new Date().toISOString(),
      });
    await run(other.installation, "success");
    expect(await read(source)).toBeUndefined();
    await run(deployer.installation, "failure");
    expect(await read(source)).toMatchObject({ sha: head, state: "failure" });
  });
});
