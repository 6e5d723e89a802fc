import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import { captureIo } from "../support/cli-io.js";

const CONFIG = `images:\n  shop:\n    repository: ghcr.io/acme/shop\nenvironments:\n  staging:\n    paths: [overlays/staging]\n  prod:\n    paths: [overlays/prod]\n    from: staging\n`;
const overlay = (tag: string) => `images:\n  - name: ghcr.io/acme/shop\n    newTag: "${tag}"\n`;

let dir: string;
function commit(files: Record<string, string>, message: string, date: string, author = "mona"): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: author,
    GIT_AUTHOR_EMAIL: `${author}@example.com`,
    GIT_COMMITTER_NAME: author,
    GIT_COMMITTER_EMAIL: `${author}@example.com`,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
  };
  execFileSync("git", ["-C", dir, "add", "-A"], { env });
  execFileSync("git", ["-C", dir, "commit", "-q", "-m", message], { env });
}

async function ferry(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo(dir, { now: () => new Date(0) });
  return { code: await main(args, io), out: io.out, err: io.err };
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "ferry-history-"));
  execFileSync("git", ["-C", dir, "init", "-q", "-b", "main"]);
  commit(
    {
      ".github/ferry.yml": CONFIG,
      "overlays/staging/k.yaml": overlay("1.7.0"),
      "overlays/prod/k.yaml": overlay("1.7.0"),
    },
    "Initial config",
    "2026-03-01T10:00:00Z",
  );
  commit(
    { "overlays/prod/k.yaml": overlay("1.8.0") },
    "Merge pull request #4 from acme/ferry/prod\n\nPromote shop 1.8.0 to prod",
    "2026-03-05T12:00:00Z",
  );
  commit({ "README.md": "unrelated\n" }, "Docs", "2026-03-06T12:00:00Z", "hubot");
  commit({ "overlays/prod/k.yaml": overlay("1.8.1") }, "Bump prod by hand", "2026-03-08T09:00:00Z", "hubot");
  commit({ "overlays/prod/k.yaml": overlay("1.8.0") }, 'Revert "Bump prod by hand"', "2026-03-09T09:00:00Z");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("ferry history", () => {
  it("lists what ran in prod over time from git: the promotion PR and who merged, a hand edit, a revert", async () => {
    const result = await ferry("history", "--dir", ".", "prod");
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
    expect(result.out.split("\n")[0]).toBe("History of prod, newest first:");
    const lines = result.out.trim().split("\n").slice(2);
    expect(lines.map((line) => line.replace(/ [0-9a-f]{7}/, " SHA"))).toEqual([
      "- 2026-03-09T09:00:00.000Z shop: 1.8.1 → 1.8.0, revert SHA by mona",
      "- 2026-03-08T09:00:00.000Z shop: 1.8.0 → 1.8.1, edit SHA by hubot",
      "- 2026-03-05T12:00:00.000Z shop: 1.7.0 → 1.8.0, promotion SHA #4 by mona",
      "- 2026-03-01T10:00:00.000Z shop: 1.7.0, edit SHA by mona",
    ]);
  });

  it("reads a config that names registry secrets without their bindings: history sends no secret", async () => {
    commit(
      {
        ".github/ferry.yml": `${CONFIG}registries:\n  ghcr.io: { username: u, passwordEnv: FERRY_REGISTRY_GHCR_TOKEN }\n`,
      },
      "Private GHCR",
      "2026-03-10T09:00:00Z",
    );
    const result = await ferry("history", "--dir", ".", "prod");
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
  });

  it("answers what ran at a moment, and says where it stopped when the commit bound cuts the history", async () => {
    const at = await ferry("history", "--dir", ".", "prod", "shop", "--at", "2026-03-08T12:00Z");
    expect(at.out).toMatch(
      /^What ran in prod at 2026-03-08T12:00:00.000Z:\n\n- shop: 1\.8\.1 since 2026-03-08T09:00:00.000Z, edit [0-9a-f]{7} by hubot\n$/,
    );
    const bounded = await ferry("history", "--dir", ".", "prod", "--max-commits", "2");
    expect(bounded.out).toMatch(
      /Stopped after 2 commits, at [0-9a-f]{7} \(2026-03-08T09:00:00.000Z\); earlier history was not read\./,
    );
    expect(bounded.out).not.toContain("1.7.0");
  });

  it("refuses a date it cannot read and an unknown environment, in one line", async () => {
    const badDate = await ferry("history", "--dir", ".", "prod", "--at", "last tuesday");
    expect(badDate.code).toBe(2);
    expect(badDate.err).toMatch(/--at needs an ISO date/);
    const unknown = await ferry("history", "--dir", ".", "qa");
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/unknown environment "qa"/);
  });

  it("says in its help that it answers from git alone, without the reconciler's Deployment statuses", async () => {
    const help = await ferry("history", "--help");
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/git history alone .* no GitHub access/s);
  });
});
