/**
 * `GET /`: the same answer as `GET /status`, as one server-rendered HTML page (no scripts, no
 * build step): per repository, environments × images with version, digest, sync, health, held,
 * drift and recent changes when the status carries them, and the open promotion PRs. Every value
 * is escaped; the page sends a Content-Security-Policy that allows no script at all.
 */
import { sendText } from "./route.js";
import type { Route } from "./route.js";
import { checkStatusAccess, type StatusAccess } from "./status-route.js";

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

/** A cell's optional fields, shown when the status has them (the reconciler's view, drift…). */
const EXTRA_FIELDS = ["sync", "health", "drift"] as const;

function text(value: unknown): string {
  if (value === undefined || value === null || value === "") return "";
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? String(value)
    : JSON.stringify(value);
}

function repositorySection(name: string, status: Json): string {
  const environments = Array.isArray(status.environments)
    ? status.environments.filter(isRecord).map((environment) => ({
        name: text(environment.name),
        from: text(environment.from),
      }))
    : [];
  const images = Array.isArray(status.images) ? status.images.map(text) : [];
  const running = isRecord(status.running) ? status.running : {};
  const pulls = isRecord(status.pulls) ? status.pulls : {};
  const holds = isRecord(status.holds) ? status.holds : {};
  const rows: string[] = [];
  for (const environment of environments) {
    const cells = isRecord(running[environment.name]) ? (running[environment.name] as Json) : {};
    const hold = holds[environment.name];
    const pull = pulls[environment.name];
    const held = isRecord(hold)
      ? `held by ${text(hold.by)} (${text(hold.reason)}) since ${text(hold.at)}`
      : "no";
    const pr = isRecord(pull) ? `#${text(pull.number)} ${text(pull.title)}` : "none";
    for (const image of images) {
      const cell = isRecord(cells[image]) ? (cells[image] as Json) : {};
      const extra = EXTRA_FIELDS.map((field) => `<td>${escapeHtml(text(cell[field]) || "unknown")}</td>`);
      rows.push(
        `<tr data-environment="${escapeHtml(environment.name)}" data-image="${escapeHtml(image)}">` +
          `<th scope="row">${escapeHtml(environment.name)}${environment.from ? ` <small>from ${escapeHtml(environment.from)}</small>` : ""}</th>` +
          `<td>${escapeHtml(image)}</td>` +
          `<td class="tag">${escapeHtml(text(cell.tag) || "not referenced")}</td>` +
          `<td class="digest"><code>${escapeHtml(text(cell.digest))}</code></td>` +
          extra.join("") +
          `<td class="held">${escapeHtml(held)}</td>` +
          `<td class="pull">${escapeHtml(pr)}</td>` +
          `<td class="changes">${escapeHtml(text(cell.lastChange ?? cell.changes) || "")}</td>` +
          `</tr>`,
      );
    }
  }
  return (
    `<section data-repository="${escapeHtml(name)}"><h2>${escapeHtml(name)}</h2>` +
    `<table><thead><tr><th>environment</th><th>image</th><th>version</th><th>digest</th>` +
    `<th>sync</th><th>health</th><th>drift</th><th>held</th><th>open promotion PR</th><th>last changes</th></tr></thead>` +
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
