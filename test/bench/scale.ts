import { repos } from "../../packages/sandbox/src/github/index.js";
/**
 * The figures behind docs/capacity.md: GitHub requests and writes per promotion and per scan of a
 * configured installation, registry requests per image per scan (the real server against the
 * GitHub emulator and the embedded registry), and the 3-replica scan of 300 installations sharing
 * the work through Leases in kube-apiserver: GitHub requests per installation per interval,
 * counted at the emulator. The fleet part is skipped, and said so, without the control plane.
 */
import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  controlPlaneMissingMessage,
  kubeconfigFor,
  serviceAccountToken,
  startControlPlane,
} from "../cluster/control-plane.js";
import { startWorld } from "../support/app-e2e-world.js";
import { startScanFleet, waitUntil } from "../support/scan-fleet.js";
import { sized } from "./size.js";

const run = promisify(execFile);
const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

async function perInstallation(): Promise<Record<string, number>> {
  const world = await startWorld({ ci: true });
  try {
    await world.settle();
    // A scan with nothing new: the steady-state cost of one installation (1 config repo, 1 image, 2 environments).
    const scan = async () => {
      const github = world.emu.requests().length;
      const registry = world.registry.requestCount();
      await world.server.scanNow();
      await world.settle();
      const requests = world.appRequests(github);
      return {
        github: requests.length,
        writes: requests.filter((r) => WRITES.has(r.method)).length,
        registry: world.registry.requestCount() - registry,
      };
    };
    const first = await scan();
    const steady = await scan();
    // A promotion: a pushed tag → the staging PR opened (merged by auto-merge once CI passes).
    const mark = world.emu.requests().length;
    await world.push("1.8.0");
    await world.settle();
    const promotion = world.appRequests(mark);
    return {
      "scan, 1 installation (1 repo, 1 image × 2 envs), first: GitHub requests": first.github,
      "scan, 1 installation, steady: GitHub requests": steady.github,
      "scan, 1 installation, steady: GitHub writes": steady.writes,
      "scan, 1 installation, steady: registry requests (1 image)": steady.registry,
      "scan, 1 installation, first: registry requests (1 image)": first.registry,
      "promotion (push → staging PR merged): GitHub requests": promotion.length,
      "promotion (push → staging PR merged): GitHub writes": promotion.filter((r) => WRITES.has(r.method))
        .length,
    };
  } finally {
    await world.close();
  }
}

/**
 * A scan that finds 3 environments behind in each of 5 config repositories, with the emulator
 * enforcing GitHub's secondary limits (80 content-creating requests a minute, 500 an hour): GitHub
 * requests and writes per promotion, requests refused (0 expected), and how many writes the write
 * budget held back.
 */
export async function secondaryLimits(): Promise<Record<string, number>> {
  const repositories = sized(5, 2);
  const environments = ["dev", "qa", "staging"];
  let registryHost = "";
  const world = await startWorld({
    ci: false,
    server: (host) => {
      registryHost = host;
      return {};
    },
  });
  try {
    await world.push("1.8.0");
    world.emu.faults.contentLimits.enforce();
    for (let i = 0; i < repositories; i++) {
      const files: Record<string, string> = {
        ".github/ferry.yml": `images:\n  shop:\n    repository: ${registryHost}/acme/shop\n    policy: { range: "^1.0.0" }\nenvironments:\n${environments.map((env) => `  ${env}:\n    paths: [overlays/${env}]\n    update: auto\n    merge: review\n`).join("")}`,
      };
      for (const env of environments) {
        files[`overlays/${env}/kustomization.yaml`] =
          `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - deployment.yaml\nimages:\n  - name: ${registryHost}/acme/shop\n    newTag: "1.7.0"\n`;
        files[`overlays/${env}/deployment.yaml`] = "kind: Deployment\n";
      }
      await repos.createRepo(world.emu, "acme", `service-${i}`, { files });
    }
    const mark = world.emu.requests().length;
    const started = Date.now();
    await world.server.scanNow();
    await world.settle();
    const elapsed = Date.now() - started;
    const requests = world.appRequests(mark);
    const writes = requests.filter((r) => WRITES.has(r.method) && !r.path.startsWith("/app/")).length;
    const promotions = repositories * environments.length;
    return {
      [`scan of ${repositories} repos × 3 envs behind, secondary limits on: GitHub requests per promotion`]:
        requests.length / promotions,
      [`scan of ${repositories} repos × 3 envs behind, secondary limits on: GitHub writes per promotion`]:
        writes / promotions,
      [`scan of ${repositories} repos × 3 envs behind, secondary limits on: requests refused`]:
        world.emu.faults.contentLimits.refused,
      [`scan of ${repositories} repos × 3 envs behind, secondary limits on: scan until idle, ms`]: elapsed,
    };
  } finally {
    await world.close();
  }
}

async function fleet(): Promise<Record<string, number>> {
  if (controlPlaneMissingMessage()) return {};
  const controlPlane = await startControlPlane();
  const dir = mkdtempSync(join(tmpdir(), "ferry-bench-scale-"));
  const adminConfig = join(dir, "admin.kubeconfig");
  writeFileSync(adminConfig, kubeconfigFor(controlPlane), { mode: 0o600 });
  const kubectl = (...args: string[]) => run("kubectl", ["--kubeconfig", adminConfig, ...args]);
  const namespace = `ferry-bench-${randomBytes(3).toString("hex")}`;
  const installations = sized(300, 30);
  const names = ["ferry-a", "ferry-b", "ferry-c"];
  let scanFleet: Awaited<ReturnType<typeof startScanFleet>> | undefined;
  try {
    await kubectl("create", "namespace", namespace);
    await kubectl("create", "serviceaccount", "ferry", "-n", namespace);
    await kubectl("apply", "-n", namespace, "-f", "deploy/app/role.yaml");
    const token = await serviceAccountToken(controlPlane, namespace, "ferry");
    scanFleet = await startScanFleet({
      installations,
      apiServerUrl: controlPlane.url,
      kubeconfigFor: (url) => kubeconfigFor({ ...controlPlane, url }, { token, namespace }),
      namespace,
      scanInterval: "4s",
      leaseDuration: "10s",
    });
    const f = scanFleet;
    await Promise.all(names.map((name) => f.start(name)));
    await waitUntil(
      async () =>
        (await Promise.all(names.map((name) => f.metric(name, "ferry_scan_members")))).every((m) => m === 3),
      120_000,
      "three members",
    );
    // Past the first round (installation tokens minted), then three steady rounds each.
    const complete = (name: string, after: number) =>
      f.rounds(name).filter((r) => r.startedAt > after && r.endedAt !== undefined);
    const warm = Date.now();
    await waitUntil(() => names.every((name) => complete(name, warm).length >= 1), 120_000, "a warm round");
    const from = Date.now();
    const githubBefore = f.emu.requests().length;
    await waitUntil(() => names.every((name) => complete(name, from).length >= 3), 120_000, "3 rounds each");
    const rounds = names.map((name) => complete(name, from).slice(0, 3));
    const reads = rounds.flat().reduce((sum, round) => sum + round.installations.length, 0);
    const requests = f.emu.requests().length - githubBefore;
    const roundMs = rounds.flat().map((round) => round.endedAt! - round.startedAt);
    const killedAt = Date.now();
    const share = new Set(rounds[2]![0]!.installations);
    await f.kill("ferry-c");
    const takeover = await waitUntil(
      () => {
        const read = new Set(
          ["ferry-a", "ferry-b"].flatMap((name) => f.readsSince(name, killedAt).map((r) => r.installation)),
        );
        return [...share].every((id) => read.has(id));
      },
      120_000,
      "takeover",
    );
    return {
      [`fleet 3 × ${installations}: installation reads per installation per interval`]:
        reads / (installations * 3),
      [`fleet 3 × ${installations}: GitHub requests per installation per interval (all, in the window)`]:
        requests / (installations * 3),
      [`fleet 3 × ${installations}: scan round, mean ms`]:
        roundMs.reduce((a, b) => a + b, 0) / roundMs.length,
      [`fleet 3 × ${installations}: SIGKILL → share rescanned, ms (lease 10 s, interval 4 s)`]: takeover,
    };
  } finally {
    await scanFleet?.close();
    await controlPlane.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function bench(): Promise<Record<string, number>> {
  return { ...(await perInstallation()), ...(await secondaryLimits()), ...(await fleet()) };
}
