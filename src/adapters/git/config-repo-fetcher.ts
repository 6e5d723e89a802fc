/**
 * Pulls the config repo with the `git` CLI: shallow (`--depth 1`) at a branch, tag or SHA, over
 * HTTPS with a token, `file://` or a local path. Each good revision is checked out into its own
 * folder; when a fetch or checkout fails the previous folder stays in place, so the reconciler
 * keeps the last good revision (docs/reliability.md, reconciler rule 4).
 *
 * The token never appears in a URL, argv or a message: it reaches git as an `http.<origin>.extraHeader`
 * through `GIT_CONFIG_*` variables in the child's environment only, scoped to the repo's origin.
 */
import { existsSync } from "node:fs";
import { spawn } from "node:child_process";
import { mkdir, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { TransientError, UserError } from "../../core/errors.js";

export interface FetchedRevision {
  /** The commit SHA checked out. */
  revision: string;
  /** The folder holding that commit's files. */
  dir: string;
}

export interface ConfigRepoFetcherOptions {
  /** `https://…`, `http://…` (loopback emulators), `file://…` or a local path. */
  repo: string;
  /** Branch, tag or commit SHA; the remote's HEAD when absent. */
  ref?: string;
  /** Where the fetcher keeps its cache and checkouts; it owns this folder. */
  workDir: string;
  /**
   * Sent as HTTP basic auth (`x-access-token:<token>`, as GitHub expects) for http(s) URLs; a
   * function is asked before each git command (installation tokens minted as they expire).
   */
  token?: string | (() => Promise<string>);
  /** The environment for git (PATH, HOME…): the entry point passes it, nothing here reads process.env. */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  git?: string;
}

const FULL_SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/i;
/** How far back `contains` looks for the applied revision. */
const CONTAINS_DEPTH = 200;
const ALLOWED_SCHEMES = new Set(["https", "http", "ssh", "git", "file"]);

/**
 * A branch, tag or SHA as `git check-ref-format` would take it, and nothing that could turn the
 * refspec into an option (`-…`), a second refspec (`:`), a forced update (`+`) or a pattern (`*`).
 */
export function isSafeRef(ref: string): boolean {
  return (
    /^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(ref) &&
    !ref.includes("..") &&
    !ref.includes("//") &&
    !ref.endsWith("/") &&
    !ref.endsWith(".") &&
    !ref.endsWith(".lock") &&
    ref.length <= 255
  );
}

export class ConfigRepoFetcher {
  private current: FetchedRevision | undefined;
  private readonly cacheDir: string;

  constructor(private readonly options: ConfigRepoFetcherOptions) {
    this.cacheDir = path.join(options.workDir, "cache.git");
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(options.repo)?.[1]?.toLowerCase();
    if (scheme !== undefined && !ALLOWED_SCHEMES.has(scheme)) {
      throw new UserError(
        "invalid-repo",
        `unsupported config repo URL scheme ${JSON.stringify(scheme)}: use https, http, ssh, git, file or a path`,
      );
    }
    if (options.ref !== undefined && !isSafeRef(options.ref)) {
      throw new UserError(
        "invalid-ref",
        `invalid --ref ${JSON.stringify(options.ref)}: use a branch, tag or commit SHA`,
      );
    }
  }

  /** The last revision fetched and checked out successfully, while its checkout is still on disk. */
  lastGood(): FetchedRevision | undefined {
    return this.current && existsSync(this.current.dir) ? this.current : undefined;
  }

  /** Since when fetches have failed (the first failure after a success); undefined after a success. */
  unreachableSince(): Date | undefined {
    return this.failingSince;
  }

  private failingSince: Date | undefined;

  /** Fetches the ref; on success returns the new checkout, on failure throws and keeps the last good one. */
  async fetch(): Promise<FetchedRevision> {
    try {
      const fetched = await this.fetchOnce();
      this.failingSince = undefined;
      return fetched;
    } catch (error) {
      this.failingSince ??= new Date();
      throw error;
    }
  }

  private async fetchOnce(): Promise<FetchedRevision> {
    const { ref } = this.options;
    await mkdir(this.options.workDir, { recursive: true });
    await this.git(["init", "--quiet", "--bare", this.cacheDir]);
    const source = ref ?? "HEAD";
    // Fetch into a private ref (not FETCH_HEAD) so a concurrent or failed fetch cannot leave it half-written.
    const target = "refs/ferry/fetched";
    await this.git([
      "--git-dir",
      this.cacheDir,
      "fetch",
      "--quiet",
      "--no-tags",
      "--depth",
      "1",
      "--force",
      "--",
      this.remote(),
      `${source}:${target}`,
    ]);
    const revision = (
      await this.git(["--git-dir", this.cacheDir, "rev-parse", "--verify", `${target}^{commit}`])
    ).trim();
    if (ref && FULL_SHA.test(ref) && revision.toLowerCase() !== ref.toLowerCase()) {
      throw new UserError("git-ref-mismatch", `fetched ${revision} for ${ref}`);
    }
    if (this.current?.revision === revision) return this.current;
    const dir = path.join(this.options.workDir, `rev-${revision}`);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    try {
      // A throwaway index keeps the cache bare and lets each revision live in its own folder.
      await this.git(
        [
          "--git-dir",
          this.cacheDir,
          "--work-tree",
          dir,
          "checkout",
          "--quiet",
          "--force",
          revision,
          "--",
          ".",
        ],
        {
          GIT_INDEX_FILE: path.join(this.options.workDir, `index-${revision}`),
        },
      );
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    } finally {
      await rm(path.join(this.options.workDir, `index-${revision}`), { force: true });
    }
    const previous = this.current;
    this.current = { revision, dir };
    if (previous && previous.dir !== dir) await rm(previous.dir, { recursive: true, force: true });
    // The first checkout of this process: a restart in the same work dir leaves the last run's behind.
    if (!previous) await this.removeOtherCheckouts(dir);
    return this.current;
  }

  /**
   * Whether `head` has `ancestor` in its history. The cache is shallow, so the history is
   * deepened first (up to `CONTAINS_DEPTH` commits); an ancestor further back, an unknown commit
   * or a git failure all count as not contained (the caller then holds its prune, the safe side).
   */
  async contains(ancestor: string, head: string): Promise<boolean> {
    if (ancestor === head) return true;
    if (!FULL_SHA.test(ancestor) || !FULL_SHA.test(head)) return false;
    const isAncestor = async () => {
      try {
        await this.git(["--git-dir", this.cacheDir, "merge-base", "--is-ancestor", ancestor, head]);
        return true;
      } catch {
        return false;
      }
    };
    if (await isAncestor()) return true;
    try {
      await this.git([
        "--git-dir",
        this.cacheDir,
        "fetch",
        "--quiet",
        "--no-tags",
        "--depth",
        String(CONTAINS_DEPTH),
        "--",
        this.remote(),
        `+${this.options.ref ?? "HEAD"}:refs/ferry/history`,
      ]);
    } catch {
      return false;
    }
    return isAncestor();
  }

  private async removeOtherCheckouts(keep: string): Promise<void> {
    for (const name of await readdir(this.options.workDir)) {
      const entry = path.join(this.options.workDir, name);
      if (entry !== keep && /^(rev|index)-[0-9a-f]+$/.test(name))
        await rm(entry, { recursive: true, force: true });
    }
  }

  /** A plain path becomes absolute so git does not read it relative to the cache folder. */
  private remote(): string {
    const { repo } = this.options;
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) ? repo : path.resolve(repo);
  }

  private authEnv(token: string | undefined): Record<string, string> {
    const { repo } = this.options;
    if (!token || !/^https?:\/\//i.test(repo)) return {};
    const origin = new URL(repo).origin;
    const basic = Buffer.from(`x-access-token:${token}`).toString("base64");
    return {
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: `http.${origin}/.extraHeader`,
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    };
  }

  private async git(args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
    const { env = {}, timeoutMs = 120_000, git = "git" } = this.options;
    const token = typeof this.options.token === "function" ? await this.options.token() : this.options.token;
    const childEnv: NodeJS.ProcessEnv = {
      ...env,
      // Never wait for a password prompt in a headless reconciler.
      GIT_TERMINAL_PROMPT: "0",
      GIT_ASKPASS: "",
      SSH_ASKPASS: "",
      ...this.authEnv(token),
      ...extraEnv,
    };
    // The token, and the Basic header git sends it in (base64 of `x-access-token:<token>`), should
    // git ever print them (e.g. GIT_TRACE_CURL with redaction off).
    const secrets = token ? [token, Buffer.from(`x-access-token:${token}`).toString("base64")] : [];
    const redact = (text: string) =>
      secrets.reduce((result, secret) => result.split(secret).join("***"), text);
    return new Promise((resolve, reject) => {
      const child = spawn(git, args, { env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill("SIGKILL");
      }, timeoutMs);
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => {
        if (stderr.length < 8192) stderr += chunk.toString("utf8");
      });
      child.on("error", (error) => {
        clearTimeout(timer);
        reject(new TransientError("git-failed", `cannot run git: ${error.message}`));
      });
      child.on("close", (code) => {
        clearTimeout(timer);
        if (timedOut)
          return reject(
            new TransientError(
              "git-timeout",
              `git ${args[2] === "fetch" ? "fetch" : args[0]} timed out after ${timeoutMs} ms`,
            ),
          );
        if (code === 0) return resolve(stdout);
        const message = redact(gitCause(stderr)) || `exit code ${code}`;
        reject(
          new TransientError(
            "git-failed",
            `git ${args.includes("fetch") ? "fetch" : args.includes("checkout") ? "checkout" : args[0]} failed: ${message}`,
          ),
        );
      });
    });
  }
}

/**
 * What git said went wrong: its `fatal:`/`error:` lines (the cause: "'…' does not appear to be a
 * git repository", "unable to access …"), else its last two lines; git's closing advice
 * ("Please make sure you have the correct access rights …") alone names no cause.
 */
export function gitCause(stderr: string): string {
  const lines = stderr
    .trim()
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  const causes = lines.filter((line) => /^(fatal|error):/.test(line));
  return (causes.length > 0 ? causes.slice(0, 3) : lines.slice(-2)).join(" ");
}
