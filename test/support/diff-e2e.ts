/**
 * The config repo and helpers of the `ferry/diff` end-to-end tests (docs/diff-check.md): staging
 * and prod overlays of a Deployment, a Service and a Secret; a person's PR; the completed run.
 */
import { actAs } from "../../packages/sandbox/src/github/index.js";
import type { World } from "./app-e2e-world.js";

export const OVERLAY = "overlays/staging/kustomization.yaml";

export function deployment(host: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
spec:
  selector:
    matchLabels: { app: shop }
  template:
    metadata:
      labels: { app: shop }
    spec:
      containers:
        - name: shop
          image: ${host}/acme/shop:1.0.0
`;
}

export const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: shop
spec:
  selector: { app: shop }
  ports: [{ port: 80 }]
`;

export const secret = (data: Record<string, string>) =>
  `apiVersion: v1
kind: Secret
metadata:
  name: shop-db
data:
${Object.entries(data)
  .map(([key, value]) => `  ${key}: ${Buffer.from(value).toString("base64")}`)
  .join("\n")}
`;

export function overlay(host: string, tag: string, resources: string[]): string {
  return `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
${resources.map((name) => `  - ${name}`).join("\n")}
images:
  - name: ${host}/acme/shop
    newTag: "${tag}"
`;
}

export const RESOURCES = ["deployment.yaml", "service.yaml", "secret.yaml"];

export function files(host: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const env of ["staging", "prod"]) {
    out[`overlays/${env}/kustomization.yaml`] = overlay(host, "1.7.0", RESOURCES);
    out[`overlays/${env}/deployment.yaml`] = deployment(host);
    out[`overlays/${env}/service.yaml`] = SERVICE;
    out[`overlays/${env}/secret.yaml`] = secret({ password: "hunter2-base-value" });
  }
  return out;
}

export interface Run {
  name: string;
  status: string;
  conclusion: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
}

/** The completed `ferry/diff` run on `sha`, waited for with a generous deadline. */
export async function diffRun(world: World, sha: string): Promise<Run> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    await world.settle();
    const { data } = await world.as.mona.rest.checks.listForRef({ owner: "acme", repo: "config", ref: sha });
    const run = (data.check_runs as unknown as Run[]).find((item) => item.name === "ferry/diff");
    if (run?.status === "completed") return run;
    if (Date.now() > deadline) throw new Error(`no completed ferry/diff on ${sha}: ${JSON.stringify(run)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A PR from `branch` (made from main) whose one commit writes `changes`; returns its head SHA. */
export async function personPull(world: World, branch: string, changes: Record<string, string | null>) {
  const head = await actAs.commit(world.emu, "acme", "config", branch, changes, `${branch}`, { as: "mona" });
  await actAs.openPullRequest(world.emu, "acme", "config", { head: branch, title: branch, as: "mona" });
  return head;
}
