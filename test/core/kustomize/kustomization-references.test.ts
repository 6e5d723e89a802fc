import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import {
  isRemoteReference,
  kustomizationReferences,
  remoteAllowed,
} from "../../../src/core/kustomize/kustomization-references.js";

describe("isRemoteReference", () => {
  it.each([
    "https://github.com/acme/bases//shop?ref=v1",
    "http://10.0.0.1/manifests.yaml",
    "ssh://git@github.com/acme/bases",
    "git@github.com:acme/bases.git",
    "git::https://example.com/repo",
    "github.com/acme/bases/shop",
    "gitlab.example.com:8443/acme/bases",
    "file:///etc/kubernetes",
    "bases/shop?ref=main",
  ])("treats %s as remote", (value) => {
    expect(isRemoteReference(value)).toBe(true);
  });

  it.each(["deployment.yaml", "../../base", "./overlays/staging", "sub/dir/file.yml", "/abs/path"])(
    "treats %s as local",
    (value) => {
      expect(isRemoteReference(value)).toBe(false);
    },
  );
});

describe("kustomizationReferences", () => {
  it("finds every field kustomize loads a path or URL from, and skips inline patches", () => {
    const kustomization = parse(`
resources: [web.yaml, "https://example.com/x.yaml"]
bases: [../base]
components: [github.com/acme/components/tls]
crds: [crd.yaml]
patches:
  - path: patch.yaml
  - patch: |-
      - op: replace
        path: /spec/replicas
        value: 3
patchesStrategicMerge:
  - |-
    apiVersion: apps/v1
    kind: Deployment
configMapGenerator:
  - name: config
    files: [app.properties, key=other.txt]
    envs: [config.env]
helmCharts:
  - name: redis
    repo: https://charts.bitnami.com/bitnami
    valuesFile: values.yaml
`);
    expect(
      kustomizationReferences(kustomization).map(({ field, value, remote }) => `${field} ${value} ${remote}`),
    ).toEqual([
      "resources web.yaml false",
      "resources https://example.com/x.yaml true",
      "bases ../base false",
      "components github.com/acme/components/tls true",
      "crds crd.yaml false",
      "patches[0].path patch.yaml false",
      "configMapGenerator[0].files app.properties false",
      "configMapGenerator[0].files other.txt false",
      "configMapGenerator[0].envs config.env false",
      "helmCharts[0].repo https://charts.bitnami.com/bitnami true",
      "helmCharts[0].valuesFile values.yaml false",
    ]);
  });

  it("allows a remote reference only by a non-empty prefix", () => {
    expect(remoteAllowed("https://github.com/acme/bases//x?ref=v1", ["https://github.com/acme/"])).toBe(true);
    expect(remoteAllowed("https://github.com/evil/bases", ["https://github.com/acme/"])).toBe(false);
    expect(remoteAllowed("https://github.com/evil/bases", [""])).toBe(false);
  });
});
