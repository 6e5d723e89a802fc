/**
 * What a chart download shares, whatever the repository: the pin the status shows, and how the
 * version a chart asks for (exact, or a semver range resolved with `semver.maxSatisfying`, as
 * helm does) is picked from the versions a repository offers.
 */
import semver from "semver";
import { UserError } from "../core/errors.js";

/** A chart downloaded for a render, as the status shows it. */
export interface ChartDependencyPin {
  name: string;
  /** `oci://host/path/name`, or the `https://…` repository whose `index.yaml` named it. */
  repository: string;
  /** The version asked for in Chart.yaml (exact or a range). */
  constraint: string;
  version: string;
  /** OCI: the chart's manifest digest; an HTTP repository: `sha256:` of the archive downloaded. */
  digest: string;
}

/** Whether `constraint` is an exact version (no repository listing needed). */
export const exactVersion = (constraint: string): string | null => semver.valid(constraint);

/** The best of `offered` for `constraint` (exact or a range); `where` names the repository in errors. */
export function pickVersion(
  offered: readonly string[],
  constraint: string,
  label: string,
  where: string,
): string {
  const exact = semver.valid(constraint);
  if (exact) {
    const found = offered.find((version) => semver.valid(version) && semver.eq(version, exact));
    if (!found) throw new UserError("chart-dependency-not-found", `chart ${where} has no version ${exact}`);
    return found;
  }
  if (!semver.validRange(constraint))
    throw new UserError(
      "chart-dependency-version",
      `chart dependency ${label}: version ${JSON.stringify(constraint.slice(0, 80))} is neither a version nor a semver range`,
    );
  const best = semver.maxSatisfying(
    offered.filter((version) => semver.valid(version)),
    constraint,
  );
  if (!best)
    throw new UserError(
      "chart-dependency-not-found",
      `chart dependency ${label}: no version of ${where} satisfies ${JSON.stringify(constraint)}`,
    );
  return best;
}
