/**
 * The install manifests in deploy/ render with `kubectl kustomize` and apply cleanly to the
 * cluster simulator, as an operator would install them.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { startClusterSimulator, type ClusterSimulator } from "../../packages/sandbox/src/cluster/index.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..");

async function kustomize(dir: string): Promise<Record<string, any>[]> {
  const { stdout } = await run("kubectl", ["kustomize", join(ROOT, dir)]);
  return parseAllDocuments(stdout).map((doc) => doc.toJS());
}

describe("deploy/ install manifests", () => {
  let sim: ClusterSimulator;
  let dir: string;
  beforeAll(async () => {
    sim = await startClusterSimulator();
    dir = mkdtempSync(join(tmpdir(), "ferry-deploy-"));
    sim.writeKubeconfig(join(dir, "kubeconfig"));
  });
  afterAll(async () => {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("renders the app whose only cluster access is its membership Leases in its own namespace, and a PodDisruptionBudget", async () => {
    const objects = await kustomize("deploy");
    const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    expect(kinds).toEqual([
      "Deployment/ferry",
      "Namespace/ferry-system",
      "PodDisruptionBudget/ferry",
      "Role/ferry-scan-membership",
      "RoleBinding/ferry-scan-membership",
      "Service/ferry",
      "ServiceAccount/ferry",
    ]);
    expect(objects.some((o) => /^Cluster/.test(o.kind))).toBe(false);
    const role = objects.find((o) => o.kind === "Role")!;
    expect(role.metadata.namespace).toBe("ferry-system");
    expect(role.rules).toEqual([
      {
        apiGroups: ["coordination.k8s.io"],
        resources: ["leases"],
        verbs: ["get", "list", "create", "update", "delete"],
      },
    ]);
    const pdb = objects.find((o) => o.kind === "PodDisruptionBudget")!;
    const deployment = objects.find((o) => o.kind === "Deployment")!;
    expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.template.metadata.labels);
    expect(pdb.spec.minAvailable).toBeLessThan(deployment.spec.replicas);
    const pod = deployment.spec.template.spec;
    // The token is mounted for the Leases (the Role above is all it grants).
    expect(pod.automountServiceAccountToken).toBe(true);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    const env = Object.fromEntries(
      pod.containers[0].env.map((e: any) => [e.name, e.valueFrom?.secretKeyRef?.name]),
    );
    expect(env).toMatchObject({
      APP_ID: "ferry-github-app",
      PRIVATE_KEY: "ferry-github-app",
      WEBHOOK_SECRET: "ferry-github-app",
    });
    // The selector and the pod labels agree, or the Deployment would select nothing.
    expect(deployment.spec.selector.matchLabels).toEqual(deployment.spec.template.metadata.labels);
  });

  it.each(["staging", "prod"])(
    "renders the %s reconciler with namespaced, least-privilege RBAC",
    async (environment) => {
      const objects = await kustomize(`deploy/reconciler/${environment}`);
      for (const object of objects) expect(object.metadata.namespace).toBe(`shop-${environment}`);
      expect(objects.some((o) => o.kind === "ClusterRole" || o.kind === "ClusterRoleBinding")).toBe(false);
      const role = objects.find((o) => o.kind === "Role")!;
      const verbs = role.rules.flatMap((rule: any) => rule.verbs);
      expect(verbs).not.toContain("*");
      expect(role.rules.flatMap((rule: any) => rule.resources)).not.toContain("*");
      const args: string[] = objects.find((o) => o.kind === "Deployment")!.spec.template.spec.containers[0]
        .args;
      const pod = objects.find((o) => o.kind === "Deployment")!.spec.template.spec;
      const container = pod.containers[0];
      // The kubelet probes /healthz, which fails while a cycle is stuck past its deadline.
      expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
      expect(container.readinessProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
      // /status and /metrics off loopback need the token; the work dir cannot fill the node.
      expect(container.env.find((e: any) => e.name === "FERRY_STATUS_TOKEN").valueFrom.secretKeyRef).toEqual({
        name: "ferry-reconciler-status",
        key: "token",
        optional: true,
      });
      expect(pod.volumes.find((v: any) => v.name === "work").emptyDir.sizeLimit).toBe("1Gi");
      // Egress only to DNS, HTTPS on public addresses and the API server: never link-local (metadata).
      const policy = objects.find((o) => o.kind === "NetworkPolicy")!;
      expect(policy.spec.podSelector.matchLabels).toEqual(
        objects.find((o) => o.kind === "Deployment")!.spec.template.metadata.labels,
      );
      expect(policy.spec.policyTypes).toEqual(["Egress"]);
      const ports = policy.spec.egress.flatMap((rule: any) => rule.ports.map((p: any) => p.port));
      expect([...new Set(ports)].sort()).toEqual([443, 53, 6443]);
      expect(policy.spec.egress[1].to[0].ipBlock.except).toContain("169.254.0.0/16");
      expect(args).toEqual(
        expect.arrayContaining([
          "reconcile",
          `--path=overlays/${environment}`,
          `--environment=${environment}`,
          `--namespace=shop-${environment}`,
        ]),
      );
    },
  );

  it("applies to the cluster simulator with kubectl, and the Deployments roll out", async () => {
    const kubeconfig = join(dir, "kubeconfig");
    await run("kubectl", ["--kubeconfig", kubeconfig, "apply", "--server-side", "-k", join(ROOT, "deploy")]);
    for (const environment of ["staging", "prod"]) {
      // The environment's namespace exists before its reconciler is installed into it.
      // (Asynchronously: the simulator answers from this very process.)
      const child = run("kubectl", ["--kubeconfig", kubeconfig, "apply", "-f", "-"]);
      child.child.stdin!.end(`apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop-${environment}\n`);
      await child;
      await run("kubectl", [
        "--kubeconfig",
        kubeconfig,
        "apply",
        "--server-side",
        "-k",
        join(ROOT, `deploy/reconciler/${environment}`),
      ]);
    }
    expect(sim.get("v1", "ServiceAccount", "ferry-system", "ferry")).toBeDefined();
    expect(
      sim.get("rbac.authorization.k8s.io/v1", "RoleBinding", "shop-prod", "ferry-reconciler"),
    ).toBeDefined();
    await sim.waitFor(
      "apps/v1",
      "Deployment",
      "ferry-system",
      "ferry",
      (o: any) => o.status?.availableReplicas === 2,
    );
    await sim.waitFor(
      "apps/v1",
      "Deployment",
      "shop-staging",
      "ferry-reconciler",
      (o: any) => o.status?.availableReplicas === 1,
    );
    const { stdout } = await run("kubectl", [
      "--kubeconfig",
      kubeconfig,
      "get",
      "deploy",
      "-n",
      "shop-prod",
      "-o",
      "json",
    ]);
    expect(JSON.parse(stdout).items.map((d: any) => d.metadata.name)).toEqual(["ferry-reconciler"]);
  }, 30_000);
});
