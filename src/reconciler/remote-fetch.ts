/**
 * How Ferry fetches one remote kustomize base for vendoring (remote-bases.ts): a git repository
 * with the real `git`, whose every request goes through Ferry's filtering proxy (`http.proxy`; git
 * proxies loopback and `localhost` too, unlike Go's HTTP client), in the confined environment of
 * render-environment.ts (no user or system config, only the admitted protocols, no submodules, no
 * symlinks checked out); a file through the same proxy (proxied-fetch.ts). Then the kustomization
 * that named it is rewritten to the local copy. docs/security.md, "Render network".
 */
import { spawn } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { Scalar, visit } from "yaml";
import { parseAllDocumentsUnique } from "../core/yaml/unique-keys.js";
import { UserError } from "../core/errors.js";
import { confinementVariables } from "./render-environment.js";

export interface GitFetch {
  repository: string;
  ref?: string;
  /** An empty folder to check out into. */
  dir: string;
  proxyUrl: string;
  /** A private HOME for git. */
  home: string;
  prefixes: readonly string[];
  /** PATH to find git on; the system's default search path (/usr/bin:/bin) when undefined. */
  path: string | undefined;
  timeoutMs: number;
}

/** Fetches `ref` (the default branch when absent) of `repository`, depth 1, and checks it out without `.git`. */
export async function gitCheckout(fetch: GitFetch): Promise<void> {
  await mkdir(fetch.dir, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...(fetch.path !== undefined ? { PATH: fetch.path } : {}),
    ...confinementVariables(fetch.proxyUrl, fetch.home, fetch.prefixes),
  };
  const deadline = Date.now() + fetch.timeoutMs;
  const git = (...args: string[]) =>
    runGit(
      ["-C", fetch.dir, "-c", "core.symlinks=false", "-c", "advice.detachedHead=false", ...args],
      env,
      deadline,
    );
  await git("init", "-q");
  await git(
    "fetch",
    "-q",
    "--depth=1",
    "--no-tags",
    "--no-recurse-submodules",
    "--",
    fetch.repository,
    fetch.ref ?? "HEAD",
  );
  await git("checkout", "-q", "FETCH_HEAD");
  await rm(`${fetch.dir}/.git`, { recursive: true, force: true });
}

function runGit(args: string[], env: NodeJS.ProcessEnv, deadline: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString("utf8");
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), Math.max(1, deadline - Date.now()));
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(new UserError("remote-base-fetch-failed", `cannot run git: ${error.message}`, { cause: error }));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve();
      const cause =
        stderr
          .split("\n")
          .filter((line) => /^(fatal|error):/.test(line))
          .join(" ")
          .trim() || stderr.trim().split("\n").slice(-1)[0];
      reject(
        new UserError(
          "remote-base-fetch-failed",
          `git ${args[6] ?? ""} failed${signal ? " (timed out)" : ""}: ${(cause ?? "").slice(0, 500)}`,
        ),
      );
    });
  });
}

/**
 * Rewrites, in the kustomization `file`, every scalar that names a vendored remote reference
 * (`value`, or `key=value` in a generator's files) to its local path.
 */
export async function rewriteReferences(
  file: string,
  replacements: ReadonlyMap<string, string>,
): Promise<void> {
  const documents = parseAllDocumentsUnique(await readFile(file, "utf8"), { merge: true });
  if (!Array.isArray(documents) || documents.length !== 1)
    throw new UserError(
      "remote-base-refused",
      `${file}: a kustomization with remote bases must be one YAML document`,
    );
  const [document] = documents;
  visit(document!, {
    Scalar(_key, node: Scalar) {
      const value = node.value instanceof Uint8Array ? new TextDecoder().decode(node.value) : node.value;
      if (typeof value !== "string") return;
      for (const [remote, local] of replacements) {
        const replaced =
          value === remote
            ? local
            : value.endsWith(`=${remote}`)
              ? `${value.slice(0, -remote.length)}${local}`
              : undefined;
        if (replaced === undefined) continue;
        node.value = replaced;
        node.tag = undefined;
        node.type = Scalar.QUOTE_DOUBLE;
        return;
      }
    },
  });
  await writeFile(file, document!.toString());
}
