/**
 * End to end: custom resources that failed hold a promotion. staging's reconciler (the real one,
 * on the cluster simulator) applies a cert-manager Certificate, a Flux HelmRelease and an Argo
 * Rollout; their controllers then write the status documents of Argo CD's degraded test data
 * (test/fixtures/health/README.md names each source). The reconciler reads them Degraded, its
 * GitHub reporter posts a failure Deployment status for staging (the GitHub emulator), and prod's
 * `soak` from staging therefore does not pass: `/promote prod` waits, an hour later too.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { accounts, repos } from "../../packages/sandbox/src/github/index.js";
import { GitHubDeploymentReporter } from "../../src/adapters/github/deployment-reporter.js";
import { commandReply, startWorld, type World } from "../support/app-e2e-world.js";
import { setupPerTest } from "../support/reconciler-harness.js";
import { configHead, soakOnStagingHealth } from "../support/soak-config.js";

const crd = (group: string, kind: string, plural: string, version: string) =>
  `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: {kind: ${kind}, plural: ${plural}, singular: ${kind.toLowerCase()}, listKind: ${kind}List}
  versions:
    - name: ${version}
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`;

const KINDS = [
  {
    file: "certificate-degraded-config-error",
    apiVersion: "cert-manager.io/v1",
    kind: "Certificate",
    crd: crd("cert-manager.io", "Certificate", "certificates", "v1"),
    spec: "  secretName: shop-tls\n  dnsNames: [shop.example.com]\n  issuerRef: {name: letsencrypt, kind: ClusterIssuer}\n",
    manager: "cert-manager-certificates-readiness",
  },
  {
    file: "helmrelease-degraded",
    apiVersion: "helm.toolkit.fluxcd.io/v2",
    kind: "HelmRelease",
    crd: crd("helm.toolkit.fluxcd.io", "HelmRelease", "helmreleases", "v2"),
    spec: "  interval: 10m\n  chart:\n    spec: {chart: shop, sourceRef: {kind: HelmRepository, name: acme}}\n",
    manager: "helm-controller",
  },
  {
    file: "rollout-degraded-timeout",
    apiVersion: "argoproj.io/v1alpha1",
    kind: "Rollout",
    crd: crd("argoproj.io", "Rollout", "rollouts", "v1alpha1"),
    spec: "  replicas: 3\n  progressDeadlineSeconds: 32\n  strategy:\n    blueGreen: {activeService: shop}\n",
    manager: "rollouts-controller",
  },
];

const fixtureStatus = (file: string) =>
  (
    parse(readFileSync(new URL(`../fixtures/health/${file}.yaml`, import.meta.url), "utf8")) as {
      status: Record<string, unknown>;
    }
  ).status;

const cluster = setupPerTest();

describe("Degraded custom resources hold a soak (end to end)", () => {
  let world: World;
  let offsetMs = 0;
  const later = (ms: number) => {
    world.emu.advanceClock(ms);
    offsetMs += ms;
  };
  beforeEach(async () => {
    offsetMs = 0;
    world = await startWorld({
      ci: true,
      reporters: ["staging-reconciler"],
      server: { ferry: { now: () => new Date(Date.now() + offsetMs) } },
    });
  });
  afterEach(async () => {
    await world.close();
  });

  it("a failing Certificate, HelmRelease and Rollout are reported Degraded, and /promote prod waits", async () => {
    const bot = accounts.createUser(world.emu, "staging-reconciler", { type: "Bot" });
    repos.setCollaborator(world.emu, "acme", "config", "staging-reconciler", "write");
    await soakOnStagingHealth(world, "", "prod soaks staging");
    const staged = await configHead(world);
    const github = new GitHubDeploymentReporter({
      repository: "acme/config",
      environment: "staging",
      token: bot.token,
      baseUrl: world.emu.apiUrl,
      instance: "staging",
    });
    // The reconciler renders a local checkout of the manifests; its report is posted for the
    // acme/config commit staging runs (the emulator's repository is not a git remote).
    const reports: { state: string; description: string }[] = [];
    const reporter = {
      report: async (report: {
        revision: string;
        state: "in_progress" | "success" | "failure";
        description: string;
      }) => {
        reports.push(report);
        await github.report({ ...report, revision: staged });
      },
    };

    const current = await cluster.setup();
    const files: Record<string, string> = {};
    for (const entry of KINDS) {
      files[`env/staging/crd-${entry.kind.toLowerCase()}.yaml`] = entry.crd;
      files[`env/staging/${entry.kind.toLowerCase()}.yaml`] =
        `apiVersion: ${entry.apiVersion}\nkind: ${entry.kind}\nmetadata:\n  name: shop\nspec:\n${entry.spec}`;
    }
    current.repo.commit(files);
    const reconciler = current.reconciler({}, { reporter });
    const applied = await reconciler.cycle();
    expect(applied.errors).toEqual([]);
    // Each controller writes its status (the test data's), as its own field manager.
    for (const entry of KINDS)
      current.sim.apply(
        {
          apiVersion: entry.apiVersion,
          kind: entry.kind,
          metadata: { name: "shop", namespace: "shop" },
          status: fixtureStatus(entry.file),
        },
        { fieldManager: entry.manager },
      );
    const degraded = await reconciler.cycle();
    expect(degraded.errors).toEqual([]);
    expect(degraded.health).toBe("Degraded");
    expect(
      degraded.objects
        .filter((object) => KINDS.some((entry) => entry.kind === object.ref.kind))
        .map((object) => [object.ref.kind, object.health]),
    ).toEqual(expect.arrayContaining(KINDS.map((entry) => [entry.kind, "Degraded"])));
    expect(reports.at(-1)).toEqual(
      expect.objectContaining({ state: "failure", description: expect.stringMatching(/^Degraded: /) }),
    );

    // What GitHub holds for staging: the reconciler's failure on the staged commit.
    const { data: deployments } = await world.as.mona.rest.repos.listDeployments({
      owner: "acme",
      repo: "config",
      environment: "staging",
    });
    const ours = deployments.filter((deployment) => deployment.sha === staged);
    expect(ours.length).toBeGreaterThan(0);
    const { data: statuses } = await world.as.mona.rest.repos.listDeploymentStatuses({
      owner: "acme",
      repo: "config",
      deployment_id: ours[0]!.id,
    });
    expect(statuses[0]).toEqual(
      expect.objectContaining({ state: "failure", description: expect.stringMatching(/^Degraded: /) }),
    );

    later(3_600_000);
    const issue = await world.openIssue();
    expect(await commandReply(world, issue, "/promote prod")).toMatch(/staging is not healthy \(failure\)/);
    expect((await world.pulls()).filter((pull) => pull.head.ref === "ferry/prod")).toEqual([]);
  });
});
