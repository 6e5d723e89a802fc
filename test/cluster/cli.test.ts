/**
 * `ferry reconcile` from the command line, and the shipped `deploy/` manifests applied with
 * kubectl, against kube-apiserver + etcd. There is no controller-manager or kubelet in this tier,
 * so a Deployment never gets a status: its health stays Progressing (the simulator's fake
 * controllers cover rollouts and health).
 */
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { main } from "../../src/cli.js";
import { captureIo as captureCliIo, type CapturedIo } from "../support/cli-io.js";
import { configMapYaml, deploymentYaml, GIT_ENV } from "../support/reconciler-harness.js";
import { readObject } from "./contract/backend.js";
import { realBackend } from "./contract/real-backend.js";
import { createWorld, type World } from "./contract/world.js";

vi.setConfig({ testTimeout: 120_000 });

const backend = realBackend(inject("controlPlane"));
let world: World | undefined;

afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** A command's io with the git environment the world's repository needs. */
function captureIo(cwd: string): CapturedIo {
  return captureCliIo(cwd, { env: { ...GIT_ENV } });
}

function reconcileArgs(w: World, ...extra: string[]): string[] {
  return [
    "reconcile",
    "--repo",
    w.repo.dir,
    "--path",
    "env",
    "--namespace",
    w.ns,
    "--environment",
    w.instance,
    "--kubeconfig",
    w.kubectl.kubeconfigFile,
    "--work-dir",
    w.temp.make("ferry-cli-work-"),
    ...extra,
  ];
}

describe("ferry reconcile against kube-apiserver", () => {
  it("--dry-run prints the plan and writes nothing", async () => {
    const w = (world = await createWorld(backend));
    w.repo.commit({ "env/web.yaml": deploymentYaml("web"), "env/config.yaml": configMapYaml("web-config") });
    const io = captureIo(w.repo.dir);
    const code = await main(reconcileArgs(w, "--dry-run"), io);
    expect(io.err).not.toMatch(/ferry reconcile:/);
    expect(code).toBe(0);
    expect(io.out).toBe(
      `create ConfigMap ${w.ns}/web-config\ncreate Deployment.apps ${w.ns}/web\n2 to apply, 0 unchanged, 0 to prune\n`,
    );
    expect(await readObject(w.admin, "apps/v1", "Deployment", w.ns, "web")).toBeUndefined();
    expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "web-config")).toBeUndefined();
  });

  it("--once applies the config, exits 0 once synced, and a second --once applies nothing", async () => {
    const w = (world = await createWorld(backend));
    w.repo.commit({ "env/web.yaml": deploymentYaml("web"), "env/config.yaml": configMapYaml("web-config") });
    const io = captureIo(w.repo.dir);
    const code = await main(reconcileArgs(w, "--once"), io);
    expect(io.err).not.toMatch(/ferry reconcile:/);
    expect(code).toBe(0);
    // No controller-manager here: the Deployment is applied but never rolls out.
    expect(io.out).toMatch(/: Synced, Progressing; applied 2, pruned 0\n/);
    expect(await readObject(w.admin, "apps/v1", "Deployment", w.ns, "web")).toBeDefined();
    const again = captureIo(w.repo.dir);
    expect(await main(reconcileArgs(w, "--once"), again)).toBe(0);
    expect(again.out).toMatch(/applied 0, pruned 0\n/);
  });

  it("--once exits 1 with the API server's reason when the config asks for something it refuses", async () => {
    const w = (world = await createWorld(backend));
    w.repo.commit({ "env/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_Valid}\n" });
    const io = captureIo(w.repo.dir);
    expect(await main(reconcileArgs(w, "--once"), io)).toBe(1);
    expect(io.err).toMatch(/ferry reconcile: observe: dry-run apply ConfigMap .*\/Not_Valid: .*RFC 1123/);
  });
});

describe("the shipped deploy/ manifests", () => {
  it("apply to a real API server with kubectl: the app (deploy/) and a reconciler overlay", async () => {
    const w = (world = await createWorld(backend));
    await w.kubectl.ok(["apply", "-k", "deploy/"]);
    // The overlay creates its namespace: nothing is created by hand first.
    await w.kubectl.ok(["apply", "-k", "deploy/reconciler/staging"]);
    // A second apply changes nothing: every manifest round-trips through the server's defaults.
    const again = await w.kubectl.ok(["apply", "-k", "deploy/reconciler/staging"]);
    expect(
      again
        .trim()
        .split("\n")
        .every((line) => line.endsWith(" unchanged")),
    ).toBe(true);
    expect(await readObject(w.admin, "apps/v1", "Deployment", "ferry-system", "ferry")).toBeDefined();
    expect(
      await readObject(w.admin, "rbac.authorization.k8s.io/v1", "Role", "shop-staging", "ferry-reconciler"),
    ).toBeDefined();
    const server = await w.kubectl.ok([
      "auth",
      "can-i",
      "patch",
      "deployments",
      "-n",
      "shop-staging",
      "--as",
      "system:serviceaccount:shop-staging:ferry-reconciler",
    ]);
    expect(server.trim()).toBe("yes");
    const outside = await w.kubectl.run([
      "auth",
      "can-i",
      "patch",
      "deployments",
      "-n",
      "default",
      "--as",
      "system:serviceaccount:shop-staging:ferry-reconciler",
    ]);
    expect(outside.stdout.trim()).toBe("no");
  });
});
