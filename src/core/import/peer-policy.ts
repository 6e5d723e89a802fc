import { imageName, parseImageRef } from "../image-ref.js";
import { NAME_PATTERN } from "../config/names.js";
import { parsePolicy } from "../policy/parse-policy.js";
import type { PolicyInput } from "../policy/schema.js";

/**
 * What the peer readers share (docs/config.md "ferry import"): a policy checked by Ferry's own
 * policy parser, with the fields it refuses taken out and said, and the names Ferry accepts.
 */

/**
 * A peer's regular expression or range Ferry cannot compile is left out and said, never fatal;
 * the policy then admits no tag (`ignore: ["*"]`) until it is rewritten, as the peers update
 * nothing with a pattern or range they cannot read.
 */
export function checkedPolicy(policy: PolicyInput, what: string, notes: string[]): PolicyInput {
  let current: PolicyInput = { ...policy };
  for (let attempt = 0; attempt < 8; attempt++) {
    try {
      parsePolicy(current);
      return current;
    } catch (error) {
      const message = (error as Error).message;
      const field = /^policy\.([A-Za-z]+)/.exec(message)?.[1] as keyof PolicyInput | undefined;
      if (field === undefined || !(field in current) || field === "ignore") {
        notes.push(`${what}: the policy has no equivalent (${message}); updates are off (ignore: ["*"])`);
        return { ignore: ["*"] };
      }
      const dropped: (keyof PolicyInput)[] =
        field === "allow" || field === "extract" ? ["allow", "extract"] : [field];
      const shown = dropped
        .filter((name) => current[name] !== undefined)
        .map((name) => `${name} ${JSON.stringify(current[name])}`)
        .join(" and ");
      const reason = message.replace(/^policy\.[A-Za-z.0-9]+: /, "");
      notes.push(
        `${what}: ${shown} has no equivalent (${reason}); left out, and updates are off (ignore: ["*"]) until it is rewritten`,
      );
      current = Object.fromEntries(
        Object.entries(current).filter(([name]) => !dropped.includes(name as keyof PolicyInput)),
      ) as PolicyInput;
      if (!(current.ignore ?? []).includes("*")) current.ignore = [...(current.ignore ?? []), "*"];
    }
  }
  return current;
}

/** A Ferry image or environment name from a peer's name: lowercase, `-` for what is not allowed. */
export function ferryName(raw: string, fallback: string): string {
  const name = raw
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "")
    .slice(0, 63)
    .replace(/-+$/, "");
  return NAME_PATTERN.test(name) ? name : fallback;
}

/** `name` unless taken, else `name-2`, `name-3`… */
export function uniqueName(name: string, taken: Iterable<string>): string {
  const used = new Set(taken);
  if (!used.has(name)) return name;
  for (let n = 2; ; n++) {
    const candidate = `${name.slice(0, 60)}-${n}`;
    if (!used.has(candidate)) return candidate;
  }
}

/**
 * `registry/repo[:constraint]` as Argo CD Image Updater writes an image: the part after the last
 * `:` past the last `/` is a tag or a version constraint (`1.2.x`, `~1.2`, `>=1.0`), not part of
 * the name. Returns the canonical repository name (`docker.io/library/nginx`).
 */
export function splitImageSpec(spec: string): { repository: string; registry: string; constraint?: string } {
  let rest = spec.trim();
  const at = rest.indexOf("@");
  if (at >= 0) rest = rest.slice(0, at);
  const lastSlash = rest.lastIndexOf("/");
  const colon = rest.indexOf(":", lastSlash + 1);
  let constraint: string | undefined;
  if (colon >= 0) {
    constraint = rest.slice(colon + 1).trim();
    rest = rest.slice(0, colon);
  }
  const ref = parseImageRef(rest);
  const result: { repository: string; registry: string; constraint?: string } = {
    repository: imageName(ref),
    registry: ref.registry,
  };
  if (constraint !== undefined && constraint !== "") result.constraint = constraint;
  return result;
}

/** `FERRY_REGISTRY_<HOST>_PASSWORD`: the variable an operator exposes a registry's secret as. */
export function registryVariable(host: string): string {
  return `FERRY_REGISTRY_${host.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}_PASSWORD`;
}

/** Both peers read `1.20` and `v2.0-rc1` as versions; Ferry does not (docs/config.md "Tag policy"). */
export function lenientSemverNote(peer: string): string {
  return `semver: ${peer} also reads tags like 1.20 and v2.0-rc1 as versions; Ferry chooses only X.Y.Z tags (a v prefix is kept)`;
}
