/**
 * Health of custom resources on both backends (docs/architecture.md "Health"): a kind whose CRD
 * has a status subresource is Progressing until its controller writes status, then reads as that
 * status says (the test plays the controller, writing `/status` with kubectl); a kind that never
 * carries status is Healthy once it exists.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crdYaml, widgetYaml } from "./manifests.js";
import type { ClusterBackend } from "./backend.js";
import { createWorld, type World } from "./world.js";

export function gaugeCrdYaml(group: string): string {
  return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gauges.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: {kind: Gauge, plural: gauges, singular: gauge, listKind: GaugeList}
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                level: {type: integer}
            status:
              type: object
              properties:
                observedGeneration: {type: integer}
                conditions:
                  type: array
                  items:
                    type: object
                    properties:
                      type: {type: string}
                      status: {type: string}
                      reason: {type: string}
                      message: {type: string}
                      lastTransitionTime: {type: string}
`;
}

export function describeHealthContract(name: string, startBackend: () => Promise<ClusterBackend>): void {
  describe(`health of custom resources against ${name}`, () => {
    let backend: ClusterBackend;
    let world: World;
    let group: string;

    beforeAll(async () => {
      backend = await startBackend();
      world = await createWorld(backend);
      group = `${world.id}.health.ferry.test`;
      world.repo.commit({
        "env/kustomization.yaml":
          "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [crds.yaml, gauge.yaml, widget.yaml]\n",
        "env/crds.yaml": `${gaugeCrdYaml(group)}---\n${crdYaml(group)}`,
        "env/gauge.yaml": `apiVersion: ${group}/v1\nkind: Gauge\nmetadata:\n  name: pressure\nspec:\n  level: 3\n`,
        "env/widget.yaml": widgetYaml(group, "gear", "red"),
      });
    });
    afterAll(async () => {
      await world?.close();
      await backend?.close();
    });

    const healthOf = (result: Awaited<ReturnType<ReturnType<World["reconciler"]>["cycle"]>>, kind: string) =>
      result.objects.find((object) => object.ref.kind === kind);

    const writeStatus = (status: Record<string, unknown>) =>
      world.kubectl.ok([
        "patch",
        "-n",
        world.ns,
        `gauges.${group}`,
        "pressure",
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({ status }),
      ]);

    it("a kind with a status subresource is Progressing until its controller reports; one without status is Healthy once it exists", async () => {
      const reconciler = world.reconciler();
      // The first cycle may apply the CRDs before their kinds are served: cycle until both custom resources exist.
      let result = await reconciler.cycle();
      for (
        let i = 0;
        i < 20 && !(healthOf(result, "Gauge") && healthOf(result, "Widget")?.health === "Healthy");
        i++
      )
        result = await reconciler.cycle();
      expect(healthOf(result, "Widget")?.health).toBe("Healthy");
      expect(healthOf(result, "Gauge")).toMatchObject({
        health: "Progressing",
        message: expect.stringMatching(/report status/),
      });
      expect(result.health).toBe("Progressing");
    });

    it("reads the status the controller writes: Ready False is Degraded with its reason, Ready True is Healthy", async () => {
      const reconciler = world.reconciler();
      await writeStatus({
        observedGeneration: 1,
        conditions: [
          { type: "Ready", status: "False", reason: "SensorOffline", message: "no reading for 5m" },
        ],
      });
      let result = await reconciler.cycle();
      expect(healthOf(result, "Gauge")).toMatchObject({
        health: "Degraded",
        message: "SensorOffline: no reading for 5m",
      });
      expect(result.health).toBe("Degraded");
      await writeStatus({
        observedGeneration: 1,
        conditions: [{ type: "Ready", status: "True", reason: "Reading", message: "3 bar" }],
      });
      result = await reconciler.cycle();
      expect(healthOf(result, "Gauge")?.health).toBe("Healthy");
      expect(result.health).toBe("Healthy");
    });
  });
}
