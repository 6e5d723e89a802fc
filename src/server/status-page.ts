/**
 * `GET /`: the same answer as `GET /status`, as one server-rendered HTML page (no scripts, no
 * build step): per repository, environments × images with version, digest, sync, health and
 * drift (the reconciler's latest Deployment status), held, the open promotion PR, why a newer tag
 * was not proposed (the last scan's notices) and the last changes (the config repo's history). Every value
 * is escaped; the page sends a Content-Security-Policy that allows no script at all.
 */
import { sendText } from "./route.js";
import type { Route } from "./route.js";
import { checkStatusAccess, type StatusAccess } from "./status-route.js";
import { shortSha } from "../core/commit-sha.js";

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function text(value: unknown): string {
  if (value === undefined || value === null || value === "") return "";
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? String(value)
    : JSON.stringify(value);
}

/** `1.8.0 ← 1.7.3, promotion #4 by mona, 2026-12-01T01:37:29Z`: one entry of `changes` (the repo's history). */
export function describeChange(change: Json): string {
  const pull = change.pull !== undefined ? ` #${text(change.pull)}` : ` ${shortSha(text(change.sha))}`;
  const by = change.by !== undefined ? ` by ${text(change.by)}` : "";
  const from = change.from !== undefined ? ` ← ${text(change.from)}` : "";
  return `${text(change.to)}${from}, ${text(change.kind)}${pull}${by}, ${text(change.at)}`;
}

/** What the page shows in one row's columns, from the repository's `/status` answer. */
export function rowValues(status: Json, environment: string, image: string): Record<string, string> {
  const running = isRecord(status.running) ? status.running : {};
  const cells = isRecord(running[environment]) ? (running[environment] as Json) : {};
  const cell = isRecord(cells[image]) ? (cells[image] as Json) : {};
  const deployments = isRecord(status.deployments) ? status.deployments : {};
  const deployment = isRecord(deployments[environment]) ? (deployments[environment] as Json) : {};
  const holds = isRecord(status.holds) ? status.holds : {};
  const pulls = isRecord(status.pulls) ? status.pulls : {};
  const hold = holds[environment];
  const pull = pulls[environment];
  const changes = isRecord(status.changes) ? status.changes : {};
  const recent = Array.isArray(changes[environment]) ? (changes[environment] as unknown[]) : [];
  const notices = Array.isArray(status.notices) ? status.notices : [];
  return {
    tag: text(cell.tag) || "not referenced",
    digest: text(cell.digest),
    sync: text(deployment.sync) || "unknown",
    health: text(deployment.health) || "unknown",
    drift: text(deployment.drift) || (isRecord(deployments[environment]) ? "none" : "unknown"),
    held: isRecord(hold) ? `held by ${text(hold.by)} (${text(hold.reason)}) since ${text(hold.at)}` : "no",
    pull: isRecord(pull) ? `#${text(pull.number)} ${text(pull.title)}` : "none",
    // "Why not?": what the last scan said about this image here (CI gating, a signature, a policy).
    notices: notices
      .filter((notice) => isRecord(notice) && notice.environment === environment && notice.image === image)
      .map((notice) => text((notice as Json).message))
      .join("; "),
    changes: recent
      .filter((change) => isRecord(change) && change.image === image)
      .map((change) => describeChange(change as Json))
      .join("; "),
  };
}

const COLUMNS = [
  ["tag", "version"],
  ["digest", "digest"],
  ["sync", "sync"],
  ["health", "health"],
  ["drift", "drift"],
  ["held", "held"],
  ["pull", "open promotion PR"],
  ["notices", "why not"],
  ["changes", "last changes"],
] as const;

function repositorySection(name: string, status: Json): string {
  const environments = Array.isArray(status.environments)
    ? status.environments.filter(isRecord).map((environment) => ({
        name: text(environment.name),
        from: text(environment.from),
      }))
    : [];
  const images = Array.isArray(status.images) ? status.images.map(text) : [];
  const rows: string[] = [];
  for (const environment of environments) {
    for (const image of images) {
      const values = rowValues(status, environment.name, image);
      rows.push(
        `<tr data-environment="${escapeHtml(environment.name)}" data-image="${escapeHtml(image)}">` +
          `<th scope="row">${escapeHtml(environment.name)}${environment.from ? ` <small>from ${escapeHtml(environment.from)}</small>` : ""}</th>` +
          `<td>${escapeHtml(image)}</td>` +
          COLUMNS.map(([key]) =>
            key === "digest"
              ? `<td class="digest"><code>${escapeHtml(values.digest)}</code></td>`
              : `<td class="${key}">${escapeHtml(values[key])}</td>`,
          ).join("") +
          `</tr>`,
      );
    }
  }
  return (
    `<section data-repository="${escapeHtml(name)}"><h2>${escapeHtml(name)}</h2>` +
    `<table><thead><tr><th>environment</th><th>image</th>${COLUMNS.map(([, title]) => `<th>${title}</th>`).join("")}</tr></thead>` +
    `<tbody>${rows.join("")}</tbody></table></section>`
  );
}

/** The page for one `/status` answer. */
export function renderStatusPage(status: Record<string, unknown>): string {
  const sections = Object.entries(status)
    .filter(([, value]) => isRecord(value))
    .map(([name, value]) => repositorySection(name, value as Json));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Ferry</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;margin:1.5rem}table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}code{font-size:.85em}</style>
</head><body><h1>Ferry</h1>
${sections.length > 0 ? sections.join("\n") : "<p>No configured repositories.</p>"}
<p><a href="/status">/status</a> (JSON)</p>
</body></html>
`;
}

/** `GET /` behind the same rule as `/status` (docs/security.md), from the same status answer. */
export function createStatusPageRoute(
  status: () => Promise<Record<string, unknown>>,
  access: StatusAccess,
): Route {
  return async (req, res, path) => {
    if (path !== "/") return false;
    const decision = checkStatusAccess(req, res, access);
    if (decision !== "allowed") return decision === "refused";
    const page = renderStatusPage(await status());
    res.setHeader("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'");
    res.setHeader("x-content-type-options", "nosniff");
    sendText(res, 200, "text/html; charset=utf-8", page);
    return true;
  };
}
