/**
 * The README's reconciler install on an empty kube-apiserver (its own control plane, nothing
 * created before): `kubectl apply -k deploy/reconciler/<env>` and the Secret one-liners as the
 * admin, then `ferry reconcile --once` as the installed ServiceAccount, with the settings the
 * Deployment gives the pod (its ConfigMap and downward API). There is no kubelet: the Pod itself is
 * not run, and stand-ins replace only what only a pod has (the in-cluster token and the git host).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { main } from "../../src/cli.js";
import { KubeCluster } from "../../src/adapters/kubernetes/kube-cluster.js";
import { captureIo } from "../support/cli-io.js";
import { ConfigRepo, GIT_ENV, TempDirs } from "../support/reconciler-harness.js";
import { Kubectl, readObject } from "./contract/backend.js";
import { kubeconfigFor, serviceAccountToken, startControlPlane, type ControlPlane } from "./control-plane.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

let controlPlane: ControlPlane;
let admin: Kubectl;
let adminApi: KubeCluster;
const temp = new TempDirs();

beforeAll(async () => {
  controlPlane = await startControlPlane();
  admin = new Kubectl(kubeconfigFor(controlPlane));
  adminApi = KubeCluster.fromOptions({ kubeconfig: kubeconfigFor(controlPlane) });
});

afterAll(async () => {
  admin?.close();
  temp.cleanup();
  await controlPlane?.stop();
});

/** The example app's config repo: a base and one overlay per environment, as the README lays it out. */
function exampleConfig(
  repo: ConfigRepo,
  environment: string,
  tag: string,
  extra: Record<string, string> = {},
) {
  return repo.commit({
    "base/kustomization.yaml": "resources: [deployment.yaml, service.yaml]\n",
    "base/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: shop}
spec:
  selector: {matchLabels: {app: shop}}
  template:
    metadata: {labels: {app: shop}}
    spec:
      containers: [{name: shop, image: ghcr.io/acme/shop:1.0.0}]
`,
    "base/service.yaml": `apiVersion: v1
kind: Service
metadata: {name: shop}
spec:
  selector: {app: shop}
  ports: [{port: 80}]
`,
    [`overlays/${environment}/kustomization.yaml`]: `namespace: shop-${environment}
resources: [../../base${Object.keys(extra)
      .map((file) => `, ${file}`)
      .join("")}]
configMapGenerator:
  - name: shop-settings
    literals: [ENVIRONMENT=${environment}]
images:
  - name: ghcr.io/acme/shop
    newTag: "${tag}"
`,
    ...Object.fromEntries(
      Object.entries(extra).map(([file, text]) => [`overlays/${environment}/${file}`, text]),
    ),
  });
}

/** The README's install steps for one environment, as the admin. */
async function install(environment: string): Promise<void> {
  await admin.ok(["apply", "-k", `deploy/reconciler/${environment}`]);
  for (const name of ["ferry-reconciler-git", "ferry-reconciler-github", "ferry-reconciler-status"])
    await admin.ok([
      "-n",
      `shop-${environment}`,
      "create",
      "secret",
      "generic",
      name,
      "--from-literal=token=not-a-real-token",
    ]);
}

/** `ferry reconcile --once` the way the installed Deployment runs it. */
async function reconcileAsThePod(environment: string, repo: ConfigRepo) {
  const namespace = `shop-${environment}`;
  const deployment = (await readObject(adminApi, "apps/v1", "Deployment", namespace, "ferry-reconciler"))!;
  const container = (deployment.spec as any).template.spec.containers[0];
  const configMapName: string = container.envFrom[0].configMapRef.name;
  const configMap = (await readObject(adminApi, "v1", "ConfigMap", namespace, configMapName))!;
  // The in-cluster credential: a token of the installed ServiceAccount.
  const token = await serviceAccountToken(controlPlane, namespace, "ferry-reconciler");
  const kubeconfig = new Kubectl(kubeconfigFor(controlPlane, { token }));
  try {
    // The container's environment as the kubelet would build it: the ConfigMap, then `env`.
    const env: Record<string, string | undefined> = {
      ...GIT_ENV,
      ...(configMap.data as Record<string, string>),
    };
    for (const entry of container.env as any[]) {
      if (entry.value !== undefined) env[entry.name] = entry.value;
      else if (entry.valueFrom.fieldRef?.fieldPath === "metadata.namespace") env[entry.name] = namespace;
      else if (entry.valueFrom.secretKeyRef) {
        const { name, key } = entry.valueFrom.secretKeyRef;
        const secret = await readObject(adminApi, "v1", "Secret", namespace, name);
        const value = (secret?.data as Record<string, string> | undefined)?.[key];
        if (value !== undefined) env[entry.name] = Buffer.from(value, "base64").toString("utf8");
      } else throw new Error(`unexpected env entry ${JSON.stringify(entry)}`);
    }
    const io = captureIo(repo.dir, {
      env: {
        ...env,
        // Stand-ins for what only a pod has: the git host is a local repository (and no GitHub to
        // report to), the pod's service account token a kubeconfig holding it.
        FERRY_RECONCILE_REPO: repo.dir,
        FERRY_RECONCILE_GITHUB_REPO: "",
        FERRY_RECONCILE_KUBECONFIG: kubeconfig.kubeconfigFile,
        FERRY_RECONCILE_WORK_DIR: temp.make("ferry-install-work-"),
      },
    });
    expect(env).toMatchObject({
      FERRY_RECONCILE_NAMESPACE: namespace,
      FERRY_STATUS_TOKEN: "not-a-real-token",
    });
    expect(container.args).toEqual(["reconcile"]);
    const code = await main([...container.args, "--once"], io);
    return { code, out: io.out, err: io.err };
  } finally {
    kubeconfig.close();
  }
}

describe("the README's reconciler install on an empty cluster", () => {
  it("kubectl apply -k deploy/reconciler/staging, then ferry reconcile --once as its ServiceAccount syncs the app", async () => {
    await install("staging");
    const repo = new ConfigRepo(temp.make("ferry-example-config-"));
    exampleConfig(repo, "staging", "1.2.0");
    const { code, out, err } = await reconcileAsThePod("staging", repo);
    expect(err).not.toMatch(/ferry reconcile:/);
    expect(out).toMatch(/: Synced, Progressing; applied 3, pruned 0\n/);
    expect(code).toBe(0);
    const shop = await readObject(adminApi, "apps/v1", "Deployment", "shop-staging", "shop");
    expect((shop!.spec as any).template.spec.containers[0].image).toBe("ghcr.io/acme/shop:1.2.0");
    expect(await readObject(adminApi, "v1", "Service", "shop-staging", "shop")).toBeDefined();
  });

  it("a kind the shipped Role leaves out is refused and named, and the image bump still applies", async () => {
    await install("prod");
    const repo = new ConfigRepo(temp.make("ferry-example-config-"));
    exampleConfig(repo, "prod", "1.2.0");
    expect((await reconcileAsThePod("prod", repo)).code).toBe(0);
    // The config repo starts using a kind the Role does not grant, in the same commit as a new tag.
    exampleConfig(repo, "prod", "1.3.0", {
      "policy.yaml": `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: shop}
spec:
  podSelector: {matchLabels: {app: shop}}
  policyTypes: [Ingress]
`,
    });
    const { code, out, err } = await reconcileAsThePod("prod", repo);
    expect(code).toBe(1);
    expect(err).toMatch(
      /ferry reconcile: refused: NetworkPolicy\.networking\.k8s\.io shop-prod\/shop: forbidden by the reconciler's RBAC \(.*networkpolicies.* is forbidden/,
    );
    expect(out).toMatch(/applied 1, pruned 0\n/);
    expect(out).toContain("NetworkPolicy.networking.k8s.io shop-prod/shop");
    const shop = await readObject(adminApi, "apps/v1", "Deployment", "shop-prod", "shop");
    expect((shop!.spec as any).template.spec.containers[0].image).toBe("ghcr.io/acme/shop:1.3.0");
    expect(
      await readObject(adminApi, "networking.k8s.io/v1", "NetworkPolicy", "shop-prod", "shop"),
    ).toBeUndefined();
  });
});
