/**
 * A small route table for the emulator: GitHub-style paths with `:params` and a trailing
 * `*rest` (for refs and file paths, which Octokit sends URL-encoded, e.g. `heads%2Fferry%2Fstaging`).
 */
import type { Actor } from "./model.js";

/** An error answered in GitHub's shape: `{ message, documentation_url, errors? }`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: unknown[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export const notFound = () => new ApiError(404, "Not Found");
export const validationFailed = (message = "Validation Failed", errors?: unknown[]) =>
  new ApiError(422, message, errors);

export interface RequestContext {
  method: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown>;
  actor: Actor;
  /** The full request URL (for pagination links). */
  url: URL;
}

export interface Reply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type Handler = (ctx: RequestContext) => Promise<Reply> | Reply;

interface Route {
  method: string;
  segments: string[];
  handler: Handler;
}

export class Router {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string, handler: Handler): void {
    this.routes.push({ method, segments: pattern.split("/").filter(Boolean), handler });
  }

  /** Every route as `METHOD /path/{}` with parameters blanked (for coverage checks). */
  list(): string[] {
    return this.routes.map(
      (r) =>
        `${r.method} /${r.segments.map((s) => (s.startsWith(":") || s.startsWith("*") ? "{}" : s)).join("/")}`,
    );
  }

  /** The matching route; `methodMismatch` when the path exists under another method. */
  match(
    method: string,
    pathname: string,
  ): { handler: Handler; params: Record<string, string> } | "methodMismatch" | undefined {
    const raw = pathname.split("/").filter(Boolean);
    let pathMatched = false;
    for (const route of this.routes) {
      const params = matchSegments(route.segments, raw);
      if (!params) continue;
      if (route.method !== method) {
        pathMatched = true;
        continue;
      }
      return { handler: route.handler, params };
    }
    return pathMatched ? "methodMismatch" : undefined;
  }
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function matchSegments(pattern: string[], raw: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    if (p.startsWith("*")) {
      if (i >= raw.length) return undefined;
      params[p.slice(1)] = raw.slice(i).map(decode).join("/");
      return params;
    }
    const segment = raw[i];
    if (segment === undefined) return undefined;
    if (p.startsWith(":")) params[p.slice(1)] = decode(segment);
    else if (p !== segment) return undefined;
  }
  return raw.length === pattern.length ? params : undefined;
}

/** GitHub pagination: `per_page` (default 30, max 100), `page`, and a `Link` header with next/last/prev/first. */
export function paginate<T>(ctx: RequestContext, items: T[], wrap?: (page: T[]) => unknown): Reply {
  const perPage = Math.min(100, Math.max(1, Number(ctx.query.get("per_page") ?? 30) || 30));
  const page = Math.max(1, Number(ctx.query.get("page") ?? 1) || 1);
  const lastPage = Math.max(1, Math.ceil(items.length / perPage));
  const slice = items.slice((page - 1) * perPage, page * perPage);
  const link = (n: number, rel: string) => {
    const url = new URL(ctx.url);
    url.searchParams.set("per_page", String(perPage));
    url.searchParams.set("page", String(n));
    return `<${url.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page > 1) links.push(link(page - 1, "prev"));
  if (page < lastPage) links.push(link(page + 1, "next"), link(lastPage, "last"));
  if (page > 1) links.push(link(1, "first"));
  return { body: wrap ? wrap(slice) : slice, headers: links.length ? { link: links.join(", ") } : {} };
}

export function requireString(body: Record<string, unknown>, field: string, resource: string): string {
  const value = body[field];
  if (typeof value !== "string" || value === "") {
    throw validationFailed("Validation Failed", [{ resource, field, code: "missing_field" }]);
  }
  return value;
}

/**
 * GitHub refuses an issue, pull request or comment body over 65,536 characters with 422
 * ("body is too long (maximum is 65536 characters)", resource `Issue` for issues and PRs alike:
 * https://github.com/renovatebot/renovate/issues/2032, https://github.com/potproject/code-agent/issues/3).
 */
export const MAX_BODY_CHARS = 65_536;

/**
 * GitHub refuses an issue or pull request title over 256 characters with 422 (resource `Issue` for
 * both): "title is too long (maximum is 256 characters)"
 * (https://github.com/googleapis/repo-automation-bots/issues/1895, https://github.com/rustsec/rustsec/pull/1445).
 */
export const MAX_TITLE_CHARS = 256;

export function checkTitleLength(title: unknown): void {
  if (typeof title !== "string" || title.length <= MAX_TITLE_CHARS) return;
  throw validationFailed("Validation Failed", [
    {
      resource: "Issue",
      code: "custom",
      field: "title",
      message: `title is too long (maximum is ${MAX_TITLE_CHARS} characters)`,
    },
  ]);
}

export function checkBodyLength(body: unknown, resource: "Issue" | "IssueComment"): void {
  if (typeof body !== "string" || body.length <= MAX_BODY_CHARS) return;
  throw validationFailed("Validation Failed", [
    {
      resource,
      code: "custom",
      field: "body",
      message: `body is too long (maximum is ${MAX_BODY_CHARS} characters)`,
    },
  ]);
}
