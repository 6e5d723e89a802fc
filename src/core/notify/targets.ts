import { UserError } from "../errors.js";
import { canonicalRegistry } from "../image-ref.js";
import { NOTIFY_TARGET_NAME } from "../config/notify-schema.js";
import { parseOwners, secretUseProblem, type SecretBinding } from "../config/secret-bindings.js";

/**
 * The operator's notification targets, read from Ferry's environment (docs/config.md
 * "Notifications"), never from a repository: `FERRY_NOTIFY_<NAME>_URL` (required), `_KIND`
 * (`json`, the default, `slack` or `teams`), `_SECRET` (the HMAC key; required for `json`) and
 * `_OWNERS` (the installations whose configs may name it, or `*`; required in `ferry serve`, as
 * for every operator secret, docs/security.md "Multi-tenant model"). The URL is a secret too
 * (Slack's and Teams' carry their key in the path): no log line or error names it. Pure.
 */

export const NOTIFY_PREFIX = "FERRY_NOTIFY_";
export const NOTIFY_KINDS = ["json", "slack", "teams"] as const;
export type NotifyKind = (typeof NOTIFY_KINDS)[number];

export interface NotifyTarget {
  /** The name a config uses (`releases` for FERRY_NOTIFY_RELEASES_*). */
  name: string;
  url: string;
  kind: NotifyKind;
  secret?: string;
  /** `host[:port]` of the URL: the only host this target's secrets go to. */
  host: string;
  owners?: readonly string[] | "any";
}

export type NotifyTargets = ReadonlyMap<string, NotifyTarget>;

const SUFFIXES = ["_URL", "_KIND", "_SECRET", "_OWNERS"] as const;
const MAX_URL_LENGTH = 2048;
const MAX_TARGETS = 50;

/** The variable prefix of target `name`: `FERRY_NOTIFY_RELEASES`. */
export function targetVariable(name: string): string {
  return `${NOTIFY_PREFIX}${name.toUpperCase()}`;
}

/** Every target `env` defines; a malformed one stops the start with a one-line error that never shows the URL. */
export function notifyTargetsFromEnv(env: Record<string, string | undefined>): NotifyTargets {
  const fields = new Map<string, Partial<Record<(typeof SUFFIXES)[number], string>>>();
  for (const [variable, value] of Object.entries(env)) {
    if (value === undefined || !variable.startsWith(NOTIFY_PREFIX)) continue;
    const suffix = SUFFIXES.find((s) => variable.endsWith(s));
    if (!suffix) continue;
    const name = variable.slice(NOTIFY_PREFIX.length, -suffix.length).toLowerCase();
    if (!NOTIFY_TARGET_NAME.test(name)) continue;
    fields.set(name, { ...fields.get(name), [suffix]: value });
  }
  const targets = new Map<string, NotifyTarget>();
  for (const [name, field] of [...fields].sort(([a], [b]) => a.localeCompare(b))) {
    const prefix = targetVariable(name);
    if (field._URL === undefined)
      throw new UserError(
        "invalid-setting",
        `${prefix}_URL is not set (${prefix}_* name a notification target)`,
      );
    const url = parseTargetUrl(`${prefix}_URL`, field._URL);
    const kind = (field._KIND ?? "json").trim().toLowerCase();
    if (!(NOTIFY_KINDS as readonly string[]).includes(kind))
      throw new UserError("invalid-setting", `${prefix}_KIND must be one of ${NOTIFY_KINDS.join(", ")}`);
    const secret = field._SECRET?.trim() || undefined;
    if (kind === "json" && secret === undefined)
      throw new UserError(
        "invalid-setting",
        `${prefix}_SECRET is not set: a json target's bodies are signed with it (X-Ferry-Signature-256)`,
      );
    targets.set(name, {
      name,
      url: url.href,
      kind: kind as NotifyKind,
      host: url.host.toLowerCase(),
      ...(secret !== undefined ? { secret } : {}),
      ...(field._OWNERS !== undefined ? { owners: parseOwners(`${prefix}_OWNERS`, field._OWNERS) } : {}),
    });
  }
  if (targets.size > MAX_TARGETS)
    throw new UserError("invalid-setting", `at most ${MAX_TARGETS} FERRY_NOTIFY_* targets`);
  return targets;
}

function parseTargetUrl(variable: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new UserError("invalid-setting", `${variable} is not an absolute URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new UserError("invalid-setting", `${variable} must be an https:// (or http://) URL`);
  if (url.username !== "" || url.password !== "")
    throw new UserError(
      "invalid-setting",
      `${variable} must not carry credentials (use ${variable.replace(/_URL$/, "_SECRET")})`,
    );
  if (url.href.length > MAX_URL_LENGTH)
    throw new UserError("invalid-setting", `${variable} is longer than ${MAX_URL_LENGTH} characters`);
  return url;
}

/**
 * Why a config of installation `owner` (undefined: the CLI, no installation) may not use target
 * `name`, in one line; undefined when it may. The same decision as every operator secret
 * (`secretUseProblem`): bound to its URL's host and, in `ferry serve`, to its installations.
 */
export function targetUseProblem(
  targets: NotifyTargets,
  name: string,
  owner: string | undefined,
): string | undefined {
  const target = targets.get(name);
  const secret = targetVariable(name);
  if (!target)
    return `notify target ${name} is not configured: the operator sets ${secret}_URL in Ferry's environment`;
  const binding: SecretBinding = {
    hosts: [canonicalRegistry(target.host)],
    ...(target.owners ? { owners: target.owners } : {}),
  };
  return secretUseProblem(
    { kind: "bound", byName: new Map([[secret, binding]]) },
    { secret, host: target.host, ...(owner !== undefined ? { owner } : {}) },
  );
}
