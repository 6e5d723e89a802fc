/**
 * `ferry/window` on merge-queue group commits and PR heads (docs/config.md "Change windows and
 * freezes"), over a fake GitHub: which environments a commit touches, what the status says, and
 * that a repository whose config has no window gets no status at all.
 */
import { describe, expect, it } from "vitest";
import type { AppDeps } from "../../src/app/app-deps.js";
import { silentLogger } from "../../src/app/app-deps.js";
import { KeyedMutex } from "../../src/app/keyed-mutex.js";
import type { TreeEntry } from "../../src/app/github-port.js";
import {
  postMergeGroupWindowStatus,
  postPullWindowStatus,
  type WindowStatusWork,
} from "../../src/app/window-status.js";

const CONFIG = (prod: string) => `images:
  shop: { repository: ghcr.io/acme/shop }
environments:
  staging:
    paths: [overlays/staging]
  prod:
    paths: [overlays/prod]
${prod}`;
const FROZEN = "    freeze: [{ from: 2026-12-20, to: 2027-01-04, reason: end-of-year }]\n";
const BASE = "b".repeat(40);
const HEAD = "h".repeat(40);

function fake(config: string, trees: Record<string, TreeEntry[]>) {
  const posted: { sha: string; state: string; description: string; context: string }[] = [];
  const github: WindowStatusWork = {
    owner: "acme",
    repo: "config",
    readFile: async (ref, path) => (ref === BASE && path === ".github/ferry.yml" ? config : undefined),
    listTree: async (sha) => trees[sha] ?? [],
    readBlob: async () => "",
    postStatus: async (sha, input) => {
      posted.push({ sha, ...input });
    },
  };
  const deps = {
    github,
    now: () => new Date("2026-12-24T12:00:00Z"),
    log: silentLogger,
    locks: new KeyedMutex(),
  } as unknown as AppDeps<WindowStatusWork>;
  return { deps, posted };
}

const blob = (path: string, sha: string): TreeEntry => ({ path, type: "blob", sha });

describe("ferry/window", () => {
  it("fails a merge-group commit that changes a frozen environment's files, naming the freeze", async () => {
    const { deps, posted } = fake(CONFIG(FROZEN), {
      [BASE]: [
        blob("overlays/prod/kustomization.yaml", "1"),
        blob("overlays/staging/kustomization.yaml", "2"),
      ],
      [HEAD]: [
        blob("overlays/prod/kustomization.yaml", "3"),
        blob("overlays/staging/kustomization.yaml", "2"),
      ],
    });
    await postMergeGroupWindowStatus(deps, { headSha: HEAD, baseSha: BASE });
    expect(posted).toEqual([
      {
        sha: HEAD,
        context: "ferry/window",
        state: "failure",
        description: "prod is frozen until 2027-01-04 00:00 UTC: end-of-year",
      },
    ]);
  });

  it("passes a merge-group commit that only touches an environment without a window", async () => {
    const { deps, posted } = fake(CONFIG(FROZEN), {
      [BASE]: [
        blob("overlays/prod/kustomization.yaml", "1"),
        blob("overlays/staging/kustomization.yaml", "2"),
      ],
      [HEAD]: [
        blob("overlays/prod/kustomization.yaml", "1"),
        blob("overlays/staging/kustomization.yaml", "4"),
      ],
    });
    await postMergeGroupWindowStatus(deps, { headSha: HEAD, baseSha: BASE });
    expect(posted.map((status) => [status.state, status.description])).toEqual([
      ["success", "No change window or freeze applies"],
    ]);
  });

  it("posts nothing where the config has no window or freeze (no required status to satisfy)", async () => {
    const { deps, posted } = fake(CONFIG(""), {});
    let listed = false;
    const outcome = await postPullWindowStatus(deps, {
      headSha: HEAD,
      baseSha: BASE,
      changedFiles: async () => {
        listed = true;
        return { files: ["overlays/prod/kustomization.yaml"], cut: false };
      },
    });
    expect(outcome).toBe("skipped");
    expect(listed).toBe(false);
    expect(posted).toEqual([]);
  });

  it("fails a PR whose file list GitHub cut: it may touch the frozen environment", async () => {
    const { deps, posted } = fake(CONFIG(FROZEN), {});
    await postPullWindowStatus(deps, {
      headSha: HEAD,
      baseSha: BASE,
      changedFiles: async () => ({ files: ["README.md"], cut: true }),
    });
    expect(posted.map((status) => status.state)).toEqual(["failure"]);
  });
});
