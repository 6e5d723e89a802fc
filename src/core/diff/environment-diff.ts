/**
 * Two renders of one environment (base and head, or live and desired) → the objects added, removed
 * and changed, each changed one with a unified diff of its normalized YAML, the images that move,
 * and the dangers. Objects are matched by group, kind, namespace and name (an apiVersion bump is a
 * change, not a delete and a create); when a side names one object twice the last one counts.
 * Bounded: an object's diff is capped (DiffLimits), and the diff search shares one budget per
 * environment. docs/diff.md. Pure.
 */
import { stringify } from "yaml";
import type { KubeObject } from "../kube-object.js";
import { groupOf, immutableFieldDangers, removalDangers } from "./dangers.js";
import { imageChanges } from "./images.js";
import { diffLines, MORE_LINES, unifiedDiff } from "./line-diff.js";
import {
  canonicalJson,
  maskSecret,
  normalizeObject,
  sealedChanged,
  secretKeyChanges,
  secretPayloadOf,
  type SecretPayload,
} from "./normalize.js";
import {
  DEFAULT_DIFF_LIMITS,
  type Danger,
  type DiffLimits,
  type EnvironmentDiff,
  type ImageChange,
  type ObjectChange,
  type ObjectKey,
} from "./types.js";

export function keyOf(object: KubeObject): ObjectKey {
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
    name: object.metadata.name,
  };
}

/** `apps/Deployment/shop/web`, `/Namespace//shop`: the identity, version left out. */
export function identityOf(key: ObjectKey): string {
  return `${groupOf(key.apiVersion)}/${key.kind}/${key.namespace ?? ""}/${key.name}`;
}

/** Where a diff header says an object lives: `apps/v1/Deployment/shop/web`. */
function pathOf(key: ObjectKey): string {
  return [key.apiVersion, key.kind, ...(key.namespace ? [key.namespace] : []), key.name].join("/");
}

function byIdentity(objects: readonly KubeObject[]): Map<string, KubeObject> {
  const map = new Map<string, KubeObject>();
  for (const object of objects) {
    const normalized = normalizeObject(object);
    map.set(identityOf(keyOf(normalized)), normalized);
  }
  return map;
}

const compareKeys = (a: ObjectKey, b: ObjectKey) => {
  const fields = (key: ObjectKey) => [groupOf(key.apiVersion), key.kind, key.namespace ?? "", key.name];
  const [x, y] = [fields(a), fields(b)];
  for (let i = 0; i < x.length; i += 1) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
  return 0;
};

/** What the two sides are called in diff headers and messages (`base`/`head`, `live`/`desired`). */
export interface DiffSides {
  labels?: { base: string; head: string };
}

export function diffEnvironment(
  base: readonly KubeObject[],
  head: readonly KubeObject[],
  limits: Partial<DiffLimits> & DiffSides = {},
): EnvironmentDiff {
  const settings = { ...DEFAULT_DIFF_LIMITS, labels: { base: "base", head: "head" }, ...limits };
  const budget = { remaining: settings.maxDiffWork };
  const before = byIdentity(base);
  const after = byIdentity(head);
  const changes: ObjectChange[] = [];
  const images: ImageChange[] = [];
  const dangers: Danger[] = [];
  let unchanged = 0;
  const identities = [...new Set([...before.keys(), ...after.keys()])];
  for (const identity of identities) {
    const old = before.get(identity);
    const now = after.get(identity);
    const key = keyOf((now ?? old)!);
    if (old && now && canonicalJson(old) === canonicalJson(now)) {
      unchanged += 1;
      continue;
    }
    const kind = !old ? "added" : !now ? "removed" : "changed";
    changes.push(objectChange(key, kind, old, now, settings, budget));
    images.push(...imageChanges(old, now, key));
    if (!now) dangers.push(...removalDangers(key));
    if (old && now) dangers.push(...immutableFieldDangers(old, now, key));
  }
  if (after.size === 0 && before.size > 0)
    dangers.unshift({
      reason: "renders-empty",
      detail: `${settings.labels.head} renders no objects at all (${settings.labels.base} had ${before.size}): applying it would prune everything`,
    });
  changes.sort((a, b) => compareKeys(a.key, b.key));
  images.sort((a, b) => compareKeys(a.object, b.object));
  return { changes, images, dangers, unchanged };
}

function objectChange(
  key: ObjectKey,
  kind: ObjectChange["kind"],
  old: KubeObject | undefined,
  now: KubeObject | undefined,
  limits: DiffLimits & Required<DiffSides>,
  budget: { remaining: number },
): ObjectChange {
  const payload: SecretPayload = secretPayloadOf((now ?? old)!);
  const sops = (old && secretPayloadOf(old) === "sops") || (now && secretPayloadOf(now) === "sops");
  if (sops) return { key, kind, note: "SOPS-encrypted: contents not shown (Ferry never decrypts anything)" };
  let secretKeys: ObjectChange["secretKeys"];
  let shownOld = old;
  let shownNew = now;
  if (payload === "secret") {
    secretKeys = secretKeyChanges(old, now);
    const changed = new Set(secretKeys.changed);
    shownOld = old && maskSecret(old, payload, changed, false);
    shownNew = now && maskSecret(now, payload, changed, true);
  } else if (payload === "sealed") {
    const changed = new Set(old && now && sealedChanged(old, now) ? ["encryptedData"] : []);
    shownOld = old && maskSecret(old, payload, changed, false);
    shownNew = now && maskSecret(now, payload, changed, true);
  }
  const linesOf = (object: KubeObject | undefined) =>
    object
      ? stringify(object, { lineWidth: 0, aliasDuplicateObjects: false }).replace(/\n$/, "").split("\n")
      : [];
  const a = linesOf(shownOld);
  const b = linesOf(shownNew);
  const change: ObjectChange = { key, kind, ...(secretKeys ? { secretKeys } : {}) };
  if (a.length > limits.maxObjectLines || b.length > limits.maxObjectLines) {
    change.note = `too large to diff (${Math.max(a.length, b.length)} lines of YAML; the limit is ${limits.maxObjectLines})`;
    return change;
  }
  const edits = diffLines(a, b, { maxEditDistance: limits.maxEditDistance, budget });
  const diffed = unifiedDiff(
    edits,
    old ? `${limits.labels.base}/${pathOf(keyOf(old))}` : "/dev/null",
    now ? `${limits.labels.head}/${pathOf(key)}` : "/dev/null",
    {
      maxLines: limits.maxDiffLines,
      maxLineChars: limits.maxLineChars,
    },
  );
  if (diffed !== "") change.unifiedDiff = diffed;
  else change.note = "changed in a way its YAML does not show";
  if (diffed.endsWith(MORE_LINES)) change.note = `diff cut at ${limits.maxDiffLines} lines`;
  return change;
}
