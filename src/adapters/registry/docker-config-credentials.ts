import { readFile, stat } from "node:fs/promises";
import { DOCKER_HUB } from "../../core/image-ref.js";
import type { ExpiringCredentials } from "./credential-cache.js";
import { RegistryAuthError } from "./errors.js";

/**
 * `auth: dockerconfig`: the credentials a Docker client would use, from a `config.json` whose
 * path the operator gives Ferry (never the config repo): `credHelpers.<host>` (or `credsStore`)
 * runs `docker-credential-<name> get` with the host on stdin and reads `{"Username","Secret"}` from
 * stdout (https://github.com/docker/docker-credential-helpers#development), otherwise
 * `auths.<host>.auth` is base64 `user:password` (https://docs.docker.com/reference/cli/docker/login/#credential-stores).
 */

const MAX_CONFIG_BYTES = 1024 * 1024;
const MAX_HELPER_OUTPUT = 64 * 1024;
const HELPER_TIMEOUT_MS = 15_000;
/** Helper answers carry no expiry: reuse one 10 minutes (renewed after 5). */
const HELPER_CREDENTIALS_MS = 10 * 60_000;
const HELPER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

interface DockerConfigFile {
  auths?: Record<string, { auth?: unknown; username?: unknown; password?: unknown }>;
  credHelpers?: Record<string, unknown>;
  credsStore?: unknown;
}

/** How errors name the source, without a secret. */
export function dockerConfigIdentity(path: string | undefined): string {
  return `auth: dockerconfig from ${path ?? "(FERRY_DOCKER_CONFIG not set)"}`;
}

export async function fetchDockerConfigCredentials(
  registry: string,
  path: string | undefined,
  options: { now: () => number; env?: Record<string, string | undefined> },
): Promise<ExpiringCredentials> {
  const where = `${registry}: ${dockerConfigIdentity(path)}`;
  if (!path) throw new RegistryAuthError(`${where}: the operator has not set FERRY_DOCKER_CONFIG`);
  let file: DockerConfigFile;
  try {
    if ((await stat(path)).size > MAX_CONFIG_BYTES) throw new Error("over 1 MiB");
    file = JSON.parse(await readFile(path, "utf8")) as DockerConfigFile;
  } catch (error) {
    throw new RegistryAuthError(`${where}: cannot read it (${(error as Error).message.split("\n")[0]})`);
  }
  const keys = hostKeys(registry);
  const helper =
    keys.map((key) => file.credHelpers?.[key]).find((name) => name !== undefined) ?? file.credsStore;
  if (helper !== undefined) {
    if (typeof helper !== "string" || !HELPER_NAME.test(helper))
      throw new RegistryAuthError(`${where}: credential helper name ${JSON.stringify(helper)} is not valid`);
    const answer = await runHelper(`docker-credential-${helper}`, keys[0]!, where, options.env);
    const username = typeof answer.Username === "string" ? answer.Username : "";
    const password = typeof answer.Secret === "string" ? answer.Secret : "";
    if (!password)
      throw new RegistryAuthError(`${where}: docker-credential-${helper} answered no Secret for ${keys[0]}`);
    return { username, password, expiresAt: options.now() + HELPER_CREDENTIALS_MS };
  }
  const entry = keys.map((key) => file.auths?.[key]).find((value) => value !== undefined);
  if (entry) {
    let username = typeof entry.username === "string" ? entry.username : "";
    let password = typeof entry.password === "string" ? entry.password : "";
    if (typeof entry.auth === "string" && entry.auth) {
      const decoded = Buffer.from(entry.auth, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon > 0) [username, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
    }
    if (username && password) return { username, password, expiresAt: options.now() + HELPER_CREDENTIALS_MS };
  }
  throw new RegistryAuthError(`${where}: no auths entry or credential helper for ${keys[0]}`);
}

/** The keys Docker uses for a host: the host itself, its https URL, and Docker Hub's legacy index URL. */
function hostKeys(registry: string): string[] {
  if (registry === DOCKER_HUB)
    return ["https://index.docker.io/v1/", "index.docker.io", "docker.io", "registry-1.docker.io"];
  return [registry, `https://${registry}`, `http://${registry}`];
}

function runHelper(
  command: string,
  host: string,
  where: string,
  env: Record<string, string | undefined> | undefined,
): Promise<{ Username?: unknown; Secret?: unknown }> {
  // Taken here, not imported with the module: a command that runs no helper does not load
  // child_process (docs/capacity.md "Start-up").
  const { execFile } = process.getBuiltinModule("node:child_process") as typeof import("node:child_process");
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      ["get"],
      { timeout: HELPER_TIMEOUT_MS, maxBuffer: MAX_HELPER_OUTPUT, ...(env ? { env } : {}) },
      (error, stdout, stderr) => {
        if (error) {
          const said = (String(stderr).trim() || String(stdout).trim()).split("\n")[0]!.slice(0, 200);
          reject(
            new RegistryAuthError(
              `${where}: ${command} get failed (${error.killed ? "timed out" : `exit ${String(error.code)}`})${said ? `: ${said}` : ""}`,
            ),
          );
          return;
        }
        try {
          resolve(JSON.parse(String(stdout)) as { Username?: unknown; Secret?: unknown });
        } catch {
          reject(new RegistryAuthError(`${where}: ${command} get answered something other than JSON`));
        }
      },
    );
    // A helper may answer without reading stdin and exit first: the write then fails with EPIPE,
    // which must not become an unhandled 'error' event (it would end the process); the exit code
    // and stdout decide.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(host);
  });
}
