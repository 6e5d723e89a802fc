import { afterEach, describe, expect, it } from "vitest";
import {
  startClusterSimulator,
  type ClusterSimulator,
} from "../../../packages/sandbox/src/cluster/cluster-simulator.js";

let sim: ClusterSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const deployment = (replicas: number) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "shop", namespace: "prod" },
  spec: {
    replicas,
    selector: { matchLabels: { app: "shop" } },
    template: {
      metadata: { labels: { app: "shop" } },
      spec: { containers: [{ name: "shop", image: "example/shop:1" }] },
    },
  },
});

const available = (object: Record<string, unknown>) =>
  (object.status as { availableReplicas?: number } | undefined)?.availableReplicas;

describe("cluster simulator rollouts", () => {
  // Found by the sandbox story's self-heal step: the Pod kept after a scale-down could own the
  // name the controller derived for a new Pod, so every later create failed and the rollout hung.
  it("scales a Deployment back up after a manual scale-down", async () => {
    sim = await startClusterSimulator({ rolloutStepMs: 10 });
    sim.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "prod" } });
    sim.apply(deployment(3), { fieldManager: "ferry" });
    await sim.waitFor("apps/v1", "Deployment", "prod", "shop", (object) => available(object) === 3);
    sim.scale("Deployment", "prod", "shop", 1);
    await sim.waitFor("apps/v1", "Deployment", "prod", "shop", (object) => available(object) === 1);
    sim.apply(deployment(3), { fieldManager: "ferry", force: true });
    await sim.waitFor("apps/v1", "Deployment", "prod", "shop", (object) => available(object) === 3, 3_000);
    const pods = sim.list("v1", "Pod", "prod").map((pod) => (pod.metadata as { name: string }).name);
    expect(new Set(pods).size).toBe(3);
  });
});
