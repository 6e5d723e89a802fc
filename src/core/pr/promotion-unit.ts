import type { FerryConfig } from "../config/schema.js";
import {
  formatBranchName,
  parseUnitBranch,
  sameGroup,
  type PromotionUnit,
  type UnitGroup,
} from "./branch.js";

/**
 * How the images of an environment are split into promotion units (docs/config.md "Grouping"):
 * an image with `group: <name>` is in that group's unit; any other image is in the environment's
 * default unit, or in a unit of its own with the environment's `grouping: image`.
 */
export function groupOf(config: FerryConfig, environment: string, image: string): UnitGroup | undefined {
  const group = config.images[image]?.group;
  if (group !== undefined) return { kind: "group", name: group };
  if (config.environments[environment]?.grouping === "image") return { kind: "image", name: image };
  return undefined;
}

export interface UnitImages extends PromotionUnit {
  /** The unit's branch (`formatBranchName`). */
  branch: string;
  /** The unit's images, in config order. */
  images: string[];
}

/**
 * The units of `environment` that hold at least one of `images` (default: every image), each with
 * those of its images: the default unit first, then named groups, then single images, by name.
 */
export function promotionUnits(
  config: FerryConfig,
  environment: string,
  images: readonly string[] = Object.keys(config.images),
): UnitImages[] {
  const units = new Map<string, UnitImages>();
  for (const image of images) {
    if (!(image in config.images)) continue;
    const group = groupOf(config, environment, image);
    const branch = formatBranchName(environment, group);
    const unit = units.get(branch) ?? { environment, ...(group ? { group } : {}), branch, images: [] };
    unit.images.push(image);
    units.set(branch, unit);
  }
  const rank = (unit: UnitImages) => (unit.group ? (unit.group.kind === "group" ? 1 : 2) : 0);
  return [...units.values()].sort(
    (a, b) => rank(a) - rank(b) || (a.branch < b.branch ? -1 : a.branch > b.branch ? 1 : 0),
  );
}

/**
 * The (environment, group, images) of a Ferry PR's branch under `config`: what the rights, window
 * and notification checks read, before and after the PR merges. Undefined for a branch that is
 * not Ferry's or names an environment the config does not have; a unit no image is in any more
 * (its images moved to another group) has no images.
 */
export function unitOfBranch(config: FerryConfig, ref: string): UnitImages | undefined {
  const unit = parseUnitBranch(ref);
  if (!unit || !(unit.environment in config.environments)) return undefined;
  const images = Object.keys(config.images).filter((image) =>
    sameGroup(groupOf(config, unit.environment, image), unit.group),
  );
  return { ...unit, branch: formatBranchName(unit.environment, unit.group), images };
}

/** The unit `image` is in, in `environment`. */
export function unitOfImage(config: FerryConfig, environment: string, image: string): UnitImages {
  const group = groupOf(config, environment, image);
  const found = unitOfBranch(config, formatBranchName(environment, group));
  return (
    found ?? {
      environment,
      ...(group ? { group } : {}),
      branch: formatBranchName(environment, group),
      images: [image],
    }
  );
}
