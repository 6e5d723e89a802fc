/**
 * Helm charts end to end: a config repo whose staging environment is a chart (a wrapper chart
 * with the app chart committed in its `charts/` folder, and the environment's values file that
 * Ferry edits). A new tag in the registry → Ferry's PR → auto-merge → the reconciler renders the
 * chart with the real `helm template` → the simulator's Deployment runs the new image; for each
 * values shape Ferry recognises.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ConfigRepoFetcher } from "../../src/adapters/git/config-repo-fetcher.js";
import { KubeCluster } from "../../src/adapters/kubernetes/kube-cluster.js";
import { DEFAULT_PRUNE_OPTIONS } from "../../src/reconciler/plan.js";
import { createReconciler } from "../../src/reconciler/reconciler.js";
import {
  startClusterSimulator,
  type ClusterSimulator,
} from "../../packages/sandbox/src/cluster/cluster-simulator.js";
import { ferryAppManifest, UnthrottledOctokit } from "../../packages/sandbox/src/ferry-app.js";
import {
  startGitHubEmulator,
  type GitHubEmulator,
  accounts,
  actAs,
  inspect,
  repos,
} from "../../packages/sandbox/src/github/index.js";
import {
  startEmbeddedRegistry,
  type EmbeddedRegistry,
} from "../../packages/sandbox/src/registry/embedded-registry.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { startFerryServer, type FerryServer } from "../../src/server/ferry-server.js";
import { GIT_ENV, TempDirs } from "../support/reconciler-harness.js";

const SECRET = "helm-e2e-webhook-secret";
const REGISTRY_SECRET = "helm-e2e-registry-secret";
const temp = new TempDirs();
let emu: GitHubEmulator | undefined;
let registry: EmbeddedRegistry | undefined;
let server: FerryServer | undefined;
let sim: ClusterSimulator | undefined;

afterEach(async () => {
  await server?.close();
  await registry?.close();
  await emu?.close();
  await sim?.close();
  temp.cleanup();
});

const APP_CHART = `apiVersion: v2
name: shop
version: 0.1.0
`;
/**
 * The values shapes seen in the wild, each with the chart template that reads it: Helm's
 * `{repository, tag}`, Argo CD Image Updater's `{name, tag}`
 * (https://argocd-image-updater.readthedocs.io/en/stable/configuration/images/#helm), and one
 * `repo:tag` string.
 */
const SHAPES = {
  "image: {repository, tag}": {
    appValues: `image:\n  repository: example.invalid/shop\n  tag: "0.0.0"\n`,
    template: "{{ .Values.image.repository }}:{{ .Values.image.tag }}",
    staging: (repository: string, tag: string) =>
      `shop:\n  image:\n    repository: ${repository}\n    tag: "${tag}"\n`,
  },
  "image: {name, tag}": {
    appValues: `image:\n  name: example.invalid/shop\n  tag: "0.0.0"\n`,
    template: "{{ .Values.image.name }}:{{ .Values.image.tag }}",
    staging: (repository: string, tag: string) =>
      `shop:\n  image:\n    name: ${repository}\n    tag: "${tag}"\n`,
  },
  'image: "repo:tag"': {
    appValues: `image: "example.invalid/shop:0.0.0"\n`,
    template: "{{ .Values.image }}",
    staging: (repository: string, tag: string) => `shop:\n  image: "${repository}:${tag}"\n`,
  },
} as const;

function appDeployment(template: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-shop
  namespace: {{ .Release.Namespace }}
spec:
  replicas: 2
  selector:
    matchLabels: {app: shop}
  template:
    metadata:
      labels: {app: shop}
    spec:
      containers:
        - name: shop
          image: "${template}"
`;
}
const WRAPPER_CHART = `apiVersion: v2
name: staging
version: 1.0.0
dependencies:
  - name: shop
    version: 0.1.0
    repository: file://charts/shop
`;

describe("a Helm chart environment", () => {
  it.each(Object.entries(SHAPES))(
    "with %s values, runs the new image after a new tag's PR merges: the reconciler renders the chart with helm template",
    async (_shape, shape) => {
      emu = await startGitHubEmulator();
      registry = await startEmbeddedRegistry();
      sim = await startClusterSimulator({ rolloutStepMs: 20 });
      sim.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
      const mona = accounts.createUser(emu, "mona");
      accounts.createOrg(emu, "acme");
      await pushImage(registry.url, "acme/shop", "1.7.0", { content: "1.7.0" });
      await repos.createRepo(emu, "acme", "config", {
        files: {
          ".github/ferry.yml": `images:\n  shop:\n    repository: ${registry.host}/acme/shop\n    policy: { range: "^1.0.0" }\nenvironments:\n  staging:\n    paths: [deploy/staging/values.yaml]\n    update: auto\n    merge: auto\n`,
          "deploy/staging/Chart.yaml": WRAPPER_CHART,
          "deploy/staging/values.yaml": shape.staging(`${registry.host}/acme/shop`, "1.7.0"),
          "deploy/staging/charts/shop/Chart.yaml": APP_CHART,
          "deploy/staging/charts/shop/values.yaml": shape.appValues,
          "deploy/staging/charts/shop/templates/deployment.yaml": appDeployment(shape.template),
        },
        collaborators: { mona: "maintain" },
        allowAutoMerge: true,
      });
      repos.protectBranch(emu, "acme", "config", "main", { requiredChecks: ["ci"] });
      actAs.setCi(emu, "acme", "config", { context: "ci", conclusion: "success" });
      const app = accounts.createApp(emu, {
        slug: "ferry",
        permissions: ferryAppManifest().permissions,
        webhookSecret: SECRET,
      });
      accounts.installApp(emu, app.id, "acme");
      server = await startFerryServer({
        appId: app.id,
        privateKey: app.privateKey,
        webhookSecret: SECRET,
        baseUrl: emu.apiUrl,
        webUrl: emu.webUrl,
        Octokit: UnthrottledOctokit,
        scanIntervalMs: false,
        registrySecrets: { distribution: REGISTRY_SECRET },
        registryCoalesceMs: 20,
        logLevel: "fatal",
      });
      accounts.setWebhook(emu, app.id, `${server.url}/api/github/webhooks`, SECRET);
      registry.addNotificationEndpoint({
        url: `${server.url}/registry/distribution`,
        headers: { Authorization: REGISTRY_SECRET },
      });
      const reconciler = createReconciler({
        cluster: KubeCluster.fromOptions({ kubeconfig: sim.kubeconfig() }),
        source: new ConfigRepoFetcher({
          repo: emu.gitUrl("acme", "config"),
          token: mona.token,
          workDir: temp.make(),
          env: GIT_ENV,
        }),
        settings: {
          instance: "staging",
          path: "deploy/staging",
          namespace: "shop",
          inventoryNamespace: "shop",
          createNamespace: false,
          dryRun: false,
          prune: DEFAULT_PRUNE_OPTIONS,
          render: { helmNamespace: "shop", env: { PATH: process.env.PATH, HOME: temp.make() } },
        },
      });
      const image = async (): Promise<string | undefined> => {
        const object = await sim!.waitFor("apps/v1", "Deployment", "shop", "staging-shop", () => true);
        const spec = object.spec as { template: { spec: { containers: { image: string }[] } } };
        return spec.template.spec.containers[0]?.image;
      };

      const first = await reconciler.cycle();
      expect(first.errors).toEqual([]);
      expect(await image()).toBe(`${registry.host}/acme/shop:1.7.0`);

      await pushImage(registry.url, "acme/shop", "1.8.0", { content: "1.8.0" });
      // Wait for the effect: the values file on main carries the new tag once the PR merged.
      for (;;) {
        await emu.idle();
        await server.idle();
        const values = await inspect.readFile(emu, "acme", "config", "main", "deploy/staging/values.yaml");
        if (values?.includes("1.8.0")) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const second = await reconciler.cycle();
      expect(second.errors).toEqual([]);
      expect(await image()).toBe(`${registry.host}/acme/shop:1.8.0`);
    },
  );
});
