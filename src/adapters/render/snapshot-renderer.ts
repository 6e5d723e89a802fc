/**
 * The `ferry/diff` check's renderer (docs/diff-check.md "Rendering safely"): a snapshot's files are
 * written into a fresh private folder (mode 0700, removed after), and each environment path is
 * rendered there by the reconciler's own render step: the same input checks (no remote base unless
 * allowed, no path out of the folder, alias and size caps), the same bounded child process (kill
 * timeout, output cap, memory limit) and the same filtering proxy; the renderer inherits only
 * PATH, HOME, TMPDIR, LANG and the CA variables (render-environment.ts), never the App's key,
 * webhook secret or registry passwords.
 */
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { SnapshotRenderer } from "../../app/ports.js";
import { UserError } from "../../core/errors.js";
import type { KubeObject } from "../../core/kube-object.js";
import { isKustomizationFile } from "../../core/kustomize/kustomization-references.js";
import { normalizeRepoPath } from "../../core/pr/affected-environments.js";
import { renderPath, type RenderOptions } from "../../reconciler/render.js";

export interface SnapshotRendererOptions {
  /** The render's options: limits, binaries, allowed remote bases (none by default). */
  render?: RenderOptions;
  /** Where the snapshot folders are made (default: the OS's temporary folder). */
  workDir?: string;
}

/** The render's caps for a PR's diff: smaller than the reconciler's, the App renders for everyone. */
export const DIFF_RENDER_OPTIONS: RenderOptions = {
  limits: { maxBytes: 8 * 1024 * 1024, maxDocuments: 5_000 },
  kustomizeTimeoutMs: 30_000,
  memoryLimitBytes: 384 * 1024 * 1024,
};

/** What to render for one environment path: a folder, a kustomization's folder, or a chart with a values file. */
async function targetOf(root: string, repoPath: string): Promise<{ folder: string; helmValues?: string[] }> {
  const info = await stat(path.join(root, repoPath)).catch(() => undefined);
  if (!info || info.isDirectory()) return { folder: repoPath };
  const parent = path.posix.dirname(repoPath);
  if (isKustomizationFile(repoPath)) return { folder: parent === "." ? "" : parent };
  const chart = await stat(path.join(root, parent, "Chart.yaml")).catch(() => undefined);
  if (chart?.isFile())
    return path.posix.basename(repoPath) === "values.yaml"
      ? { folder: parent }
      : { folder: parent, helmValues: [repoPath] };
  return { folder: repoPath };
}

export function snapshotRenderer(options: SnapshotRendererOptions = {}): SnapshotRenderer {
  const renderOptions = { ...DIFF_RENDER_OPTIONS, ...options.render };
  return {
    async render(files, paths): Promise<KubeObject[]> {
      const root = await mkdtemp(path.join(options.workDir ?? tmpdir(), "ferry-diff-"));
      try {
        for (const [file, text] of files) {
          const clean = normalizeRepoPath(file);
          if (clean === undefined || clean === "" || clean !== file)
            throw new UserError(
              "path-outside-repo",
              `${JSON.stringify(file)} is not a path inside the repository`,
            );
          await mkdir(path.join(root, path.posix.dirname(clean)), { recursive: true, mode: 0o700 });
          await writeFile(path.join(root, clean), text, { mode: 0o600 });
        }
        const objects: KubeObject[] = [];
        const seen = new Set<string>();
        for (const repoPath of paths) {
          const target = await targetOf(root, normalizeRepoPath(repoPath) ?? repoPath);
          const key = JSON.stringify(target);
          if (seen.has(key)) continue;
          seen.add(key);
          const rendered = await renderPath(root, target.folder === "" ? "." : target.folder, {
            ...renderOptions,
            ...(target.helmValues ? { helmValues: target.helmValues } : {}),
          });
          objects.push(...rendered.map((item) => item.object));
        }
        return objects;
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    },
  };
}
