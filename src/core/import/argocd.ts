import { posix } from "node:path";
import type { RegistryConfig } from "../config/schema.js";
import {
  mergeSettings,
  translateArgoImage,
  type ArgoImage,
  type ArgoSettings,
  type ArgoTarget,
} from "./argocd-settings.js";
import type { DraftEnvironment, DraftImage, PeerDocument } from "./import-draft.js";
import { ferryName, lenientSemverNote } from "./peer-policy.js";
import { definedOnly, list, record, str, stringList } from "./peer-values.js";
import { compileGlob, type Glob } from "../patterns/glob.js";

/**
 * Argo CD Image Updater, both forms (docs/config.md "ferry import"): Applications annotated with
 * `argocd-image-updater.argoproj.io/image-list`, and the 1.x `ImageUpdater` resource whose
 * applicationRefs select Applications by name. Each Application is a Ferry environment.
 */

const PREFIX = "argocd-image-updater.argoproj.io/";

interface Application {
  name: string;
  path?: string;
  annotations: Record<string, string>;
}

interface WriteBack {
  method?: string;
  branch?: string;
  target?: string;
  /** gitConfig.pullRequest: the updater opens pull requests instead of pushing. */
  pullRequest?: boolean;
}

export function isArgoDocument(document: PeerDocument): boolean {
  const { apiVersion, kind } = document.value;
  return (
    (kind === "Application" && typeof apiVersion === "string" && apiVersion.startsWith("argoproj.io/")) ||
    (kind === "ImageUpdater" &&
      typeof apiVersion === "string" &&
      apiVersion.startsWith("argocd-image-updater."))
  );
}

export function readArgoCd(
  documents: PeerDocument[],
  registries: Record<string, RegistryConfig>,
  notes: string[],
): DraftEnvironment[] {
  const applications = documents.filter((d) => d.value.kind === "Application").map(readApplication);
  const environments: DraftEnvironment[] = [];
  const claimed = new Set<string>();
  for (const document of documents.filter((d) => d.value.kind === "ImageUpdater")) {
    const spec = record(document.value.spec);
    const updater = `ImageUpdater ${str(record(document.value.metadata).name) ?? "(unnamed)"}`;
    if (spec.imagesVerification !== undefined || hasVerification(spec))
      notes.push(`${updater}: imagesVerification: put the cosign public key in the policy's verify.key`);
    for (const ref of list(spec.applicationRefs).map(record)) {
      const pattern = str(ref.namePattern) ?? "*";
      if (ref.labelSelectors !== undefined)
        notes.push(`${updater}: labelSelectors have no equivalent; Applications are matched by name only`);
      let glob: Glob | undefined;
      try {
        glob = compileGlob(pattern);
      } catch (error) {
        notes.push(`${updater}: namePattern ${JSON.stringify(pattern)}: ${(error as Error).message}`);
      }
      const matched = glob ? applications.filter((app) => glob.test(app.name)) : [];
      const targets: Application[] =
        matched.length > 0 ? matched : [{ name: pattern.replace(/[*?[\]]/g, ""), annotations: {} }];
      if (matched.length === 0)
        notes.push(
          `${updater}: no Application in the input matches ${JSON.stringify(pattern)}; its environment is a guess: add the Applications to the input`,
        );
      for (const app of targets) {
        if (claimed.has(app.name)) {
          notes.push(
            `${updater}: Application ${app.name} is matched again by ${JSON.stringify(pattern)}; only its first applicationRef is read`,
          );
          continue;
        }
        claimed.add(app.name);
        if (ref.useAnnotations === true) {
          const environment = fromAnnotations(app, registries, notes);
          if (environment) environments.push(environment);
          continue;
        }
        const writeBack = mergeWriteBack(spec.writeBackConfig, ref.writeBackConfig);
        const images = list(ref.images).map((raw) => readImageConfig(record(raw), spec, ref));
        environments.push(environmentOf(app, images, writeBack, registries, notes));
      }
    }
  }
  for (const app of applications) {
    if (claimed.has(app.name) || app.annotations[`${PREFIX}image-list`] === undefined) continue;
    const environment = fromAnnotations(app, registries, notes);
    if (environment) environments.push(environment);
  }
  if (environments.some((e) => e.images.some((image) => (image.policy.strategy ?? "semver") === "semver")))
    notes.push(lenientSemverNote("Argo CD"));
  return environments;
}

function hasVerification(spec: Record<string, unknown>): boolean {
  return list(spec.applicationRefs).some((ref) => {
    const r = record(ref);
    return (
      r.imagesVerification !== undefined ||
      list(r.images).some((i) => record(i).imagesVerification !== undefined)
    );
  });
}

function readApplication(document: PeerDocument): Application {
  const metadata = record(document.value.metadata);
  const spec = record(document.value.spec);
  const sources = [record(spec.source), ...list(spec.sources).map(record)];
  const path = sources.map((source) => str(source.path)).find((p) => p !== undefined);
  const annotations = Object.fromEntries(
    Object.entries(record(metadata.annotations)).filter(
      (e): e is [string, string] => typeof e[1] === "string",
    ),
  );
  const app: Application = { name: str(metadata.name) ?? "app", annotations };
  if (path !== undefined) app.path = path;
  return app;
}

function readImageConfig(
  raw: Record<string, unknown>,
  spec: Record<string, unknown>,
  ref: Record<string, unknown>,
): ArgoImage {
  const image: ArgoImage = {
    alias: str(raw.alias) ?? "",
    imageName: str(raw.imageName) ?? "",
    settings: mergeSettings(
      settingsOf(record(spec.commonUpdateSettings)),
      settingsOf(record(ref.commonUpdateSettings)),
      settingsOf(record(raw.commonUpdateSettings)),
    ),
  };
  const targets = record(raw.manifestTargets);
  const target: ArgoTarget = {};
  if (targets.helm !== undefined) {
    const helm = record(targets.helm);
    target.helm = definedOnly({ name: str(helm.name), tag: str(helm.tag), spec: str(helm.spec) });
  }
  if (targets.kustomize !== undefined)
    target.kustomize = definedOnly({ name: str(record(targets.kustomize).name) });
  if (targets.plugin !== undefined) target.plugin = targets.plugin;
  if (Object.keys(target).length > 0) image.target = target;
  return image;
}

function settingsOf(raw: Record<string, unknown>): ArgoSettings {
  return definedOnly({
    updateStrategy: str(raw.updateStrategy),
    forceUpdate: typeof raw.forceUpdate === "boolean" ? raw.forceUpdate : undefined,
    allowTags: str(raw.allowTags),
    ignoreTags: raw.ignoreTags === undefined ? undefined : stringList(raw.ignoreTags),
    pullSecret: str(raw.pullSecret),
    platforms: raw.platforms === undefined ? undefined : stringList(raw.platforms),
  });
}

/** The legacy annotations: `image-list` with `alias=image`, then `<alias>.<setting>` over the app-wide `<setting>`. */
function fromAnnotations(
  app: Application,
  registries: Record<string, RegistryConfig>,
  notes: string[],
): DraftEnvironment | undefined {
  const a = app.annotations;
  const list = a[`${PREFIX}image-list`];
  if (list === undefined) {
    notes.push(`Application ${app.name}: no ${PREFIX}image-list annotation; left out`);
    return undefined;
  }
  const setting = (key: string) => a[`${PREFIX}${key}`]?.trim();
  const commaList = (value: string | undefined) => (value === undefined ? undefined : value.split(","));
  const appWide: ArgoSettings = definedOnly({
    updateStrategy: setting("update-strategy"),
    allowTags: setting("allow-tags"),
    ignoreTags: commaList(setting("ignore-tags")),
    pullSecret: setting("pull-secret"),
    forceUpdate: setting("force-update") === undefined ? undefined : setting("force-update") === "true",
  });
  const images: ArgoImage[] = [];
  for (const entry of list
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const equals = entry.indexOf("=");
    const alias = equals >= 0 ? entry.slice(0, equals).trim() : "";
    const imageName = equals >= 0 ? entry.slice(equals + 1).trim() : entry;
    const own: ArgoSettings =
      alias === ""
        ? {}
        : definedOnly({
            updateStrategy: setting(`${alias}.update-strategy`),
            allowTags: setting(`${alias}.allow-tags`),
            ignoreTags: commaList(setting(`${alias}.ignore-tags`)),
            pullSecret: setting(`${alias}.pull-secret`),
            platforms: commaList(setting(`${alias}.platforms`)),
            forceUpdate:
              setting(`${alias}.force-update`) === undefined
                ? undefined
                : setting(`${alias}.force-update`) === "true",
          });
    const image: ArgoImage = { alias, imageName, settings: mergeSettings(appWide, own) };
    const target: ArgoTarget = {};
    const helm = definedOnly({
      name: setting(`${alias}.helm.image-name`),
      tag: setting(`${alias}.helm.image-tag`),
      spec: setting(`${alias}.helm.image-spec`),
    });
    if (alias !== "" && Object.keys(helm).length > 0) target.helm = helm;
    const kustomize = alias === "" ? undefined : setting(`${alias}.kustomize.image-name`);
    if (kustomize !== undefined) target.kustomize = { name: kustomize };
    if (Object.keys(target).length > 0) image.target = target;
    images.push(image);
  }
  const writeBack: WriteBack = definedOnly({
    method: setting("write-back-method"),
    branch: setting("git-branch"),
    target: setting("write-back-target"),
  });
  return environmentOf(app, images, writeBack, registries, notes);
}

function mergeWriteBack(...layers: unknown[]): WriteBack {
  const merged: WriteBack = {};
  for (const raw of layers) {
    const layer = record(raw);
    const git = record(layer.gitConfig);
    Object.assign(
      merged,
      definedOnly({
        method: str(layer.method),
        branch: str(git.branch),
        target: str(git.writeBackTarget),
        pullRequest: git.pullRequest === undefined ? undefined : true,
      }),
    );
  }
  return merged;
}

function environmentOf(
  app: Application,
  argoImages: ArgoImage[],
  writeBack: WriteBack,
  registries: Record<string, RegistryConfig>,
  notes: string[],
): DraftEnvironment {
  const where = `Application ${app.name}`;
  const method = writeBack.method ?? "argocd";
  if (!method.startsWith("git"))
    notes.push(
      `${where}: write-back-method ${method} (parameter overrides in the Application) has no equivalent: Ferry edits the files under the environment's paths by pull request`,
    );
  if (writeBack.branch !== undefined)
    notes.push(
      `${where}: git-branch ${writeBack.branch} has no equivalent: Ferry proposes changes to the default branch`,
    );
  const images = argoImages
    .map((image) => translateArgoImage(image, where, registries, notes))
    .filter((image): image is DraftImage => image !== undefined);
  return {
    name: ferryName(app.name, "default"),
    paths: [environmentPath(app, writeBack.target, where, notes)],
    // The updater pushes its commits, unless it opens pull requests: then a human merges them.
    merge: writeBack.pullRequest === true ? "review" : "auto",
    images,
  };
}

/** `kustomization:<dir>` or `helmvalues:<file>`, relative to the Application's path or absolute to the repository. */
function environmentPath(
  app: Application,
  target: string | undefined,
  where: string,
  notes: string[],
): string {
  const base = app.path === undefined ? "." : posix.normalize(app.path.replace(/^\/+/, ""));
  if (app.path === undefined)
    notes.push(
      `${where}: no spec.source.path; the environment's paths are a guess (.): set them to its manifests`,
    );
  const colon = target?.indexOf(":") ?? -1;
  if (target === undefined || colon < 0) return base.replace(/\/+$/, "") || ".";
  const where2 = target.slice(colon + 1).trim();
  const joined = where2.startsWith("/")
    ? posix.normalize(where2.slice(1))
    : posix.normalize(posix.join(base, where2));
  if (joined === ".." || joined.startsWith("../")) {
    notes.push(`${where}: write-back-target ${target} leaves the repository; the Application's path is used`);
    return base;
  }
  return joined.replace(/\/+$/, "") || ".";
}
