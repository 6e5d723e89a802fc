import { describe, expect, it } from "vitest";
import { applyKustomizeImages, argoRenderPlan } from "../../../src/core/diff/argo-overrides.js";
import type { KubeObject } from "../../../src/core/diff/index.js";

const application = (spec: Record<string, unknown>, kind = "Application"): KubeObject => ({
  apiVersion: "argoproj.io/v1alpha1",
  kind,
  metadata: { name: "shop", namespace: "argocd" },
  spec,
});
const pod = (image: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p" },
  spec: { containers: [{ name: "c", image }] },
});
const imageOf = (object: KubeObject) =>
  (object.spec as { containers: { image: string }[] }).containers[0]!.image;

describe("argoRenderPlan", () => {
  it("takes each source's path and the overrides Ferry applies, and names every other one", () => {
    const plan = argoRenderPlan(
      application({
        destination: { namespace: "shop-prod" },
        sources: [
          {
            repoURL: "https://github.com/acme/config",
            path: "./envs/prod/",
            kustomize: { images: ["ghcr.io/acme/shop:1.8.0"], namePrefix: "p-" },
          },
          {
            repoURL: "https://github.com/acme/config",
            path: "charts/shop",
            helm: {
              valueFiles: ["values-prod.yaml", "$values/envs/prod/values.yaml"],
              values: "replicas: 1\n",
              valuesObject: { image: { tag: "1.7.3" }, replicas: 3 },
              parameters: [
                { name: "image.tag", value: "1.8.0" },
                { name: "ports[0].port", value: "8080" },
                { name: "annotations.acme\\.io/team", value: "shop" },
                { name: "flag", value: "true", forceString: true },
                { name: "__proto__.polluted", value: "x" },
              ],
              releaseName: "other",
            },
          },
          { repoURL: "https://github.com/acme/config", ref: "values" },
          { repoURL: "https://charts.example.com", chart: "redis", targetRevision: "18.0.0" },
        ],
      }),
    );
    expect(plan.sources).toEqual([
      {
        path: "envs/prod",
        kustomizeImages: ["ghcr.io/acme/shop:1.8.0"],
        helmValueFiles: [],
        namespace: "shop-prod",
      },
      {
        path: "charts/shop",
        kustomizeImages: [],
        helmValueFiles: ["charts/shop/values-prod.yaml"],
        // valuesObject wins over values, parameters over both.
        helmValues: {
          image: { tag: "1.8.0" },
          replicas: 3,
          ports: [{ port: 8080 }],
          annotations: { "acme.io/team": "shop" },
          flag: "true",
        },
        namespace: "shop-prod",
      },
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(plan.notApplied).toEqual([
      "Application shop: source 0: kustomize.namePrefix not applied",
      "Application shop: source 1: helm.releaseName not applied",
      "Application shop: source 1: helm.valueFiles $values/envs/prod/values.yaml not applied (outside this source)",
      "Application shop: source 1: helm.parameters __proto__.polluted not applied (a name Ferry cannot read)",
      "Application shop: source 3: chart redis from https://charts.example.com is not rendered (a remote chart)",
    ]);
  });

  it("reads an ApplicationSet's template and refuses a templated path", () => {
    const plan = argoRenderPlan(
      application({ template: { spec: { source: { path: "envs/{{name}}" } } } }, "ApplicationSet"),
    );
    expect(plan.sources).toEqual([]);
    expect(plan.notApplied).toEqual([
      "ApplicationSet shop: source 0: path envs/{{name}} is a template filled in by its generator; not rendered",
    ]);
  });
});

describe("applyKustomizeImages", () => {
  it("sets tags, digests and new names as kustomize edit set image does", () => {
    const digest = `sha256:${"d".repeat(64)}`;
    expect(
      imageOf(applyKustomizeImages([pod("ghcr.io/acme/shop:1.7.3")], ["ghcr.io/acme/shop:1.8.0"])[0]!),
    ).toBe("ghcr.io/acme/shop:1.8.0");
    expect(
      imageOf(applyKustomizeImages([pod("ghcr.io/acme/shop:1.7.3")], [`ghcr.io/acme/shop@${digest}`])[0]!),
    ).toBe(`ghcr.io/acme/shop@${digest}`);
    expect(
      imageOf(
        applyKustomizeImages(
          [pod("ghcr.io/acme/shop:1.7.3")],
          ["ghcr.io/acme/shop=mirror.example/shop:2.0.0"],
        )[0]!,
      ),
    ).toBe("mirror.example/shop:2.0.0");
    const untouched = pod("docker.io/library/redis:7");
    expect(applyKustomizeImages([untouched], ["ghcr.io/acme/shop:1.8.0"])[0]).toEqual(untouched);
  });
});
