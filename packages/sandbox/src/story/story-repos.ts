/**
 * The repositories the sandbox story starts from (docs/architecture.md "The sandbox"): the
 * app repo `acme/shop` and the config repo `acme/shop-config` with a Kustomize base, staging and
 * prod overlays, a Helm values file per environment and `.github/ferry.yml`. Pure: the registry
 * host is a parameter, because the embedded registry listens on a free port.
 */

export const OWNER = "acme";
export const APP_REPO = "shop";
export const CONFIG_REPO = "shop-config";
/** The image's repository inside the registry. */
export const IMAGE_PATH = "acme/shop";
export const FIRST_VERSION = "1.7.3";
export const NEW_VERSION = "1.8.0";
/** The check the simulated CI reports and branch protection requires. */
export const REQUIRED_CHECK = "ci";

export const ENVIRONMENTS = [
  { name: "staging", namespace: "staging", replicas: 2 },
  { name: "prod", namespace: "prod", replicas: 3 },
] as const;

export type EnvironmentName = (typeof ENVIRONMENTS)[number]["name"];

export function imageRepository(registryHost: string): string {
  return `${registryHost}/${IMAGE_PATH}`;
}

export function ferryConfig(registryHost: string): string {
  return `# Ferry carries shop from the registry into this repo, one PR per environment.
images:
  shop:
    repository: ${imageRepository(registryHost)}
    source: ${OWNER}/${APP_REPO}
    policy: { range: "^1.0.0" }
environments:
  staging:
    paths: [overlays/staging, helm/values-staging.yaml]
    update: auto
    merge: auto
    health: { reporters: [hubot] }   # the sandbox's reconcilers report as hubot
  prod:
    paths: [overlays/prod, helm/values-prod.yaml]
    from: staging
    update: manual
    merge: review
    promoters: { permission: maintain }
    health: { reporters: [hubot] }
`;
}

function baseDeployment(registryHost: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
  labels: {app: shop}
spec:
  replicas: 1
  selector:
    matchLabels: {app: shop}
  template:
    metadata:
      labels: {app: shop}
    spec:
      containers:
        - name: shop
          # The tag comes from each overlay's images: entry.
          image: ${imageRepository(registryHost)}
          ports:
            - containerPort: 8080
`;
}

const BASE_SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: shop
spec:
  selector: {app: shop}
  ports:
    - port: 80
      targetPort: 8080
`;

const BASE_KUSTOMIZATION = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - deployment.yaml
  - service.yaml
`;

function overlay(registryHost: string, namespace: string, replicas: number, tag: string): string {
  return `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: ${namespace}
resources:
  - ../../base
replicas:
  - name: shop
    count: ${replicas}
images:
  - name: ${imageRepository(registryHost)}
    newTag: "${tag}" # bumped by Ferry
`;
}

function helmValues(registryHost: string, environment: string, tag: string): string {
  return `# Values for the shop chart's ${environment} release (the storefront's worker), kept on the
# same version as the overlay.
replicaCount: 1
image:
  repository: ${imageRepository(registryHost)}
  tag: "${tag}"
  pullPolicy: IfNotPresent
`;
}

/** Every file of the config repo's first commit. */
export function configRepoFiles(registryHost: string): Record<string, string> {
  const files: Record<string, string> = {
    "README.md":
      "# shop-config\n\nWhat runs where. Ferry opens the PRs; the reconcilers apply `overlays/<env>`.\n",
    ".github/ferry.yml": ferryConfig(registryHost),
    "base/kustomization.yaml": BASE_KUSTOMIZATION,
    "base/deployment.yaml": baseDeployment(registryHost),
    "base/service.yaml": BASE_SERVICE,
  };
  for (const { name, namespace, replicas } of ENVIRONMENTS) {
    files[`overlays/${name}/kustomization.yaml`] = overlay(registryHost, namespace, replicas, FIRST_VERSION);
    files[`helm/values-${name}.yaml`] = helmValues(registryHost, name, FIRST_VERSION);
  }
  return files;
}

/** The files an environment's Ferry PR must change. */
export function environmentFiles(environment: EnvironmentName): string[] {
  return [`helm/values-${environment}.yaml`, `overlays/${environment}/kustomization.yaml`];
}

/** The app repo only matters as `source:` (compare links in PR bodies). */
export function appRepoFiles(): Record<string, string> {
  return {
    "README.md": "# shop\n\nThe storefront. CI builds and pushes the image on every tag.\n",
    VERSION: `${FIRST_VERSION}\n`,
  };
}
