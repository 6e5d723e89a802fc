import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/core/config/load-config.js";
import { environmentPolicy } from "../../../src/core/policy/layered-policy.js";
import { importPeerConfig, renderImport } from "../../../src/core/import/import-config.js";
import { selectTag, type TagCandidate } from "../../../src/core/policy/select-tag.js";
import { PEER_TAG_CASES, type PeerTagCase } from "../../support/peer-tag-cases.js";

/**
 * An imported policy chooses what the peer chooses on the peer's documented tags: each peer
 * object goes through `ferry import`, the printed ferry.yml through Ferry's loader, and the
 * environment's policy through tag selection.
 */
const NOW = new Date("2024-06-01T12:00:00Z");

function chosenByImport(
  peerYaml: string,
  candidates: TagCandidate[],
  current?: string,
  currentDigest?: string,
) {
  const printed = renderImport(importPeerConfig([{ file: "peer.yaml", text: peerYaml }]));
  const loaded = loadConfig(printed);
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  const [environment] = Object.keys(loaded.config.environments);
  const [image] = Object.keys(loaded.config.images);
  const options: Parameters<typeof selectTag>[1] = {
    policy: environmentPolicy(loaded.config, environment!, image!),
    now: NOW,
  };
  if (current !== undefined) options.current = current;
  if (currentDigest !== undefined) options.currentDigest = currentDigest;
  return selectTag(candidates, options);
}

function tagOf(peerYaml: string, { tags }: PeerTagCase): string | undefined {
  const selection = chosenByImport(
    peerYaml,
    tags.map((tag) => ({ tag })),
  );
  return selection.kind === "selected" ? selection.tag : undefined;
}

function fluxPolicy(spec: string): string {
  return `apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageRepository
metadata: { name: app, namespace: flux-system }
spec: { image: ghcr.io/acme/app, interval: 1h }
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata: { name: app, namespace: flux-system }
spec:
  imageRepositoryRef: { name: app }
${spec}
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageUpdateAutomation
metadata: { name: apps, namespace: flux-system }
spec:
  update: { path: ./apps }
`;
}

function argoImage(imageName: string, settings: string): string {
  return `apiVersion: argocd-image-updater.argoproj.io/v1alpha1
kind: ImageUpdater
metadata: { name: app, namespace: argocd }
spec:
  applicationRefs:
    - namePattern: app
      images:
        - alias: app
          imageName: "${imageName}"
          commonUpdateSettings: ${settings}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: app, namespace: argocd }
spec: { source: { path: apps/app } }
`;
}

describe("Flux policies, imported, choose what Flux chooses", () => {
  it("semver range 5.1.x (imagepolicies.md Example)", () => {
    const c = PEER_TAG_CASES.fluxPatchRange;
    expect(tagOf(fluxPolicy("  policy: { semver: { range: 5.1.x } }"), c)).toBe(c.chosen);
  });

  it("filterTags pattern '.*-rc.*' with range '^1.x-0' (imagepolicies.md Filter Tags)", () => {
    const c = PEER_TAG_CASES.fluxReleaseCandidates;
    const spec = "  filterTags: { pattern: '.*-rc.*' }\n  policy: { semver: { range: '^1.x-0' } }";
    expect(tagOf(fluxPolicy(spec), c)).toBe(c.chosen);
  });

  it("alphabetical asc over the extracted $timestamp (imagepolicies.md, minio)", () => {
    const c = PEER_TAG_CASES.fluxMinioTimestamps;
    const spec =
      "  filterTags: { pattern: '^RELEASE\\.(?P<timestamp>.*)Z$', extract: '$timestamp' }\n  policy: { alphabetical: { order: asc } }";
    expect(tagOf(fluxPolicy(spec), c)).toBe(c.chosen);
  });

  it("numerical over the extracted numbered group $1 (filter_test.go)", () => {
    const c = PEER_TAG_CASES.fluxNumberedGroup;
    const spec =
      "  filterTags: { pattern: 'ver(\\d+)', extract: '$1' }\n  policy: { numerical: { order: asc } }";
    expect(tagOf(fluxPolicy(spec), c)).toBe(c.chosen);
  });

  it("numerical asc and desc", () => {
    const asc = PEER_TAG_CASES.fluxNumericalAsc;
    const desc = PEER_TAG_CASES.fluxNumericalDesc;
    expect(tagOf(fluxPolicy("  policy: { numerical: { order: asc } }"), asc)).toBe(asc.chosen);
    expect(tagOf(fluxPolicy("  policy: { numerical: { order: desc } }"), desc)).toBe(desc.chosen);
  });

  it("alphabetical desc", () => {
    const c = PEER_TAG_CASES.fluxAlphabeticalDesc;
    expect(tagOf(fluxPolicy("  policy: { alphabetical: { order: desc } }"), c)).toBe(c.chosen);
  });
});

describe("Argo CD Image Updater images, imported, choose what Argo CD chooses", () => {
  it("semver constraints in imageName: 1.2.x, 1.x and 2.x-0 (update-strategies.md)", () => {
    const patch = PEER_TAG_CASES.argoPatchBranch;
    const major = PEER_TAG_CASES.argoMajorBranch;
    const pre = PEER_TAG_CASES.argoPrereleases;
    expect(tagOf(argoImage("some/image:1.2.x", "{}"), patch)).toBe(patch.chosen);
    expect(tagOf(argoImage("some/image:1.x", "{}"), major)).toBe(major.chosen);
    expect(tagOf(argoImage("some/image:2.x-0", '{ updateStrategy: "semver" }'), pre)).toBe(pre.chosen);
  });

  it("alphabetical with regexp: allow-tags (update-strategies.md, calver)", () => {
    const c = PEER_TAG_CASES.argoCalver;
    const settings = '{ updateStrategy: "alphabetical", allowTags: "regexp:^[0-9]{4}-[0-9]{2}-[0-9]{2}$" }';
    expect(tagOf(argoImage("some/image", settings), c)).toBe(c.chosen);
  });

  it("the deprecated names latest and name read as newest-build and alphabetical", () => {
    const c = PEER_TAG_CASES.argoCalver;
    const settings = '{ updateStrategy: "name", allowTags: "regexp:^[0-9]{4}-[0-9]{2}-[0-9]{2}$" }';
    expect(tagOf(argoImage("some/image", settings), c)).toBe(c.chosen);
  });

  it("newest-build over tags of one build, with and without allow-tags (update-strategies.md)", () => {
    const built = new Date("2024-06-01T10:00:00Z");
    const all = PEER_TAG_CASES.argoSameBuild;
    const sha = PEER_TAG_CASES.argoSameBuildShaOnly;
    const candidates = all.tags.map((tag) => ({ tag, created: built }));
    const pick = (yaml: string) => {
      const selection = chosenByImport(yaml, candidates);
      return selection.kind === "selected" ? selection.tag : undefined;
    };
    expect(pick(argoImage("some/image", '{ updateStrategy: "latest" }'))).toBe(all.chosen);
    expect(
      pick(argoImage("some/image", '{ updateStrategy: "newest-build", allowTags: "regexp:^[0-9a-f]{7}$" }')),
    ).toBe(sha.chosen);
    expect(
      pick(argoImage("some/image", '{ updateStrategy: "newest-build", ignoreTags: ["latest", "dev"] }')),
    ).toBe("f33bacd");
  });

  it("digest follows the tag named in imageName to its new digest (update-strategies.md)", () => {
    const running = `sha256:${"a".repeat(64)}`;
    const pushed = `sha256:${"b".repeat(64)}`;
    const selection = chosenByImport(
      argoImage("some/image:latest", '{ updateStrategy: "digest" }'),
      [
        { tag: "latest", digest: pushed },
        { tag: "1.0.0", digest: running },
      ],
      "latest",
      running,
    );
    expect(selection).toMatchObject({ kind: "selected", tag: "latest", digest: pushed });
  });

  it("a regexp Ferry cannot compile chooses nothing, as Argo CD matches no tag with it", () => {
    const c = PEER_TAG_CASES.argoPatchBranch;
    expect(tagOf(argoImage("some/image", '{ allowTags: "regexp:^(?!2\\\\.).*$" }'), c)).toBeUndefined();
  });
});
