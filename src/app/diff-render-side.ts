/**
 * One side (base or head) of one environment for the `ferry/diff` check: the snapshot's files
 * rendered by the SnapshotRenderer, from the render cache when the same files and paths were
 * rendered before. Before any render, what the render would refuse to follow is named plainly: a
 * symlink among the environment's inputs, a Helm template calling `lookup` (never run: the App
 * has no cluster). A failure comes back as a reason, never thrown: `limit` for a limit or a
 * refusal (the check is neutral), `broken` when the files do not render (docs/diff-check.md).
 */
import { isUserError } from "../core/errors.js";
import type { KubeObject } from "../core/kube-object.js";
import { environmentInputs } from "../core/pr/affected-environments.js";
import type { SecretRedactor } from "../core/redact.js";
import type { Snapshot } from "./diff-snapshot.js";
import { errorText } from "./error-text.js";
import type { SnapshotRenderer } from "./ports.js";
import type { RenderCache } from "./render-cache.js";

/** The objects rendered and what was not (a path, an Argo CD override), or why nothing was. */
export type SideResult =
  { objects: KubeObject[]; notRendered: string[] } | { failed: "limit" | "broken"; reason: string };

/** Render codes that mean a limit or a refusal of the render's confinement, not a broken config. */
const LIMIT_CODES = new Set([
  "diff-limit",
  "render-too-large",
  "render-timeout",
  "render-out-of-memory",
  "render-too-many-documents",
  "render-input-too-many-documents",
  "render-input-aliases",
  "render-input-too-many-files",
  "render-input-too-large",
  "remote-base-refused",
  "path-outside-repo",
  "renderer-missing",
  "unsafe-path",
]);

/** A Helm template that calls `lookup` (linear: no nested quantifier). */
const HELM_LOOKUP = /\blookup\s+["$(]/;

const covers = (input: string, file: string) =>
  input === "" || file === input || file.startsWith(`${input}/`);

/** What the render would not follow, as a reason; undefined when nothing. */
function refusedInput(snapshot: Snapshot, inputs: string[]): string | undefined {
  const link = snapshot.links.find((file) => inputs.some((input) => covers(input, file)));
  if (link !== undefined) return `${link} is a symlink: Ferry never follows links`;
  for (const [file, text] of snapshot.files) {
    if (!/(^|\/)templates\/.*\.(ya?ml|tpl|txt)$/.test(file)) continue;
    if (!inputs.some((input) => covers(input, file))) continue;
    if (HELM_LOOKUP.test(text))
      return `${file} calls Helm's lookup, which the diff never runs (it renders without a cluster)`;
  }
  return undefined;
}

export function kustomizationTexts(snapshot: Snapshot): Map<string, string> {
  const found = new Map<string, string>();
  for (const [file, text] of snapshot.files)
    if (/(^|\/)(kustomization\.ya?ml|Kustomization)$/.test(file)) found.set(file, text);
  return found;
}

export async function renderSide(
  deps: { renderer: SnapshotRenderer; cache: RenderCache; secrets?: SecretRedactor | undefined },
  snapshot: () => Promise<Snapshot>,
  snapshotKey: string,
  paths: readonly string[],
): Promise<SideResult> {
  const key = `${snapshotKey}\0${paths.join("\0")}`;
  const cached = deps.cache.get(key);
  if (cached) return fromCache(cached);
  let result: SideResult;
  try {
    const files = await snapshot();
    const refused = refusedInput(files, environmentInputs(paths, kustomizationTexts(files)));
    result = refused ? { failed: "limit", reason: refused } : await deps.renderer.render(files.files, paths);
  } catch (error) {
    if (!isUserError(error)) throw error;
    const reason = errorText(error, deps.secrets);
    const limit = LIMIT_CODES.has(error.code) || /render proxy refused/.test(error.message);
    result = { failed: limit ? "limit" : "broken", reason };
  }
  deps.cache.set(
    key,
    "objects" in result
      ? { objects: result.objects, notRendered: result.notRendered }
      : { error: { code: result.failed, message: result.reason } },
  );
  return result;
}

function fromCache(cached: NonNullable<ReturnType<RenderCache["get"]>>): SideResult {
  if ("objects" in cached) return { objects: cached.objects, notRendered: cached.notRendered };
  return { failed: cached.error.code === "limit" ? "limit" : "broken", reason: cached.error.message };
}
