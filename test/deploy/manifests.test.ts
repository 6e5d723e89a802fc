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
      for (const object of objects)
        if (object.kind !== "Namespace") expect(object.metadata.namespace).toBe(`shop-${environment}`);
      expect(objects.some((o) => o.kind === "ClusterRole" || o.kind === "ClusterRoleBinding")).toBe(false);
      const role = objects.find((o) => o.kind === "Role")!;
      const verbs = role.rules.flatMap((rule: any) => rule.verbs);
      expect(verbs).not.toContain("*");
      expect(role.rules.flatMap((rule: any) => rule.resources)).not.toContain("*");
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
      // The SOPS age key: an optional Secret's file, named by --sops-age-key-file's variable.
      expect(pod.volumes.find((v: any) => v.name === "sops").secret).toEqual({
        secretName: "ferry-reconciler-sops",
        optional: true,
        defaultMode: 0o440,
      });
      expect(pod.securityContext.fsGroup).toBe(10001);
      const sopsMount = container.volumeMounts.find((m: any) => m.name === "sops");
      expect(sopsMount).toEqual({ name: "sops", mountPath: "/etc/ferry/sops", readOnly: true });
      expect(container.env.find((e: any) => e.name === "FERRY_RECONCILE_SOPS_AGE_KEY_FILE").value).toBe(
        "/etc/ferry/sops/age.agekey",
      );
      // Egress only to DNS, HTTPS on public addresses and the API server: never link-local (metadata).
      const policy = objects.find((o) => o.kind === "NetworkPolicy")!;
      expect(policy.spec.podSelector.matchLabels).toEqual(
        objects.find((o) => o.kind === "Deployment")!.spec.template.metadata.labels,
      );
      expect(policy.spec.policyTypes).toEqual(["Egress"]);
      const ports = policy.spec.egress.flatMap((rule: any) => rule.ports.map((p: any) => p.port));
      expect([...new Set(ports)].sort()).toEqual([443, 53, 6443]);
      expect(policy.spec.egress[1].to[0].ipBlock.except).toContain("169.254.0.0/16");
      // The install creates the namespace it manages: nothing to create by hand first.
      expect(objects.find((o) => o.kind === "Namespace")?.metadata.name).toBe(`shop-${environment}`);
      // No pods or replicasets (never read), no Secrets (listing them reads them all).
      const resources = role.rules.flatMap((rule: any) => rule.resources);
      for (const resource of ["pods", "replicasets", "secrets"]) expect(resources).not.toContain(resource);
      expect(resources).toContain("configmaps"); // the inventory
      // The settings come from one generated ConfigMap the overlay merges into, never from copied args.
      expect(container.args).toEqual(["reconcile"]);
      const configMap = objects.find((o) => o.kind === "ConfigMap")!;
      expect(container.envFrom).toEqual([{ configMapRef: { name: configMap.metadata.name } }]);
      expect(configMap.data).toEqual({
        FERRY_RECONCILE_REPO: "https://github.com/acme/shop-config",
        FERRY_RECONCILE_PATH: `overlays/${environment}`,
        FERRY_RECONCILE_ENVIRONMENT: environment,
        FERRY_RECONCILE_GITHUB_REPO: "acme/shop-config",
        FERRY_RECONCILE_INTERVAL: "2m",
        FERRY_RECONCILE_PRUNE: "true",
        FERRY_RECONCILE_LISTEN: "0.0.0.0:8080",
      });
      const env = Object.fromEntries(container.env.map((e: any) => [e.name, e.valueFrom]));
      expect(env.FERRY_RECONCILE_NAMESPACE).toEqual({ fieldRef: { fieldPath: "metadata.namespace" } });
      // The three Secrets the README names, each optional so the reconciler starts without them.
      expect(
        ["FERRY_GIT_TOKEN", "FERRY_GITHUB_TOKEN", "FERRY_STATUS_TOKEN"].map((name) => env[name].secretKeyRef),
      ).toEqual([
        { name: "ferry-reconciler-git", key: "token", optional: true },
        { name: "ferry-reconciler-github", key: "token", optional: true },
        { name: "ferry-reconciler-status", key: "token", optional: true },
      ]);
    },
  );

  it("applies to the cluster simulator with kubectl, and the Deployments roll out", async () => {
    const kubeconfig = join(dir, "kubeconfig");
    await run("kubectl", ["--kubeconfig", kubeconfig, "apply", "--server-side", "-k", join(ROOT, "deploy")]);
    for (const environment of ["staging", "prod"]) {
      // On an empty cluster: the install creates the namespace it goes into.
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
  });
});
