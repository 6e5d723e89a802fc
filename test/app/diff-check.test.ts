/**
 * The ferry/diff use case over fakes: a fork's head is never rendered (a neutral check says why),
 * a PR touching no environment gets no check, and a render is reused by what was rendered.
 */
import { describe, expect, it } from "vitest";
import { silentLogger, type AppDeps } from "../../src/app/app-deps.js";
import { checkDiff, type DiffGitHub } from "../../src/app/diff-check.js";
import type { CheckRunResult, TreeEntry } from "../../src/app/github-port.js";
import { KeyedMutex } from "../../src/app/keyed-mutex.js";
import type { SnapshotRenderer } from "../../src/app/ports.js";
import { RenderCache } from "../../src/app/render-cache.js";
import type { KubeObject } from "../../src/core/kube-object.js";

const CONFIG =
  "images:\n  shop:\n    repository: ghcr.io/acme/shop\nenvironments:\n  staging:\n    paths: [overlays/staging]\n";

function world(commits: Record<string, Record<string, string>>) {
  const runs: { id: number; name: string; sha: string; result?: CheckRunResult }[] = [];
  const renders: string[][] = [];
  const blobs = new Map<string, string>();
  const listed: string[] = [];
  const github: DiffGitHub = {
    owner: "acme",
    repo: "config",
    async readFile(ref, path) {
      return commits[ref]?.[path];
    },
    async listTree(sha): Promise<TreeEntry[]> {
      listed.push(sha);
      const files = Object.entries(commits[sha] ?? {});
      // As GitHub's recursive listing: every folder too, as a tree entry.
      const folders = new Set(
        files.flatMap(([path]) =>
          path
            .split("/")
            .slice(0, -1)
            .map((_, index, parts) => parts.slice(0, index + 1).join("/")),
        ),
      );
      return [
        ...[...folders].map((path): TreeEntry => ({ path, type: "tree", sha: `tree:${path}` })),
        ...files.map(([path, text]): TreeEntry => {
          const blob = `${path}:${text}`;
          blobs.set(blob, text);
          return { path, type: "blob", sha: blob, size: text.length };
        }),
      ];
    },
    async readBlob(sha) {
      return blobs.get(sha)!;
    },
    async checksState() {
      return "none";
    },
    async createCheckRun() {},
    async startCheckRun(name, sha) {
      runs.push({ id: runs.length + 1, name, sha });
      return runs.length;
    },
    async completeCheckRun(id, result) {
      runs[id - 1]!.result = result;
    },
  };
  const renderer: SnapshotRenderer = {
    async render(files) {
      renders.push([...files.keys()]);
      const text = [...files].find(([path]) => path.endsWith("/cm.yaml"))?.[1] ?? "";
      const object: KubeObject = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "cm" },
        data: { value: text },
      };
      return { objects: [object], notRendered: [] };
    },
  };
  const deps: AppDeps<DiffGitHub> = {
    github,
    registryFor: () => {
      throw new Error("no registry here");
    },
    now: () => new Date(0),
    log: silentLogger,
    webUrl: "https://github.com",
    locks: new KeyedMutex(),
    sealKey: "seal",
    diff: { renderer, cache: new RenderCache() },
  };
  return { deps, runs, renders, listed };
}

const base = { ".github/ferry.yml": CONFIG, "overlays/staging/cm.yaml": "a" };
const head = { ".github/ferry.yml": CONFIG, "overlays/staging/cm.yaml": "b" };

describe("checkDiff", () => {
  it("posts a neutral check on a fork's PR and renders nothing, nor reads its head", async () => {
    const { deps, runs, renders, listed } = world({ base, head });
    const outcome = await checkDiff(deps, {
      baseSha: "base",
      headSha: "head",
      changedFiles: ["overlays/staging/cm.yaml"],
      fork: true,
    });
    expect(outcome).toMatchObject({ conclusion: "neutral" });
    expect(runs).toHaveLength(1);
    expect(runs[0]!.result!.title).toMatch(/fork/);
    expect(renders).toEqual([]);
    expect(listed).toEqual(["base"]);
  });

  it("posts nothing for a PR that touches no environment", async () => {
    const { deps, runs } = world({ base, head: { ...base, "README.md": "hi" } });
    expect(await checkDiff(deps, { baseSha: "base", headSha: "head", changedFiles: ["README.md"] })).toBe(
      "skipped",
    );
    expect(runs).toEqual([]);
  });

  it("renders each side once and reuses a render of the same files", async () => {
    const { deps, runs, renders } = world({ base, head, again: head });
    const input = { baseSha: "base", changedFiles: ["overlays/staging/cm.yaml"] };
    expect(await checkDiff(deps, { ...input, headSha: "head" })).toMatchObject({ conclusion: "success" });
    expect(renders).toHaveLength(2);
    // Another commit with the same files: both sides come from the cache.
    await checkDiff(deps, { ...input, headSha: "again" });
    expect(renders).toHaveLength(2);
    expect(runs.map((run) => run.result?.conclusion)).toEqual(["success", "success"]);
    expect(runs[1]!.result!.summary).toContain("| staging | 0 | 1 | 0 | 0 | 0 |");
    // .github/ is never written into the snapshot.
    expect(renders.flat().some((path) => path.startsWith(".github/"))).toBe(false);
  });

  it("diffs a generated environment (environmentSets) like a written one, under its generated name", async () => {
    const generated =
      'images:\n  shop:\n    repository: ghcr.io/acme/shop\nenvironmentSets:\n  - over: apps/*/overlays/staging\n    name: "{1}-staging"\n';
    const { deps, runs, renders } = world({
      base: { ".github/ferry.yml": generated, "apps/shop/overlays/staging/cm.yaml": "a" },
      head: { ".github/ferry.yml": generated, "apps/shop/overlays/staging/cm.yaml": "b" },
    });
    const outcome = await checkDiff(deps, {
      baseSha: "base",
      headSha: "head",
      changedFiles: ["apps/shop/overlays/staging/cm.yaml"],
    });
    expect(outcome).toMatchObject({ conclusion: "success" });
    expect(renders).toHaveLength(2);
    expect(runs[0]!.result!.summary).toContain("| shop-staging | 0 | 1 | 0 | 0 | 0 |");
  });
});
