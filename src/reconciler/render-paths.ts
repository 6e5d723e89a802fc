/**
 * An environment's `paths` (the files and folders Ferry edits) → what the reconciler would render
 * for them, with the reconciler's own renderer (render-folder.ts: its pins, input checks, limits and
 * network confinement): a folder is rendered as it is; a file in a folder with a kustomization or
 * a `Chart.yaml` renders that folder (a values file beside a chart is passed to `helm template`);
 * any other file is read as manifests. A file that holds no Kubernetes object (a values file with
 * no chart beside it) is not rendered, and the result says so. An Argo CD Application among the
 * rendered objects is replaced by what it renders, with the overrides argo-overrides.ts applies
 * (the others are listed as not applied). docs/diff.md "ferry diff" and "Argo CD Applications".
 */
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { applyKustomizeImages, argoApplicationSpec, argoRenderPlan } from "../core/diff/argo-overrides.js";
import { isUserError } from "../core/errors.js";
import type { KubeObject } from "../core/kube-object.js";
import { KUSTOMIZATION_FILES, renderPath, resolveInside, type RenderOptions } from "./render-folder.js";

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

export interface RenderedPaths {
  objects: KubeObject[];
  /** One line per path that was not rendered, and why. */
  notRendered: string[];
}

interface Target {
  /** Repo-relative folder or file to render. */
  relative: string;
  helmValues: string[];
  /** The path as written in the config, for messages. */
  named: string;
  /** A lone file: one that holds no object is noted, not an error. */
  lone: boolean;
}

async function targetOf(root: string, named: string): Promise<Target | undefined> {
  let real: string;
  try {
    real = await resolveInside(root, named);
  } catch (error) {
    if (isUserError(error) && error.code === "path-not-found") return undefined;
    throw error;
  }
  const realRoot = await resolveInside(root, ".");
  const relative = path.relative(realRoot, real) || ".";
  if ((await stat(real)).isDirectory()) return { relative, helmValues: [], named, lone: false };
  const folder = path.dirname(relative);
  const siblings = await readdir(path.join(realRoot, folder));
  if (KUSTOMIZATION_FILES.some((name) => siblings.includes(name)))
    return { relative: folder, helmValues: [], named, lone: false };
  if (siblings.includes("Chart.yaml")) {
    const values = path.basename(relative) === "values.yaml" ? [] : [relative];
    return { relative: folder, helmValues: values, named, lone: false };
  }
  return { relative, helmValues: [], named, lone: true };
}

/** Renders every path of an environment once (two paths in one kustomization render it once). */
export async function renderPaths(
  root: string,
  paths: readonly string[],
  options: RenderOptions = {},
): Promise<RenderedPaths> {
  const targets = new Map<string, Target>();
  const notRendered: string[] = [];
  for (const named of paths) {
    const target = await targetOf(root, named);
    if (!target) {
      notRendered.push(`${named}: does not exist at this revision`);
      continue;
    }
    if (target.lone && !MANIFEST_FILE.test(target.relative)) {
      notRendered.push(`${named}: not a manifest, and no kustomization or chart beside it`);
      continue;
    }
    const earlier = targets.get(target.relative);
    if (earlier)
      earlier.helmValues.push(...target.helmValues.filter((file) => !earlier.helmValues.includes(file)));
    else targets.set(target.relative, target);
  }
  const objects: KubeObject[] = [];
  for (const target of targets.values()) {
    try {
      const rendered = await renderPath(root, target.relative, {
        ...options,
        ...(target.helmValues.length > 0
          ? { helmValues: [...(options.helmValues ?? []), ...target.helmValues] }
          : {}),
      });
      for (const { object } of rendered) {
        if (argoApplicationSpec(object))
          objects.push(...(await renderApplication(root, object, options, notRendered)));
        else objects.push(object);
      }
    } catch (error) {
      if (target.lone && isUserError(error) && error.code === "invalid-manifest") {
        notRendered.push(`${target.named}: not a manifest, and no kustomization or chart beside it`);
        continue;
      }
      throw error;
    }
  }
  return { objects, notRendered };
}

/** What an Argo CD Application renders from this repository, its overrides applied; it replaces the Application. */
async function renderApplication(
  root: string,
  application: KubeObject,
  options: RenderOptions,
  notRendered: string[],
): Promise<KubeObject[]> {
  const plan = argoRenderPlan(application);
  notRendered.push(...plan.notApplied);
  const objects: KubeObject[] = [];
  for (const source of plan.sources) {
    const target = await targetOf(root, source.path);
    if (!target || target.lone) {
      notRendered.push(
        `${application.kind} ${application.metadata.name}: path ${source.path} is not a folder of this repository; not rendered`,
      );
      continue;
    }
    const scratch = source.helmValues ? await mkdtemp(path.join(tmpdir(), "ferry-argo-values-")) : undefined;
    try {
      const generated = scratch ? path.join(scratch, "values.yaml") : undefined;
      if (generated) await writeFile(generated, stringify(source.helmValues));
      const rendered = await renderPath(root, target.relative, {
        ...options,
        helmValues: [...(options.helmValues ?? []), ...source.helmValueFiles],
        ...(generated ? { generatedHelmValues: [generated] } : {}),
        ...(source.namespace ? { helmNamespace: source.namespace } : {}),
      });
      const inner = rendered.map(({ object }) => object);
      if (inner.some((object) => argoApplicationSpec(object)))
        notRendered.push(
          `${application.kind} ${application.metadata.name}: the Applications it renders are diffed as objects, not expanded`,
        );
      objects.push(...applyKustomizeImages(inner, source.kustomizeImages));
    } finally {
      if (scratch) await rm(scratch, { recursive: true, force: true });
    }
  }
  return objects;
}
