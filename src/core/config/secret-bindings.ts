/**
 * Which operator secrets a config may name, for which hosts and for which installations
 * (docs/security.md "Multi-tenant model"). An operator secret is a variable of Ferry's environment
 * that a config names to have it sent somewhere (`passwordEnv`, `tokenEnv`). The config chooses
 * the host, so each secret is bound by the operator, beside the secret itself:
 *
 * - `<NAME>_HOSTS=host[:port],...`: the only hosts it is ever sent to (exact match, any case;
 *   Docker Hub's aliases are one host). Required: a secret without it is refused. Nothing in a
 *   variable's name says where it belongs, and a guess is what let one tenant's config send
 *   another's password to a host of its choosing.
 * - `<NAME>_OWNERS=login,...` (or `*`): the installations (account logins) whose configs may name
 *   it. Required in `ferry serve`, which serves many installations; `*` says so explicitly for a
 *   single-tenant Ferry. `ferry check` and `ferry plan` have no installation: hosts apply there.
 *
 * The operator's ambient credentials a config chooses with `auth:` (a cloud identity, the Docker
 * config.json) are bound the same way, under a name of their own (`AMBIENT_CREDENTIALS`:
 * `FERRY_CLOUD_AUTH_AWS_HOSTS`/`_OWNERS`, `FERRY_DOCKER_CONFIG_HOSTS`/`_OWNERS`…).
 *
 * Parsing is pure over the environment an entry point hands in; `secretUseProblem` is the one
 * decision every use goes through (the config rules and the registry client's run-time check).
 */
import { UserError } from "../errors.js";
import { canonicalRegistry } from "../image-ref.js";

export const SECRET_HOSTS_SUFFIX = "_HOSTS";
export const SECRET_OWNERS_SUFFIX = "_OWNERS";

export interface SecretBinding {
  /** Canonical host[:port]s, lower case. */
  hosts: readonly string[];
  /** Lower-case logins, `"any"` for `*`, undefined when `<NAME>_OWNERS` is not set. */
  owners?: readonly string[] | "any";
}

export type SecretBindings =
  | { kind: "bound"; byName: ReadonlyMap<string, SecretBinding> }
  /** A reader that never sends a secret (`ferry history`): nothing to bind. */
  | { kind: "never-sent" };

/** No secret is bound: every one a config names is refused. */
export const NO_SECRET_BINDINGS: SecretBindings = { kind: "bound", byName: new Map() };
export const SECRETS_NEVER_SENT: SecretBindings = { kind: "never-sent" };

/**
 * The name each ambient credential kind is bound under: `auth: aws` uses the AWS identity of
 * Ferry's environment, bound by `FERRY_CLOUD_AUTH_AWS_HOSTS` and `FERRY_CLOUD_AUTH_AWS_OWNERS`;
 * `auth: dockerconfig` the config.json of FERRY_DOCKER_CONFIG, bound by `FERRY_DOCKER_CONFIG_HOSTS`
 * and `FERRY_DOCKER_CONFIG_OWNERS`. No config can read these names as a secret.
 */
export const AMBIENT_CREDENTIALS = {
  aws: "FERRY_CLOUD_AUTH_AWS",
  gcp: "FERRY_CLOUD_AUTH_GCP",
  azure: "FERRY_CLOUD_AUTH_AZURE",
  dockerconfig: "FERRY_DOCKER_CONFIG",
} as const;

/** The name an `auth:` value's ambient credential is bound under, or undefined for any other `auth:`. */
export function ambientCredentialName(auth: unknown): string | undefined {
  return typeof auth === "string" && Object.hasOwn(AMBIENT_CREDENTIALS, auth)
    ? AMBIENT_CREDENTIALS[auth as keyof typeof AMBIENT_CREDENTIALS]
    : undefined;
}

const AMBIENT_NAMES = new Set<string>(Object.values(AMBIENT_CREDENTIALS));

/** A binding setting (`<NAME>_HOSTS`, `<NAME>_OWNERS`): not a secret, and never readable as one. */
export function isSecretBindingName(name: string): boolean {
  return name.endsWith(SECRET_HOSTS_SUFFIX) || name.endsWith(SECRET_OWNERS_SUFFIX);
}

/** A use of secret `secret` for `host` by a config of installation `owner` (undefined: the CLI). */
export interface SecretUse {
  secret: string;
  host: string;
  owner?: string;
}

/**
 * Why `use` is refused, in one line that tells the operator how to bind the secret; undefined
 * when it is allowed. In `ferry serve` the installation is judged first, so that a config of
 * another installation learns nothing about where the secret goes.
 */
export function secretUseProblem(bindings: SecretBindings, use: SecretUse): string | undefined {
  if (bindings.kind === "never-sent") return undefined;
  const { secret } = use;
  const binding = bindings.byName.get(secret);
  if (use.owner !== undefined) {
    const owners = binding?.owners;
    if (owners === undefined)
      return `${secret} is not bound to any installation: the operator lists the installations that may use it in ${secret}${SECRET_OWNERS_SUFFIX}=<owner>[,<owner>] (or * for every one)`;
    if (owners !== "any" && !owners.includes(use.owner.toLowerCase()))
      return `${secret} is not available to installation ${use.owner}: the operator binds each secret to the installations that may use it (${secret}${SECRET_OWNERS_SUFFIX})`;
  }
  if (!binding || binding.hosts.length === 0)
    return `${secret} is not bound to any host: the operator binds it with ${secret}${SECRET_HOSTS_SUFFIX}=<host>[,<host>]`;
  const host = canonicalRegistry(use.host);
  if (!binding.hosts.includes(host))
    return `${secret} is bound to ${binding.hosts.join(", ")}, not ${host}: Ferry never sends it to another host`;
  return undefined;
}

/**
 * The bindings in `env` of every secret `<NAME>` a config may name (`nameable`) and of every
 * ambient credential (`AMBIENT_CREDENTIALS`): its `<NAME>_HOSTS` and `<NAME>_OWNERS`. Other variables that happen to end so (`ALLOWED_HOSTS`) are
 * not Ferry's and are left alone. A malformed binding stops the start with a one-line error.
 */
export function secretBindingsFromEnv(
  env: Record<string, string | undefined>,
  nameable: (name: string) => boolean,
): SecretBindings {
  const byName = new Map<string, SecretBinding>();
  for (const [variable, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (variable.endsWith(SECRET_HOSTS_SUFFIX)) {
      const name = variable.slice(0, -SECRET_HOSTS_SUFFIX.length);
      if (!name || !(nameable(name) || AMBIENT_NAMES.has(name))) continue;
      byName.set(name, { ...byName.get(name), hosts: parseHosts(variable, value) });
    } else if (variable.endsWith(SECRET_OWNERS_SUFFIX)) {
      const name = variable.slice(0, -SECRET_OWNERS_SUFFIX.length);
      if (!name || !(nameable(name) || AMBIENT_NAMES.has(name))) continue;
      byName.set(name, { hosts: byName.get(name)?.hosts ?? [], owners: parseOwners(variable, value) });
    }
  }
  return { kind: "bound", byName };
}

/** host, host:port, [v6]:port; no scheme, path or wildcard. */
const HOST =
  /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;
/** A GitHub login. */
const LOGIN = /^[a-z0-9](?:[a-z0-9-]{0,38})$/;

function parseHosts(variable: string, value: string): string[] {
  const hosts = list(value).map((entry) => {
    const host = entry.toLowerCase();
    if (!HOST.test(host))
      throw new UserError(
        "invalid-setting",
        `${variable}: ${JSON.stringify(entry)} is not a host[:port] (exact names only: no scheme, path or wildcard)`,
      );
    return canonicalRegistry(host);
  });
  if (hosts.length === 0) throw new UserError("invalid-setting", `${variable} names no host`);
  return hosts;
}

/** `<NAME>_OWNERS`: logins, or `*` alone for every installation; a one-line error otherwise. */
export function parseOwners(variable: string, value: string): readonly string[] | "any" {
  const owners = list(value).map((entry) => entry.toLowerCase());
  if (owners.length === 1 && owners[0] === "*") return "any";
  if (owners.length === 0) throw new UserError("invalid-setting", `${variable} names no installation`);
  for (const owner of owners)
    if (!LOGIN.test(owner))
      throw new UserError(
        "invalid-setting",
        `${variable}: ${JSON.stringify(owner)} is not an account login (or give * alone for every installation)`,
      );
  return owners;
}

function list(value: string): string[] {
  return value
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
}
