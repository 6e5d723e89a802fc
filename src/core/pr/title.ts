/**
 * PR titles: `Promote shop 1.8.0 to staging`, several images `Promote shop 1.8.0, cart 2.1.0 to
 * staging`, a digest-only change names the short digest, a rollback says `Roll back … in prod`.
 * A list too long for GitHub's 256-character title becomes a count, `Promote 15 images to prod`:
 * the body lists every image. A named group's PR ends with the group: `Promote shop 1.8.0 to
 * staging (team-a)` (docs/config.md "Grouping").
 */
import { NAME_SOURCE } from "../config/names.js";
import { shortDigest } from "../image-ref.js";
import { fitTitle, GITHUB_TITLE_LIMIT } from "./github-limits.js";
export interface TitleImage {
  image: string;
  /** The tag, or the digest when the environment pins only a digest. */
  version: string;
}

export type TitleKind = "promote" | "rollback";

export function formatTitle(
  environment: string,
  images: TitleImage[],
  kind: TitleKind = "promote",
  group?: string,
): string {
  const list = images.map(({ image, version }) => `${image} ${displayVersion(version)}`).join(", ");
  const suffix = group !== undefined ? ` (${group})` : "";
  const title = (what: string) =>
    kind === "rollback"
      ? `Roll back ${what} in ${environment}${suffix}`
      : `Promote ${what} to ${environment}${suffix}`;
  const full = title(list);
  if (full.length <= GITHUB_TITLE_LIMIT) return full;
  return fitTitle(title(`${images.length} image${images.length === 1 ? "" : "s"}`));
}

const COUNTED = /^\d+ images?$/;

const PROMOTE_TITLE = new RegExp(`^Promote (.+) to (${NAME_SOURCE})(?: \\((${NAME_SOURCE})\\))?$`);
const ROLLBACK_TITLE = new RegExp(`^Roll back (.+) in (${NAME_SOURCE})(?: \\((${NAME_SOURCE})\\))?$`);

/** Parses a title Ferry wrote; undefined for any other title. */
export function parseTitle(
  title: string,
): { kind: TitleKind; environment: string; group?: string; images: TitleImage[] } | undefined {
  const promote = PROMOTE_TITLE.exec(title);
  const match = promote ?? ROLLBACK_TITLE.exec(title);
  if (!match) return undefined;
  const kind: TitleKind = promote ? "promote" : "rollback";
  // `Promote 15 images to prod` names no image: the PR's plan block does.
  if (COUNTED.test(match[1]!)) return undefined;
  const images: TitleImage[] = [];
  for (const part of match[1]!.split(", ")) {
    const space = part.indexOf(" ");
    if (space <= 0) return undefined;
    images.push({ image: part.slice(0, space), version: part.slice(space + 1) });
  }
  return { kind, environment: match[2]!, ...(match[3] !== undefined ? { group: match[3] } : {}), images };
}

function displayVersion(version: string): string {
  return version.startsWith("sha256:") ? shortDigest(version) : version;
}
