/**
 * The shared-scan suite (`scan-fleet/suite.ts`) against kube-apiserver: the replicas authenticate
 * as the `ferry` ServiceAccount bound by the shipped `deploy/app/role.yaml` and nothing more; and
 * `deploy/` applied with kubectl grants exactly that.
 */
import { describe, expect, inject, it, vi } from "vitest";
import { Kubectl } from "./contract/backend.js";
import { kubeconfigFor, serviceAccountToken } from "./control-plane.js";
import { describeScanFleet } from "./scan-fleet/suite.js";

vi.setConfig({ testTimeout: 900_000, hookTimeout: 300_000 });

const info = inject("controlPlane");
const admin = new Kubectl(kubeconfigFor(info));

describeScanFleet("kube-apiserver", async () => ({
  apiServerUrl: info.url,
  async prepare(namespace) {
    await admin.ok(["create", "namespace", namespace]);
    await admin.ok(["create", "serviceaccount", "ferry", "-n", namespace]);
    // The shipped Role and RoleBinding, as they are, in the replicas' namespace.
    await admin.ok(["apply", "-n", namespace, "-f", "deploy/app/role.yaml"]);
    const token = await serviceAccountToken(info, namespace, "ferry");
    return { kubeconfigFor: (url: string) => kubeconfigFor({ ...info, url }, { token, namespace }) };
  },
  async cleanup(namespace) {
    await admin.run(["delete", "namespace", namespace, "--wait=false"]);
  },
}));

describe("deploy/ on kube-apiserver", () => {
  it("the app's ServiceAccount may manage Leases in its own namespace and nothing else", async () => {
    await admin.ok(["apply", "-k", "deploy/"]);
    const as = ["--as", "system:serviceaccount:ferry-system:ferry"];
    const can = async (...args: string[]) =>
      (await admin.run(["auth", "can-i", ...args, ...as])).stdout.trim();
    for (const verb of ["get", "list", "create", "update", "delete"])
      expect(await can(verb, "leases.coordination.k8s.io", "-n", "ferry-system")).toBe("yes");
    expect(await can("create", "leases.coordination.k8s.io", "-n", "default")).toBe("no");
    expect(await can("get", "secrets", "-n", "ferry-system")).toBe("no");
    expect(await can("list", "pods", "-n", "ferry-system")).toBe("no");
    expect(await can("patch", "deployments", "-n", "ferry-system")).toBe("no");
    expect(
      (
        await admin.ok(["get", "pdb", "ferry", "-n", "ferry-system", "-o", "jsonpath={.spec.minAvailable}"])
      ).trim(),
    ).toBe("1");
  });
});
