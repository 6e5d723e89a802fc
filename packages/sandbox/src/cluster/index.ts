export {
  startClusterSimulator,
  type ClusterSimulator,
  type ClusterSimulatorOptions,
} from "./cluster-simulator.js";
export type { RequestRecord, RequestVerb, FaultRule } from "./faults.js";
export { ClusterFaults } from "./faults.js";
