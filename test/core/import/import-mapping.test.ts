import { describe, expect, it } from "vitest";
import { importPeerConfig } from "../../../src/core/import/import-config.js";

/** The mapping's smaller rules, one peer object each (the golden cases hold the documented examples). */
function imported(yaml: string) {
  return importPeerConfig([{ file: "peer.yaml", text: yaml }]);
}

const APP = (name: string, path: string, annotations = "") => `---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: ${name}
  annotations: {${annotations}}
spec: { source: { path: ${path} } }
`;

describe("Argo CD Image Updater", () => {
  it("with useAnnotations reads the selected Application's annotations instead of images[]", () => {
    const result = imported(`apiVersion: argocd-image-updater.argoproj.io/v1alpha1
kind: ImageUpdater
metadata: { name: legacy }
spec:
  applicationRefs:
    - namePattern: "web-*"
      useAnnotations: true
      images: [{ alias: ignored, imageName: "ghcr.io/acme/ignored" }]
${APP("web-prod", "envs/prod", '"argocd-image-updater.argoproj.io/image-list": "web=ghcr.io/acme/web:~1.4", "argocd-image-updater.argoproj.io/write-back-method": git')}`);
    expect(result.config.images).toEqual({
      web: { repository: "ghcr.io/acme/web", policy: { range: "~1.4" } },
    });
    expect(result.config.environments).toEqual({
      "web-prod": { paths: ["envs/prod"], update: "auto", merge: "auto" },
    });
  });

  it("leaves an Application whose updater opens pull requests for review, and one it pushes to for auto-merge", () => {
    const result = imported(`apiVersion: argocd-image-updater.argoproj.io/v1alpha1
kind: ImageUpdater
metadata: { name: u }
spec:
  writeBackConfig: { method: git }
  applicationRefs:
    - namePattern: prod
      writeBackConfig: { method: git, gitConfig: { pullRequest: { github: {} } } }
      images: [{ alias: api, imageName: "ghcr.io/acme/api" }]
    - namePattern: staging
      images: [{ alias: api, imageName: "ghcr.io/acme/api" }]
${APP("prod", "envs/prod")}${APP("staging", "envs/staging")}`);
    expect(result.config.environments).toMatchObject({
      prod: { merge: "review" },
      staging: { merge: "auto" },
    });
  });

  it("guesses an environment for a namePattern no Application in the input matches, and says so", () => {
    const result = imported(`apiVersion: argocd-image-updater.argoproj.io/v1alpha1
kind: ImageUpdater
metadata: { name: u }
spec:
  writeBackConfig: { method: git }
  applicationRefs:
    - namePattern: "payments-*"
      images: [{ alias: api, imageName: "ghcr.io/acme/api" }]
`);
    expect(Object.keys(result.config.environments as object)).toEqual(["payments"]);
    expect(result.notes).toContain(
      'ImageUpdater u: no Application in the input matches "payments-*"; its environment is a guess: add the Applications to the input',
    );
  });

  it("reads an absolute write-back target from the repository's root and refuses one that leaves it", () => {
    const absolute = imported(
      APP(
        "a",
        "apps/a",
        '"argocd-image-updater.argoproj.io/image-list": "x=ghcr.io/acme/x", "argocd-image-updater.argoproj.io/write-back-method": git, "argocd-image-updater.argoproj.io/write-back-target": "kustomization:/config/overlays/bar"',
      ),
    );
    expect((absolute.config.environments as Record<string, { paths: string[] }>).a!.paths).toEqual([
      "config/overlays/bar",
    ]);
    const leaving = imported(
      APP(
        "b",
        "apps/b",
        '"argocd-image-updater.argoproj.io/image-list": "x=ghcr.io/acme/x", "argocd-image-updater.argoproj.io/write-back-method": git, "argocd-image-updater.argoproj.io/write-back-target": "helmvalues:../../../values.yaml"',
      ),
    );
    expect((leaving.config.environments as Record<string, { paths: string[] }>).b!.paths).toEqual(["apps/b"]);
    expect(leaving.notes.some((note) => note.includes("leaves the repository"))).toBe(true);
  });

  it("leaves out an image whose name is not an image reference, saying why", () => {
    const result = imported(
      APP(
        "a",
        "apps/a",
        '"argocd-image-updater.argoproj.io/image-list": "bad=Not An Image, ok=ghcr.io/acme/ok"',
      ),
    );
    expect(Object.keys(result.config.images as object)).toEqual(["ok"]);
    expect(
      result.notes.some((note) => note.startsWith("Application a image bad: invalid image reference")),
    ).toBe(true);
  });

  it("names the cosign key secret of imagesVerification without reading it", () => {
    const result = imported(`apiVersion: argocd-image-updater.argoproj.io/v1alpha1
kind: ImageUpdater
metadata: { name: signed }
spec:
  writeBackConfig: { method: git }
  imagesVerification: { cosignKey: { secretName: cosign-pub, key: cosign.pub } }
  applicationRefs:
    - namePattern: a
      images: [{ alias: x, imageName: "ghcr.io/acme/x" }]
${APP("a", "apps/a")}`);
    expect(result.notes).toContain(
      "ImageUpdater signed: imagesVerification: put the cosign public key in the policy's verify.key",
    );
  });
});

describe("Flux", () => {
  it("narrows an automation's policies by policySelector.matchLabels", () => {
    const result = imported(`apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageRepository
metadata: { name: a, namespace: ns }
spec: { image: ghcr.io/acme/a }
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageRepository
metadata: { name: b, namespace: ns }
spec: { image: ghcr.io/acme/b }
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata: { name: a, namespace: ns, labels: { team: web } }
spec: { imageRepositoryRef: { name: a }, policy: { semver: { range: ^1.0.0 } } }
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata: { name: b, namespace: ns }
spec: { imageRepositoryRef: { name: b }, policy: { semver: { range: ^2.0.0 } } }
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageUpdateAutomation
metadata: { name: web, namespace: ns }
spec:
  policySelector: { matchLabels: { team: web } }
  update: { path: ./web }
`);
    expect(Object.keys(result.config.images as object)).toEqual(["a"]);
    expect(result.notes).toContain(
      "ImagePolicy ns/b: no automation in the input updates it (by namespace, policySelector and markers); left out",
    );
  });

  it("leaves out a policy whose ImageRepository is not in the input", () => {
    const result = imported(`apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata: { name: lonely, namespace: ns }
spec: { imageRepositoryRef: { name: gone }, policy: { semver: { range: ^1.0.0 } } }
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageUpdateAutomation
metadata: { name: web, namespace: ns }
spec: { update: { path: ./web } }
`);
    expect(result.config.images).toEqual({});
    expect(result.notes).toContain(
      "ImagePolicy ns/lonely: its ImageRepository gone is not in the input; left out",
    );
  });
});
