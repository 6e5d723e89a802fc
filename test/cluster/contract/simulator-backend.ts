/**
 * The contract suite's simulator backend. The simulator has no admission chain and no
 * authorization: admission refusals are injected faults (a 422 on the object's applies, dry-runs
 * included, as a ValidatingAdmissionPolicy answers), and the RBAC cases are skipped.
 */
import { startClusterSimulator } from "../../../packages/sandbox/src/cluster/cluster-simulator.js";
import type { AdmissionRejection, ClusterBackend } from "./backend.js";

export async function simulatorBackend(): Promise<ClusterBackend> {
  const sim = await startClusterSimulator();
  return {
    name: "the cluster simulator",
    kubeconfig: () => sim.kubeconfig(),
    async rejectWrites(rejection: AdmissionRejection) {
      const rule = {
        verb: "write" as const,
        resource: rejection.resource,
        namespace: rejection.namespace,
        name: rejection.name,
        status: 422,
        message: rejection.message,
        count: Infinity,
      };
      sim.faults.fail(rule);
      return async () => sim.faults.clear();
    },
    close: () => sim.close(),
  };
}
