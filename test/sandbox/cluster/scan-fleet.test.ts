/**
 * The shared-scan suite (`test/cluster/scan-fleet/suite.ts`) against the cluster simulator, which
 * models Leases (no authorization: the Role is checked on kube-apiserver only).
 */
import { vi } from "vitest";
import { startClusterSimulator, type ClusterSimulator } from "../../../packages/sandbox/src/cluster/index.js";
import { describeScanFleet } from "../../cluster/scan-fleet/suite.js";

vi.setConfig({ testTimeout: 900_000, hookTimeout: 300_000 });

let sim: ClusterSimulator;

describeScanFleet("cluster simulator", async () => {
  sim = await startClusterSimulator();
  return {
    apiServerUrl: sim.url,
    async prepare(namespace) {
      await fetch(`${sim.url}/api/v1/namespaces`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }),
      });
      return { kubeconfigFor: (url: string) => sim.kubeconfig(namespace).split(sim.url).join(url) };
    },
    async cleanup() {
      await sim.close();
    },
  };
});
