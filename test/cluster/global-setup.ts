/**
 * vitest globalSetup of the cluster tier: one control plane for the whole run (starting
 * kube-apiserver takes seconds on a busy machine); each test works in its own namespace.
 */
import type { TestProject } from "vitest/node";
import { controlPlaneMissingMessage, startControlPlane, type ControlPlaneInfo } from "./control-plane.js";

declare module "vitest" {
  export interface ProvidedContext {
    controlPlane: ControlPlaneInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const missing = controlPlaneMissingMessage();
  if (missing) throw new Error(missing);
  const started = performance.now();
  const controlPlane = await startControlPlane();
  console.log(`control plane: ready at ${controlPlane.url} in ${Math.round(performance.now() - started)} ms`);
  project.provide("controlPlane", {
    url: controlPlane.url,
    caPem: controlPlane.caPem,
    adminToken: controlPlane.adminToken,
  });
  return () => controlPlane.stop();
}
