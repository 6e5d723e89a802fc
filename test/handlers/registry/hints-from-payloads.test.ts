import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { hintsFromGitHubPackageEvent } from "../../../src/handlers/registry/hints-from-github.js";
import {
  hintsFromDistribution,
  hintsFromDockerHub,
  hintsFromGeneric,
  hintsFromHarbor,
  hintsFromQuay,
} from "../../../src/handlers/registry/hints-from-payloads.js";

const examples = createRequire(import.meta.url)("@octokit/webhooks-examples") as {
  name: string;
  examples: unknown[];
}[];

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../fixtures/registry-webhooks/${name}`, import.meta.url), "utf8"));

describe("hints from CNCF distribution envelopes", () => {
  it("keeps the manifest push of the documented envelope and drops its two layer pushes", () => {
    expect(hintsFromDistribution(fixture("distribution-push-envelope.json"))).toEqual([
      {
        registry: "example.com",
        repository: "library/test",
        digest: "sha256:fea8895f450959fa676bcc1df0611ea93823a735a01205fd8622846041d0c7cf",
        source: "distribution",
      },
    ]);
  });

  it("reads the tag and digest of a push captured from distribution 2.8", () => {
    expect(hintsFromDistribution(fixture("distribution-2.8-push-tagged.json"))).toEqual([
      {
        registry: "127.0.0.1:40479",
        repository: "acme/shop",
        tag: "1.0.0",
        digest: "sha256:142d93ddf36d6e7d037f837886fd3d610860484af0bf1695f84edf0c1ccc79fc",
        source: "distribution",
      },
    ]);
  });

  it("ignores the blob push events distribution sends with application/octet-stream", () => {
    expect(hintsFromDistribution(fixture("distribution-2.8-push-blob.json"))).toEqual([]);
  });

  it("ignores pull events", () => {
    expect(hintsFromDistribution(fixture("distribution-pull.json"))).toEqual([]);
  });

  it("splits a multi-event envelope into one hint per manifest push, taking the tag", () => {
    const event = (repository: string, tag: string) => ({
      action: "push",
      target: {
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        repository,
        tag,
        url: `http://127.0.0.1:5000/v2/${repository}/manifests/${tag}`,
      },
      request: { host: "127.0.0.1:5000" },
    });
    const hints = hintsFromDistribution({
      events: [
        event("acme/shop", "1.8.0"),
        { action: "delete", target: { repository: "acme/shop" } },
        event("acme/api", "2.0.0"),
      ],
    });
    expect(hints).toEqual([
      { registry: "127.0.0.1:5000", repository: "acme/shop", tag: "1.8.0", source: "distribution" },
      { registry: "127.0.0.1:5000", repository: "acme/api", tag: "2.0.0", source: "distribution" },
    ]);
  });

  it("drops a tag that is not a valid OCI tag instead of passing it on", () => {
    const hints = hintsFromDistribution({
      events: [
        {
          action: "push",
          target: {
            repository: "acme/shop",
            tag: "v1\n---\nkind: ClusterRoleBinding",
            url: "http://r.example/v2/acme/shop/manifests/x",
          },
        },
      ],
    });
    expect(hints).toEqual([{ registry: "r.example", repository: "acme/shop", source: "distribution" }]);
  });

  it("returns nothing for shapes that are not an envelope", () => {
    for (const payload of [null, [], "push", { events: "x" }, { events: [null, 1, { action: "push" }] }]) {
      expect(hintsFromDistribution(payload)).toEqual([]);
    }
  });
});

describe("hints from Harbor", () => {
  it("reads a PUSH_ARTIFACT by digest, whose tag field holds the digest", () => {
    expect(hintsFromHarbor(fixture("harbor-push-artifact.json"))).toEqual([
      {
        registry: "localhost",
        repository: "harbor/alpine",
        digest: "sha256:954b378c375d852eb3c63ab88978f640b4348b01c1b3456a024a81536dafbbf4",
        source: "harbor",
      },
    ]);
  });

  it("reads the Harbor 1.x pushImage format", () => {
    expect(hintsFromHarbor(fixture("harbor-push-image-v1.json"))).toEqual([
      {
        registry: "harbor.example.com",
        repository: "public/nginx",
        tag: "v1.10.0",
        digest: "sha256:89a42c3ba15f09a3fbe39856bddacdf9e94cd03df7403cad4fc1051d9f268fc9",
        source: "harbor",
      },
    ]);
  });

  it("reads the CloudEvents format of an artifact push", () => {
    const cloudEvent = {
      specversion: "1.0",
      type: "harbor.artifact.pushed",
      data: (fixture("harbor-push-image-v1.json") as { event_data: unknown }).event_data,
    };
    expect(hintsFromHarbor(cloudEvent)).toHaveLength(1);
  });

  it("ignores pulls, deletes and scans", () => {
    expect(hintsFromHarbor(fixture("harbor-pull-artifact.json"))).toEqual([]);
    expect(hintsFromHarbor(fixture("harbor-delete-artifact.json"))).toEqual([]);
    expect(hintsFromHarbor({ type: "SCANNING_COMPLETED", event_data: { resources: [] } })).toEqual([]);
  });
});

describe("hints from Docker Hub", () => {
  it("reads repo_name and push_data.tag, and never the callback_url", () => {
    expect(hintsFromDockerHub(fixture("dockerhub-push.json"))).toEqual([
      { registry: "docker.io", repository: "svendowideit/testhook", tag: "latest", source: "dockerhub" },
    ]);
  });

  it("puts official images under library/", () => {
    expect(hintsFromDockerHub({ push_data: { tag: "1.27" }, repository: { repo_name: "nginx" } })).toEqual([
      { registry: "docker.io", repository: "library/nginx", tag: "1.27", source: "dockerhub" },
    ]);
  });
});

describe("hints from Quay", () => {
  it("reads docker_url and the list of updated tags", () => {
    expect(hintsFromQuay(fixture("quay-repository-push.json"))).toEqual([
      { registry: "quay.io", repository: "dgangaia/test", tag: "latest", source: "quay" },
    ]);
  });

  it("reads the older map form of updated_tags", () => {
    expect(hintsFromQuay(fixture("quay-repository-push-legacy.json"))).toEqual([
      { registry: "quay.io", repository: "devtable/ubuntu", tag: "latest", source: "quay" },
    ]);
  });

  it("ignores other Quay notifications such as build events", () => {
    expect(
      hintsFromQuay({ build_id: "296ec063", docker_url: "quay.io/dgangaia/test", docker_tags: ["master"] }),
    ).toEqual([]);
  });
});

describe("hints from the generic format", () => {
  it("splits the registry off a full repository name", () => {
    expect(hintsFromGeneric({ repository: "ghcr.io/acme/shop", tag: "1.8.0" })).toEqual([
      { registry: "ghcr.io", repository: "acme/shop", tag: "1.8.0", source: "generic" },
    ]);
  });

  it("rejects invalid fields with a message rather than ignoring them", () => {
    for (const payload of [
      {},
      { repository: "Acme/Shop" },
      { repository: "acme/shop", tag: "-bad" },
      { repository: "acme/shop", digest: "md5:abc" },
      { repository: "acme/shop", tag: 1 },
    ]) {
      expect(() => hintsFromGeneric(payload)).toThrow();
    }
  });
});

describe("hints from GitHub package events (GHCR)", () => {
  it("reads a published container registry_package event", () => {
    expect(
      hintsFromGitHubPackageEvent("registry_package", fixture("github-registry-package-published.json")),
    ).toEqual([
      {
        registry: "ghcr.io",
        repository: "acme/shop",
        tag: "1.8.0",
        digest: "sha256:6f1d5c9a33e2b3ef8a8d1e3a0fd4b5f1bbf4d0d8f0c2d4e6a8b0c2d4e6f8a0b2",
        source: "github",
      },
    ]);
  });

  it("reads the container example of @octokit/webhooks-examples and skips the npm ones", () => {
    const packageExamples = examples.find((entry) => entry.name === "package")!.examples;
    const hints = packageExamples.flatMap((payload) => hintsFromGitHubPackageEvent("package", payload));
    expect(hints).toEqual([
      {
        registry: "ghcr.io",
        repository: "codertocat/hello-world",
        digest: "sha256:3da1996a8115d7616457760d9920b815241d0a03b34cf5f04e9a0e9d8de37498",
        source: "github",
      },
    ]);
  });

  it("ignores actions other than published and updated", () => {
    const payload = { ...(fixture("github-registry-package-published.json") as object), action: "deleted" };
    expect(hintsFromGitHubPackageEvent("registry_package", payload)).toEqual([]);
  });
});
