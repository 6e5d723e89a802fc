import type { FindOptions } from "../../src/core/targets/index.js";
import type { ImageUpdate } from "../../src/core/yaml-edit/update-image.js";

const DIGEST = `sha256:${"e".repeat(64)}`;

/**
 * Edits of real-world files (test/fixtures/corpus, copied byte for byte from the repositories
 * listed in its SOURCES.md). `lines` are the 1-based lines that must change — and no others.
 */
export interface CorpusCase {
  file: string;
  update: ImageUpdate;
  options?: FindOptions;
  lines: number[];
}

export const CORPUS_CASES: CorpusCase[] = [
  {
    file: "stefanprodan__podinfo/charts/podinfo/values.yaml",
    update: { image: "ghcr.io/stefanprodan/podinfo", tag: "6.15.0", pin: "tag" },
    lines: [11],
  },
  {
    file: "stefanprodan__podinfo/charts/podinfo/values-prod.yaml",
    update: { image: "ghcr.io/stefanprodan/podinfo", tag: "6.15.0", digest: DIGEST, pin: "digest" },
    lines: [11],
  },
  {
    file: "stefanprodan__podinfo/kustomize/deployment.yaml",
    update: { image: "ghcr.io/stefanprodan/podinfo", tag: "6.15.0", pin: "tag" },
    lines: [26],
  },
  {
    file: "stefanprodan__podinfo/deploy/bases/frontend/cronjob-warm-cache.yaml",
    update: { image: "ghcr.io/stefanprodan/podinfo", tag: "6.15.0", pin: "tag" },
    lines: [26, 46],
  },
  {
    file: "stefanprodan__podinfo/deploy/bases/database/statefulset-primary.yaml",
    update: { image: "ghcr.io/stefanprodan/podinfo", tag: "6.15.0", pin: "tag" },
    lines: [25],
  },
  {
    file: "stefanprodan__podinfo/deploy/bases/cache/deployment.yaml",
    update: { image: "redis", tag: "7.4.0", pin: "tag" },
    lines: [16],
  },
  {
    file: "bitnami__charts/bitnami/nginx/values.yaml",
    update: { image: "docker.io/bitnami/nginx", tag: "1.29.2-debian-12-r0", digest: DIGEST, pin: "digest" },
    lines: [89, 90],
  },
  {
    file: "bitnami__charts/bitnami/redis/values.yaml",
    update: { image: "bitnami/redis", tag: "8.2.2-debian-12-r0", pin: "tag" },
    lines: [117],
  },
  {
    file: "argoproj__argo-cd/manifests/namespace-install.yaml",
    update: { image: "quay.io/argoproj/argocd", tag: "v3.1.0", pin: "tag" },
    lines: [1014, 1186, 1306, 1421, 1760, 1817, 2311, 2822],
  },
  {
    file: "argoproj__argo-cd/manifests/base/repo-server/argocd-repo-server-deployment.yaml",
    update: { image: "quay.io/argoproj/argocd", tag: "v3.1.0", pin: "tag" },
    lines: [22, 363],
  },
  {
    file: "argoproj__argo-cd/manifests/base/kustomization.yaml",
    update: { image: "quay.io/argoproj/argocd", tag: "v3.1.0", pin: "tag" },
    lines: [8],
  },
  {
    file: "argoproj__argo-cd/controller/testdata/live-deployment.yaml",
    update: { image: "quay.io/argoprojlabs/argocd-e2e-container", tag: "0.2", pin: "tag" },
    lines: [140],
  },
  {
    file: "argoproj__argo-cd/reposerver/repository/testdata/app-parameters/multi/kustomization.yaml",
    update: { image: "quay.io/argoprojlabs/argocd-e2e-container", tag: "0.2", pin: "tag" },
    lines: [8],
  },
  {
    file: "argoproj-labs__argocd-image-updater/test/e2e/containers/git/testdata/008-simple-helm-app/values.yaml",
    update: { image: "quay.io/dkarpele/my-guestbook", tag: "1.0.1", pin: "tag" },
    lines: [9],
  },
  {
    file: "argoproj-labs__argocd-image-updater/test/e2e/containers/git/testdata/004-multi-images/deployment.yaml",
    update: { image: "10.42.0.1:30000/test-image", tag: "1.0.1", pin: "tag" },
    lines: [19],
  },
  {
    file: "argoproj-labs__argocd-image-updater/test/ginkgo/prereqs/containers/git/testdata/1-008-helmvalues-non-live-images/helm/values.yaml",
    update: { image: "127.0.0.1:30000/session", tag: "1.0.1", pin: "tag" },
    lines: [18],
  },
  {
    file: "argoproj-labs__gitops-promoter/cmd/demo/config/argocd-extension.yaml",
    update: {
      image: "quay.io/argoprojlabs/argocd-extension-installer",
      tag: "v0.0.10",
      digest: DIGEST,
      pin: "tag",
    },
    lines: [11],
  },
  {
    file: "fluxcd__flux2/tests/image-automation/kustomization.yaml",
    update: { image: "ghcr.io/stefanprodan/podinfo", tag: "6.9.0", digest: DIGEST, pin: "digest" },
    lines: [10, 11],
  },
  {
    file: "fluxcd__flux2-kustomize-helm-example/apps/base/podinfo/release.yaml",
    update: { image: "public.ecr.aws/docker/library/redis", tag: "8.6.3", pin: "tag" },
    lines: [27],
  },
  {
    file: "fluxcd__kustomize-controller/config/manager/kustomization.yaml",
    update: { image: "fluxcd/kustomize-controller", tag: "v1.10.0", pin: "tag" },
    lines: [8],
  },
  {
    file: "fluxcd__kustomize-controller/internal/controller/testdata/transformers/kustomization.yaml",
    update: { image: "podinfo", tag: "6.1.0", pin: "tag" },
    lines: [21],
  },
  {
    file: "fluxcd__image-automation-controller/internal/update/testdata/setters/original/Kustomization",
    update: { image: "ghcr.io/acme/shop", tag: "v2", pin: "tag" },
    options: { imagePolicies: ["automation-ns:policy"] },
    lines: [8, 9],
  },
  {
    file: "fluxcd__image-automation-controller/internal/update/testdata/setters/original/kustomization.yml",
    update: { image: "ghcr.io/acme/shop", tag: "v2", digest: DIGEST, pin: "digest" },
    options: { imagePolicies: ["automation-ns:policy-with-digest"] },
    lines: [10, 28],
  },
  {
    file: "fluxcd__image-automation-controller/internal/update/testdata/setters/original/marked.yaml",
    update: { image: "ghcr.io/acme/shop", tag: "v2", pin: "tag" },
    options: { imagePolicies: ["automation-ns:policy"] },
    lines: [14],
  },
  {
    file: "fluxcd__image-automation-controller/internal/update/testdata/setters/original/otherns.yaml",
    update: { image: "ghcr.io/acme/shop", tag: "v2", pin: "tag" },
    options: { imagePolicies: ["automation-ns:policy"] },
    lines: [],
  },
  {
    file: "fluxcd__image-automation-controller/internal/update/testdata/replace/commented/deployment.yaml",
    update: { image: "used", tag: "v1.1.0", pin: "tag" },
    lines: [13],
  },
  {
    file: "updatecli__updatecli/pkg/plugins/autodiscovery/helm/testdata-2/chart/sample/values.yaml",
    update: { image: "epinio/epinio-ui", tag: "v1.9.0", digest: DIGEST, pin: "tag" },
    lines: [7],
  },
  {
    file: "updatecli__updatecli/pkg/plugins/autodiscovery/helm/testdata-3/chart/sample/values.yaml",
    update: { image: "ghcr.io/epinio/epinio-server", tag: "v1.9.0", pin: "tag" },
    lines: [4],
  },
  {
    file: "updatecli__updatecli/pkg/plugins/autodiscovery/helm/testdata-6/chart/test-tag-01/values.yaml",
    update: { image: "nginx", tag: "1.27.0", pin: "tag" },
    lines: [3],
  },
  {
    file: "updatecli__updatecli/pkg/plugins/autodiscovery/helm/testdata-1/chart/epinio/values.yaml",
    update: { image: "epinioteam/epinio-ui-qa", tag: "1.0.1", pin: "tag" },
    lines: [7],
  },
  {
    file: "updatecli__updatecli/pkg/plugins/autodiscovery/kubernetes/testdata/cronjob/cronjob.yaml",
    update: { image: "ghcr.io/updatecli/updatecli", tag: "v0.68.0", pin: "tag" },
    lines: [13],
  },
  {
    file: "updatecli__updatecli/pkg/plugins/autodiscovery/kubernetes/testdata/prow/prow.yaml",
    update: { image: "ghcr.io/updatecli/updatecli", tag: "v0.83.0", pin: "tag" },
    lines: [9, 21, 37],
  },
  {
    file: "updatecli__updatecli/pkg/plugins/autodiscovery/kubernetes/testdata/multipleDocuments/manifest.yaml",
    update: { image: "coredns/coredns", tag: "1.14.2", pin: "tag" },
    lines: [50],
  },
  {
    file: "kubernetes__examples/web/guestbook/all-in-one/guestbook-all-in-one.yaml",
    update: { image: "registry.k8s.io/redis", tag: "7.4.0", pin: "tag" },
    lines: [38],
  },
  {
    file: "kubernetes__examples/_archived/cockroachdb/cockroachdb-statefulset.yaml",
    update: { image: "cockroachdb/cockroach", tag: "v24.1.0", pin: "tag" },
    lines: [128],
  },
  {
    file: "kubernetes__examples/_archived/javaweb-tomcat-sidecar/javaweb.yaml",
    update: { image: "resouer/sample", tag: "v2", pin: "tag" },
    lines: [7],
  },
  {
    file: "kubernetes__examples/_archived/sysdig-cloud/sysdig-daemonset.yaml",
    update: { image: "sysdig/agent", tag: "12.0.0", pin: "tag" },
    lines: [42],
  },
];
