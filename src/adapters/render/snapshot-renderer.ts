/**
 * The `ferry/diff` check's renderer (docs/diff-check.md "Rendering safely"): a snapshot's files are
 * written into a fresh private folder (mode 0700, removed after), and each environment path is
 * rendered there as `ferry diff` renders it (render-paths.ts: a folder, a kustomization's folder, a
 * chart with a values file, an Argo CD Application's sources with its overrides), by the
 * reconciler's own render step: the same input checks (no remote base unless
 * allowed, no path out of the folder, alias and size caps), the same bounded child process (kill
 * timeout, output cap, memory limit) and the same filtering proxy; the renderer inherits only
 * PATH, HOME, TMPDIR, LANG and the CA variables (render-environment.ts), never the App's key,
 * webhook secret or registry passwords.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { SnapshotRenderer } from "../../app/ports.js";
import { UserError } from "../../core/errors.js";
import { normalizeRepoPath } from "../../core/pr/affected-environments.js";
import type { RenderOptions } from "../../reconciler/render-folder.js";
import { renderPaths, type RenderedPaths } from "../../reconciler/render-paths.js";

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

export function snapshotRenderer(options: SnapshotRendererOptions = {}): SnapshotRenderer {
  const renderOptions = { ...DIFF_RENDER_OPTIONS, ...options.render };
  return {
    async render(files, paths): Promise<RenderedPaths> {
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
        return await renderPaths(root, paths, renderOptions);
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    },
  };
}
