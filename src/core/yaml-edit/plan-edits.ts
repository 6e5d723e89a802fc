import type { Scalar, YAMLMap } from "yaml";
import { UserError } from "../errors.js";
import { parseImageRef, sameImage } from "../image-ref.js";
import { splitTagDigest, targetSites, type ImageTarget, type Site } from "../targets/index.js";
import { scalarText, type ParsedYaml } from "../yaml/yaml-tree.js";

export interface ImageUpdate {
  image: string;
  tag?: string;
  digest?: string;
  pin: "tag" | "digest" | "digest-only";
}

/** A new value for one scalar, and every site (use) that asked for it. */
export interface ScalarSet {
  scalar: Scalar;
  sites: Site[];
  from: string;
  to: string;
}

/** A key to add to a map that lacks it (a Kustomization entry without `newTag`, say). */
export interface KeyInsert {
  map: YAMLMap;
  key: string;
  value: string;
  field: "tag" | "digest";
  /** Set when the map belongs to YAML embedded in a string (see `Site.embedded`). */
  embedded?: Site["embedded"];
}

export interface EditPlan {
  sets: ScalarSet[];
  inserts: KeyInsert[];
}

/**
 * Decides, for each target, which scalars get which value under the pin mode — pure data, no
 * text touched. Values that already match are left out, so that editing twice equals once.
 *
 * - `tag`: write the tag. A digest the file already pins is kept current (needs `digest`);
 *   no digest is added.
 * - `digest`: write tag and digest.
 * - `digest-only`: write the digest; `repo@digest` for whole strings.
 */
export function planEdits(parsed: ParsedYaml, targets: ImageTarget[], update: ImageUpdate): EditPlan {
  const sets = new Map<Scalar, ScalarSet>();
  const inserts: KeyInsert[] = [];
  const set = (site: Site, to: string): void => {
    const from = scalarText(parsed.text, site.scalar) ?? "";
    const existing = sets.get(site.scalar);
    if (existing) {
      if (existing.to !== to) {
        throw new UserError(
          "conflicting-edits",
          `the value ${JSON.stringify(from)} is used for different parts of ${update.image} (${existing.to} and ${to}); edit it by hand`,
        );
      }
      if (!existing.sites.some((other) => samePath(other, site))) existing.sites.push(site);
      return;
    }
    sets.set(site.scalar, { scalar: site.scalar, sites: [site], from, to });
  };
  const text = (site: Site): string => scalarText(parsed.text, site.scalar) ?? "";
  const needDigest = (site: Site): string => {
    if (update.digest === undefined) {
      const { line } = parsed.lineCounter.linePos(site.scalar.range?.[0] ?? 0);
      throw new UserError(
        "digest-required",
        `line ${line} pins ${update.image} by digest; give the new digest too (IMAGE:TAG@DIGEST)`,
      );
    }
    return update.digest;
  };

  for (const target of targets) {
    const embedded = targetSites(target).find((site) => site.embedded)?.embedded;
    const insert = (entry: KeyInsert): void => {
      inserts.push(embedded ? { ...entry, embedded } : entry);
    };
    if (target.image) {
      const prefix = target.image.prefix ?? "";
      const reference = text(target.image).slice(prefix.length);
      set(target.image, prefix + wholeValue(reference, target.image, update, needDigest));
    }
    if (target.name && target.setName && !sameImage(text(target.name), update.image))
      set(target.name, update.image);

    const digestKeyPresent =
      target.digest !== undefined ||
      (target.holder?.digestKey !== undefined && target.holder.map.has(target.holder.digestKey));
    if (target.tag) {
      const [currentTag, currentDigest] = splitTagDigest(text(target.tag));
      if (update.pin === "digest-only") {
        // Helm's `tag: 1.8.0@sha256:…` holds the digest when there is no digest key.
        if (currentDigest !== undefined) set(target.tag, `${currentTag}@${update.digest!}`);
      } else if (currentDigest !== undefined) {
        set(
          target.tag,
          `${update.tag!}@${update.pin === "digest" ? update.digest! : needDigest(target.tag)}`,
        );
      } else if (update.pin === "digest" && !digestKeyPresent && target.kind === "helm-values") {
        set(target.tag, `${update.tag!}@${update.digest!}`);
      } else {
        set(target.tag, update.tag!);
      }
    } else if (target.holder && update.pin !== "digest-only" && target.kind !== "marker") {
      const withDigest = update.pin === "digest" && target.kind === "helm-values" && !digestKeyPresent;
      insert({
        map: target.holder.map,
        key: target.holder.tagKey,
        value: withDigest ? `${update.tag!}@${update.digest!}` : update.tag!,
        field: "tag",
      });
    }

    if (target.digest) {
      const current = text(target.digest);
      if (update.pin !== "tag") set(target.digest, update.digest!);
      else if (current !== "") set(target.digest, needDigest(target.digest));
    } else if (
      update.pin !== "tag" &&
      target.holder?.digestKey !== undefined &&
      target.kind === "kustomization"
    ) {
      insert({
        map: target.holder.map,
        key: target.holder.digestKey,
        value: update.digest!,
        field: "digest",
      });
    } else if (
      update.pin === "digest-only" &&
      target.kind === "helm-values" &&
      !target.image &&
      !target.digest
    ) {
      const [, currentDigest] = target.tag ? splitTagDigest(text(target.tag)) : [undefined, undefined];
      if (currentDigest === undefined) {
        throw new UserError(
          "no-digest-field",
          `the Helm values for ${update.image} have no digest key to pin; add \`digest: ""\` or use pin: digest`,
        );
      }
    }
  }
  return {
    sets: [...sets.values()].filter((entry) => entry.from !== entry.to),
    inserts: dedupeInserts(inserts),
  };
}

/** A whole `repo:tag@digest` string, keeping the name as the user wrote it. */
function wholeValue(
  current: string,
  site: Site,
  update: ImageUpdate,
  needDigest: (site: Site) => string,
): string {
  let name = stripTagAndDigest(current);
  let currentDigest: string | undefined;
  try {
    currentDigest = parseImageRef(current).digest;
  } catch {
    currentDigest = undefined;
  }
  // A marked value that names another image (Flux whole-value setters) takes the image's name.
  if (!sameImage(name, update.image)) name = update.image;
  switch (update.pin) {
    case "tag":
      return currentDigest !== undefined
        ? `${name}:${update.tag!}@${needDigest(site)}`
        : `${name}:${update.tag!}`;
    case "digest":
      return `${name}:${update.tag!}@${update.digest!}`;
    case "digest-only":
      return `${name}@${update.digest!}`;
  }
}

export function stripTagAndDigest(reference: string): string {
  const at = reference.indexOf("@");
  const withoutDigest = at >= 0 ? reference.slice(0, at) : reference;
  const lastColon = withoutDigest.lastIndexOf(":");
  return lastColon > withoutDigest.lastIndexOf("/") ? withoutDigest.slice(0, lastColon) : withoutDigest;
}

function samePath(a: Site, b: Site): boolean {
  return a.document === b.document && JSON.stringify(a.path) === JSON.stringify(b.path);
}

function dedupeInserts(inserts: KeyInsert[]): KeyInsert[] {
  const seen = new Map<string, KeyInsert>();
  for (const insert of inserts) {
    const key = `${insert.map.range?.[0]}:${insert.key}`;
    const existing = seen.get(key);
    if (existing && existing.value !== insert.value) {
      throw new UserError(
        "conflicting-edits",
        `two references want different ${insert.key} values in one map`,
      );
    }
    seen.set(key, insert);
  }
  return [...seen.values()];
}
