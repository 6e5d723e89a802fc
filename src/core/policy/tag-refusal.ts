import { isValidTag } from "../image-ref.js";
import { compileRange } from "./policy-range.js";
import type { Policy } from "./schema.js";
import { compileIgnore, compileTagOrder, parseSemver } from "./tag-order.js";
import { compileAllow, compileExtract } from "./tag-pattern.js";

/**
 * Why a policy does not admit a tag by name, in one line; undefined when it does. The verdict is
 * `compileTagOrder`'s own `admit`; the pieces are compiled again here only to name which part
 * refused (validity, an `ignore` glob, `allow`, the strategy's reading, the range).
 */
export function tagRefusal(policy: Policy, tag: string): string | undefined {
  if (compileTagOrder(policy).admit(tag) !== undefined) return undefined;
  if (!isValidTag(tag)) return `${JSON.stringify(tag)} is not a valid OCI tag`;
  const glob = policy.ignore.find((pattern) => compileIgnore(pattern)(tag));
  if (glob !== undefined) return `ignored by the policy's ignore ${JSON.stringify(glob)}`;
  let value = tag;
  if (policy.allow !== undefined) {
    const match = compileAllow(policy.allow).match(tag);
    if (match === undefined) return `does not match the policy's allow /${policy.allow}/`;
    if (policy.extract !== undefined) value = compileExtract(policy.extract)(match) ?? "";
  }
  const read = value === tag ? tag : `${tag} (extracted: ${JSON.stringify(value)})`;
  switch (policy.strategy) {
    case "semver": {
      const version = parseSemver(value, policy.underscoreIsBuildMetadata);
      if (version === undefined) return `${read} is not a semver version (X.Y.Z, optional v prefix)`;
      const range = policy.range ?? "*";
      if (version.prerelease.length > 0 && !policy.prerelease && compileRange(range, true).test(version))
        return `${read} is a prerelease, and the policy does not admit prereleases (prerelease: true)`;
      return `${read} is outside the policy's range ${range}`;
    }
    case "numerical":
      return `${read} is not a number (numerical policy)`;
    case "digest":
      return `the policy follows only the tag ${policy.tag}`;
    default:
      return `the ${policy.strategy} policy does not admit ${read}`;
  }
}
