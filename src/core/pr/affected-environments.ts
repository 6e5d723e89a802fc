/**
 * Which environments a pull request touches (docs/diff-check.md "Which environments"): an
 * environment is affected when a changed file is one of its paths, lies under one, or lies under a
 * folder or file its kustomizations load (`resources: [../../base]`, patches, generator inputs…),
 * followed from kustomization to kustomization. A PR whose file list GitHub cut (3,000 files) may
 * touch anything: every environment is affected. Pure: the kustomization texts are handed in.
 */
import { parseDocumentUnique } from "../yaml/unique-keys.js";
import { KUSTOMIZATION_FILE_NAMES, kustomizationReferences } from "../kustomize/kustomization-references.js";

/** Kustomizations followed per environment at most: a reference loop or a huge graph stops here. */
export const MAX_FOLLOWED_KUSTOMIZATIONS = 1_000;

/** `a/b/../c/` → `a/c`; undefined when it leaves the repository. */
export function normalizeRepoPath(path: string): string | undefined {
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (segments.length === 0) return undefined;
      segments.pop();
    } else segments.push(segment);
  }
  return segments.join("/");
}

function kustomizationIn(folder: string, kustomizations: ReadonlyMap<string, string>): string | undefined {
  for (const name of KUSTOMIZATION_FILE_NAMES) {
    const text = kustomizations.get(folder === "" ? name : `${folder}/${name}`);
    if (text !== undefined) return text;
  }
  return undefined;
}

function localReferences(text: string): string[] {
  try {
    const document = parseDocumentUnique(text, { prettyErrors: false, merge: true });
    if (document.errors.length > 0) return [];
    return kustomizationReferences(document.toJS({ maxAliasCount: 100 }))
      .filter((reference) => !reference.remote)
      .map((reference) => reference.value.trim());
  } catch {
    return []; // an unreadable kustomization is the render's to report
  }
}

/**
 * Every repo path an environment's render reads, as far as its kustomizations say: its own paths,
 * then each local reference of each kustomization met, relative to that kustomization's folder.
 * `kustomizations` maps a kustomization file's repo path to its text (those not given are not
 * followed). References leaving the repository are dropped (the render refuses them).
 */
export function environmentInputs(
  paths: readonly string[],
  kustomizations: ReadonlyMap<string, string>,
): string[] {
  const inputs = new Set<string>();
  const queue: string[] = [];
  for (const path of paths) {
    const clean = normalizeRepoPath(path);
    if (clean !== undefined && !inputs.has(clean)) {
      inputs.add(clean);
      queue.push(clean);
    }
  }
  let followed = 0;
  while (queue.length > 0 && followed < MAX_FOLLOWED_KUSTOMIZATIONS) {
    const folder = queue.shift()!;
    const text = kustomizationIn(folder, kustomizations);
    if (text === undefined) continue;
    followed += 1;
    for (const reference of localReferences(text)) {
      const target = normalizeRepoPath(folder === "" ? reference : `${folder}/${reference}`);
      if (target === undefined || inputs.has(target)) continue;
      inputs.add(target);
      queue.push(target);
    }
  }
  return [...inputs].sort();
}

const covers = (input: string, file: string): boolean =>
  input === "" || file === input || file.startsWith(`${input}/`);

export interface AffectedInput {
  /** The config's environments, in the config's order. */
  environments: Readonly<Record<string, { paths: readonly string[] }>>;
  /** The PR's changed files (renamed files by both names). */
  changedFiles: readonly string[];
  /** GitHub cut the list (3,000 files): the PR may change any file. */
  listCut?: boolean;
  /** Kustomization texts by repo path (base's and head's), to follow references; none: paths only. */
  kustomizations?: ReadonlyMap<string, string>;
}

/** The names of the environments the PR touches, in the config's order. */
export function affectedEnvironments(input: AffectedInput): string[] {
  const names = Object.keys(input.environments);
  if (input.listCut) return names;
  const kustomizations = input.kustomizations ?? new Map<string, string>();
  return names.filter((name) => {
    const inputs = environmentInputs(input.environments[name]!.paths, kustomizations);
    return input.changedFiles.some((file) => inputs.some((path) => covers(path, file)));
  });
}
