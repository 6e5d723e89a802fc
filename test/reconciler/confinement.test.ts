/**
 * `ferry reconcile` confines itself to its namespace whatever RBAC allows (the simulator lets the
 * reconciler do anything): objects in another namespace and cluster-scoped kinds are refused per
 * object unless a flag allows them, and are neither applied nor pruned.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import type { DeploymentReport } from "../../src/reconciler/ports.js";
import { startReconciler } from "../../src/reconciler/start.js";
import {
  configMapYaml,
  reconcileIo,
  type Setup,
  setupPerTest,
  writesOf,
} from "../support/reconciler-harness.js";

const { temp, setup } = setupPerTest();
let env: Setup | undefined;

const OUTSIDE = {
  "env/staging/other.yaml": configMapYaml("elsewhere", { key: "value" }, "  namespace: other\n"),
  "env/staging/binding.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: take-over
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects:
  - {kind: ServiceAccount, name: default, namespace: shop}
`,
  "env/staging/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: evil\n",
};

const ALLOW_ALL = [
  "--allow-namespace",
  "other",
  "--allow-cluster-kind",
  "ClusterRoleBinding",
  "--allow-cluster-kind",
  "Namespace",
];

async function reconcile(
  current: Setup,
  ...flags: string[]
): Promise<{ code: number; out: string; err: string }> {
  const io = reconcileIo(current.repo.dir);
  const kubeconfig = path.join(temp.make(), "kubeconfig");
  await current.sim.writeKubeconfig(kubeconfig);
  const code = await main(
    [
      "reconcile",
      "--repo",
      current.repo.dir,
      "--path",
      "env/staging",
      "--namespace",
      "shop",
      "--environment",
      "staging",
      "--kubeconfig",
      kubeconfig,
      "--work-dir",
      temp.make(),
      ...flags,
    ],
    io,
  );
  return { code, out: io.out, err: io.err };
}

function outsideExists(current: Setup) {
  return {
    configMap: current.sim.get("v1", "ConfigMap", "other", "elsewhere") !== undefined,
    binding:
      current.sim.get("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", undefined, "take-over") !==
      undefined,
    namespace: current.sim.get("v1", "Namespace", undefined, "evil") !== undefined,
  };
}

async function withOtherNamespace(): Promise<Setup> {
  const current = await setup();
  current.sim.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "other" } });
  return current;
}

describe("ferry reconcile stays in its namespace", () => {
  it("refuses an object in another namespace, a ClusterRoleBinding and a Namespace, applies the rest, and exits 1", async () => {
    env = await withOtherNamespace();
    env.repo.commit({ "env/staging/web.yaml": configMapYaml("web"), ...OUTSIDE });
    const requestsBefore = env.sim.requests().length;
    const result = await reconcile(env, "--once");
    expect(result.code).toBe(1);
    expect(result.err).toContain(
      "refused: ConfigMap other/elsewhere: namespace other is outside --namespace shop (allow it with --allow-namespace other)",
    );
    expect(result.err).toContain(
      "refused: ClusterRoleBinding.rbac.authorization.k8s.io take-over: cluster-scoped kind ClusterRoleBinding.rbac.authorization.k8s.io is not allowed (allow it with --allow-cluster-kind ClusterRoleBinding)",
    );
    expect(result.err).toContain("refused: Namespace evil: cluster-scoped kind Namespace is not allowed");
    expect(env.sim.get("v1", "ConfigMap", "shop", "web")).toBeDefined();
    expect(outsideExists(env)).toEqual({ configMap: false, binding: false, namespace: false });
    // Not even a dry-run or a read went outside the namespace.
    const outside = env.sim
      .requests()
      .slice(requestsBefore)
      .filter(
        (request) =>
          request.namespace === "other" ||
          ["clusterrolebindings", "namespaces"].includes(request.resource ?? ""),
      );
    expect(outside).toEqual([]);
  });

  it("shows each refused object in /status and reports the Deployment as failed", async () => {
    env = await withOtherNamespace();
    env.repo.commit({ "env/staging/web.yaml": configMapYaml("web"), ...OUTSIDE });
    const reports: DeploymentReport[] = [];
    const running = await startReconciler({
      repo: env.repo.dir,
      path: "env/staging",
      environment: "staging",
      namespace: "shop",
      cluster: env.cluster,
      source: env.fetcher,
      reporter: { report: async (report) => void reports.push(report) },
      manual: true,
    });
    try {
      await running.cycle();
      const status = running.status();
      expect(status.objects).toContainEqual({
        kind: "ConfigMap",
        group: "",
        namespace: "other",
        name: "elsewhere",
        sync: "OutOfSync",
        health: "Unknown",
        message:
          "refused: namespace other is outside --namespace shop (allow it with --allow-namespace other)",
      });
      expect(status.errors).toHaveLength(3);
      expect(reports.at(-1)).toMatchObject({
        state: "failure",
        description: expect.stringMatching(/^apply failed: refused: /),
      });
    } finally {
      await running.stop();
    }
  });

  it("shows each refusal in the --dry-run plan", async () => {
    env = await withOtherNamespace();
    env.repo.commit({ "env/staging/web.yaml": configMapYaml("web"), ...OUTSIDE });
    const result = await reconcile(env, "--dry-run");
    expect(result.code).toBe(1);
    expect(result.out).toContain("create ConfigMap shop/web\n");
    expect(result.out).toContain(
      "refuse ConfigMap other/elsewhere: namespace other is outside --namespace shop (allow it with --allow-namespace other)\n",
    );
    expect(result.out).toContain("1 to apply, 0 unchanged, 0 to prune, 3 refused\n");
    expect(writesOf(env.sim.requests())).toEqual([]);
  });

  it("applies them when --allow-namespace and --allow-cluster-kind list them", async () => {
    env = await withOtherNamespace();
    env.repo.commit({ "env/staging/web.yaml": configMapYaml("web"), ...OUTSIDE });
    const result = await reconcile(env, "--once", ...ALLOW_ALL);
    expect(result.err).not.toMatch(/refused/);
    expect(result.code).toBe(0);
    expect(outsideExists(env)).toEqual({ configMap: true, binding: true, namespace: true });
  });

  it("never prunes an object outside its namespace once the flag that allowed it is gone", async () => {
    env = await withOtherNamespace();
    env.repo.commit({ "env/staging/web.yaml": configMapYaml("web"), ...OUTSIDE });
    expect((await reconcile(env, "--once", ...ALLOW_ALL)).code).toBe(0);
    env.repo.commit(Object.fromEntries(Object.keys(OUTSIDE).map((file) => [file, null])));
    const prune = ["--prune", "--max-prune-percent", "100"];
    const confined = await reconcile(env, "--once", ...prune);
    expect(confined.err).not.toMatch(/refused/);
    expect(confined.code).toBe(0);
    expect(outsideExists(env)).toEqual({ configMap: true, binding: true, namespace: true });
    expect(writesOf(env.sim.requests()).filter((request) => request.verb === "delete")).toEqual([]);
    // The same change with the flags back prunes them: only the confinement held them.
    const allowed = await reconcile(env, "--once", ...prune, ...ALLOW_ALL);
    expect(allowed.code).toBe(0);
    expect(outsideExists(env)).toEqual({ configMap: false, binding: false, namespace: false });
  });

  it("creates its own namespace with --create-namespace without --allow-cluster-kind Namespace", async () => {
    env = await setup();
    env.repo.commit({ "env/staging/web.yaml": configMapYaml("web") });
    const result = await reconcile(env, "--once", "--create-namespace", "--namespace", "fresh");
    expect(result.err).not.toMatch(/refused/);
    expect(result.code).toBe(0);
    expect(env.sim.get("v1", "ConfigMap", "fresh", "web")).toBeDefined();
  });
});
