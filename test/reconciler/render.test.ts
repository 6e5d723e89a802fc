import { cpSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { renderPath } from "../../src/reconciler/render-folder.js";
import { configMapYaml, deploymentYaml, TempDirs } from "../support/reconciler-harness.js";

const temp = new TempDirs();
afterEach(() => temp.cleanup());

const CORPUS = fileURLToPath(new URL("../fixtures/corpus/", import.meta.url));

function tree(files: Record<string, string>): string {
  const root = temp.make("ferry-render-");
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), content);
  }
  return root;
}

const names = (rendered: Awaited<ReturnType<typeof renderPath>>) =>
  rendered.map(({ object }) => `${object.kind}/${object.metadata.name}`);

describe("renderPath", () => {
  it("reads plain manifests recursively in sorted order, ignoring other files and hidden folders", async () => {
    const root = tree({
      "app/b.yaml": configMapYaml("b"),
      "app/a.yml": configMapYaml("a"),
      "app/nested/c.json": JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }),
      "app/README.md": "not yaml",
      "app/.hidden/d.yaml": configMapYaml("d"),
    });
    expect(names(await renderPath(root, "app"))).toEqual(["ConfigMap/a", "ConfigMap/b", "ConfigMap/c"]);
  });

  it("builds a folder with a kustomization.yaml through kubectl kustomize", async () => {
    const root = tree({
      "base/web.yaml": deploymentYaml("web"),
      "base/kustomization.yaml": "resources: [web.yaml]\n",
      "overlays/staging/kustomization.yaml":
        "resources: [../../base]\nnamePrefix: staging-\nimages:\n  - name: ghcr.io/acme/shop\n    newTag: 1.9.0\n",
    });
    const rendered = await renderPath(root, "overlays/staging");
    expect(names(rendered)).toEqual(["Deployment/staging-web"]);
    const containers = (
      rendered[0]!.object.spec as { template: { spec: { containers: { image: string }[] } } }
    ).template.spec.containers;
    expect(containers[0]!.image).toBe("ghcr.io/acme/shop:1.9.0");
  });

  it("reports a failing kustomize build as a render error", async () => {
    const root = tree({ "app/kustomization.yaml": "resources: [missing.yaml]\n" });
    await expect(renderPath(root, "app")).rejects.toThrow(/kustomize build failed/);
  });

  it("refuses a path that leaves the repo, directly or through a symlink", async () => {
    const outside = tree({ "secret.yaml": configMapYaml("outside") });
    const root = tree({ "app/a.yaml": configMapYaml("a") });
    symlinkSync(outside, path.join(root, "escape"));
    await expect(renderPath(root, "../")).rejects.toThrow(/leaves the config repo/);
    await expect(renderPath(root, "escape")).rejects.toThrow(/leaves the config repo/);
  });

  it("skips symlinked files inside a plain folder", async () => {
    const outside = tree({ "secret.yaml": configMapYaml("outside") });
    const root = tree({ "app/a.yaml": configMapYaml("a") });
    symlinkSync(path.join(outside, "secret.yaml"), path.join(root, "app", "link.yaml"));
    expect(names(await renderPath(root, "app"))).toEqual(["ConfigMap/a"]);
  });

  it("refuses manifests over the size limit", async () => {
    const root = tree({ "app/big.yaml": configMapYaml("big", { blob: "x".repeat(5000) }) });
    await expect(renderPath(root, "app", { limits: { maxBytes: 4096 } })).rejects.toThrow(
      /size limit|exceed/,
    );
  });

  it("fails clearly for a path that does not exist", async () => {
    await expect(renderPath(tree({}), "nowhere")).rejects.toThrow(/does not exist/);
  });

  it("renders the Kubernetes guestbook example from the corpus", async () => {
    const root = temp.make();
    cpSync(path.join(CORPUS, "kubernetes__examples/web/guestbook/all-in-one"), path.join(root, "guestbook"), {
      recursive: true,
    });
    const rendered = await renderPath(root, "guestbook");
    expect(rendered.length).toBeGreaterThan(0);
    expect(rendered.every(({ object }) => object.apiVersion && object.kind && object.metadata.name)).toBe(
      true,
    );
  });

  it("renders podinfo's deploy bases from the corpus", async () => {
    const root = temp.make();
    cpSync(path.join(CORPUS, "stefanprodan__podinfo/deploy"), path.join(root, "deploy"), { recursive: true });
    const kinds = names(await renderPath(root, "deploy")).map((name) => name.split("/")[0]);
    expect(kinds).toEqual(expect.arrayContaining(["Deployment", "StatefulSet", "CronJob"]));
  });
});
