import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigRepoFetcher } from "../../../src/adapters/git/config-repo-fetcher.js";

const GIT_ENV = {
  PATH: process.env.PATH,
  HOME: tmpdir(),
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
};

const cleanup: string[] = [];
afterEach(() => {
  for (const dir of cleanup.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "ferry-fetch-"));
  cleanup.push(dir);
  return dir;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" }).trim();
}

function commitFile(repo: string, file: string, content: string): string {
  writeFileSync(path.join(repo, file), content);
  git(repo, "add", file);
  git(repo, "commit", "-q", "-m", `write ${file}`);
  return git(repo, "rev-parse", "HEAD");
}

function newRepo(): string {
  const repo = tempDir();
  git(repo, "init", "-q", "-b", "main");
  return repo;
}

describe("ConfigRepoFetcher", () => {
  it("checks out a branch from a local path and reports its commit", async () => {
    const repo = newRepo();
    const sha = commitFile(repo, "app.yaml", "one\n");
    const fetcher = new ConfigRepoFetcher({ repo, ref: "main", workDir: tempDir(), env: GIT_ENV });
    const fetched = await fetcher.fetch();
    expect(fetched.revision).toBe(sha);
    expect(readFileSync(path.join(fetched.dir, "app.yaml"), "utf8")).toBe("one\n");
  });

  it("follows new commits over file:// and removes the old checkout", async () => {
    const repo = newRepo();
    commitFile(repo, "app.yaml", "one\n");
    const fetcher = new ConfigRepoFetcher({ repo: `file://${repo}`, workDir: tempDir(), env: GIT_ENV });
    const first = await fetcher.fetch();
    const second = commitFile(repo, "app.yaml", "two\n");
    const fetched = await fetcher.fetch();
    expect(fetched.revision).toBe(second);
    expect(readFileSync(path.join(fetched.dir, "app.yaml"), "utf8")).toBe("two\n");
    expect(existsSync(first.dir)).toBe(false);
  });

  it("removes the checkout a previous process left in the same work dir", async () => {
    const repo = newRepo();
    commitFile(repo, "app.yaml", "one\n");
    const workDir = tempDir();
    const first = await new ConfigRepoFetcher({ repo, workDir, env: GIT_ENV }).fetch();
    const second = commitFile(repo, "app.yaml", "two\n");
    // A restart: a new fetcher, the same work dir (the pod's emptyDir outlives the container).
    const fetched = await new ConfigRepoFetcher({ repo, workDir, env: GIT_ENV }).fetch();
    expect(fetched.revision).toBe(second);
    expect(existsSync(first.dir)).toBe(false);
    expect(existsSync(fetched.dir)).toBe(true);
  });

  it("checks out a tag and an exact commit SHA", async () => {
    const repo = newRepo();
    const old = commitFile(repo, "app.yaml", "one\n");
    git(repo, "tag", "-a", "v1", "-m", "v1");
    commitFile(repo, "app.yaml", "two\n");
    const byTag = await new ConfigRepoFetcher({
      repo: `file://${repo}`,
      ref: "v1",
      workDir: tempDir(),
      env: GIT_ENV,
    }).fetch();
    expect(byTag.revision).toBe(old);
    const bySha = await new ConfigRepoFetcher({
      repo: `file://${repo}`,
      ref: old,
      workDir: tempDir(),
      env: GIT_ENV,
    }).fetch();
    expect(readFileSync(path.join(bySha.dir, "app.yaml"), "utf8")).toBe("one\n");
  });

  it("keeps the last good revision when the repo becomes unreachable", async () => {
    const repo = newRepo();
    const sha = commitFile(repo, "app.yaml", "one\n");
    const fetcher = new ConfigRepoFetcher({ repo, workDir: tempDir(), env: GIT_ENV });
    await fetcher.fetch();
    rmSync(repo, { recursive: true, force: true });
    // Git's cause, not only its closing advice ("Please make sure you have the correct access rights").
    await expect(fetcher.fetch()).rejects.toThrow(
      /git fetch failed: fatal: .* does not appear to be a git repository/,
    );
    expect(fetcher.unreachableSince()).toBeInstanceOf(Date);
    expect(fetcher.lastGood()?.revision).toBe(sha);
    expect(readFileSync(path.join(fetcher.lastGood()!.dir, "app.yaml"), "utf8")).toBe("one\n");
  });

  it("fails with a clear error for a ref that does not exist", async () => {
    const repo = newRepo();
    commitFile(repo, "app.yaml", "one\n");
    const fetcher = new ConfigRepoFetcher({ repo, ref: "no-such-branch", workDir: tempDir(), env: GIT_ENV });
    await expect(fetcher.fetch()).rejects.toThrow(/no-such-branch/);
  });

  it("never puts the token in an error message", async () => {
    const token = "ghs_canarySECRET0123456789";
    // Port 9 (discard) on loopback refuses the connection at once.
    const fetcher = new ConfigRepoFetcher({
      repo: "http://127.0.0.1:9/acme/config.git",
      token,
      workDir: tempDir(),
      env: GIT_ENV,
      timeoutMs: 20_000,
    });
    const error = (await fetcher.fetch().catch((caught: unknown) => caught)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error.message).not.toContain(token);
    expect(error.message).not.toContain(Buffer.from(`x-access-token:${token}`).toString("base64"));
  });
});

describe("ConfigRepoFetcher input checks", () => {
  it("refuses refs that could smuggle options or extra refspecs into git", () => {
    for (const ref of [
      "--upload-pack=touch /tmp/x",
      "main:refs/heads/evil",
      "+main",
      "refs/*",
      "a..b",
      "main.lock",
      "",
    ]) {
      expect(() => new ConfigRepoFetcher({ repo: "/tmp/x", ref, workDir: "/tmp/y" }), ref).toThrow(
        /invalid --ref/,
      );
    }
  });

  it("accepts branches, nested branch names, tags and SHAs", () => {
    for (const ref of [
      "main",
      "release/1.8",
      "v1.8.0",
      "0123456789abcdef0123456789abcdef01234567",
      "refs/heads/main",
    ]) {
      expect(() => new ConfigRepoFetcher({ repo: "/tmp/x", ref, workDir: "/tmp/y" }), ref).not.toThrow();
    }
  });

  it("refuses transports other than https, http, ssh, git, file and paths", () => {
    expect(() => new ConfigRepoFetcher({ repo: "ftp://example.com/repo.git", workDir: "/tmp/y" })).toThrow(
      /unsupported config repo URL scheme/,
    );
  });

  it("treats ext:: transports as a plain (non-existent) path, never as a command", async () => {
    const fetcher = new ConfigRepoFetcher({
      repo: "ext::sh -c touch% /tmp/ferry-pwned",
      workDir: tempDir(),
      env: GIT_ENV,
    });
    await expect(fetcher.fetch()).rejects.toThrow(/git fetch failed/);
    expect(existsSync("/tmp/ferry-pwned")).toBe(false);
  });
});

describe("ConfigRepoFetcher credentials", () => {
  it("passes the token to git only through the child's environment, scoped to the repo's origin", async () => {
    const dir = tempDir();
    const record = path.join(dir, "record.txt");
    const fakeGit = path.join(dir, "fake-git.sh");
    writeFileSync(
      fakeGit,
      `#!/bin/sh\nprintf 'ARGV %s\\n' "$*" >> "${record}"\nenv | grep '^GIT_CONFIG_' >> "${record}"\n[ "$1" = init ] && exit 0\nexit 1\n`,
      { mode: 0o755 },
    );
    const token = "ghs_canaryTOKEN9876543210";
    const fetcher = new ConfigRepoFetcher({
      repo: "https://git.example.com/acme/config.git",
      token,
      workDir: path.join(dir, "work"),
      env: GIT_ENV,
      git: fakeGit,
    });
    await expect(fetcher.fetch()).rejects.toThrow();
    const recorded = readFileSync(record, "utf8");
    const argvLines = recorded.split("\n").filter((line) => line.startsWith("ARGV"));
    expect(
      argvLines.some(
        (line) => line.includes(" fetch ") && line.includes("https://git.example.com/acme/config.git"),
      ),
    ).toBe(true);
    expect(argvLines.join("\n")).not.toContain(token);
    expect(recorded).not.toContain(token); // not even in plain text in the environment
    expect(recorded).toContain("GIT_CONFIG_KEY_0=http.https://git.example.com/.extraHeader");
    expect(recorded).toContain(
      `GIT_CONFIG_VALUE_0=Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`,
    );
  });
});
