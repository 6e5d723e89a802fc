/** Read-only test helpers of the GitHub emulator: files, branches, pull requests and comments as they stand. */
import type { GitHubEmulator } from "./emulator.js";
import { computePull, type PullView } from "./pull-logic.js";

export type PullFilter = { state?: "open" | "closed" | "all"; head?: string };

/** The file's text at `ref`, or undefined when it does not exist. */
export async function readFile(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  ref: string,
  path: string,
): Promise<string | undefined> {
  const r = emu.repo(owner, repo);
  const sha = await r.git.resolveCommit(ref);
  if (!sha) return undefined;
  const entry = await r.git.entryAt((await r.git.readCommit(sha)).tree, path);
  if (entry?.type !== "blob") return undefined;
  return (await r.git.readBlob(entry.sha)).toString("utf8");
}

/** Every file path at `ref` (under `dir` when given), sorted. */
export async function listFiles(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  ref: string,
  dir = "",
): Promise<string[]> {
  const r = emu.repo(owner, repo);
  const sha = await r.git.resolveCommit(ref);
  if (!sha) return [];
  const entries = await r.git.listTree((await r.git.readCommit(sha)).tree, true);
  const prefix = dir ? `${dir.replace(/\/+$/, "")}/` : "";
  return entries
    .filter((e) => e.type === "blob" && e.path.startsWith(prefix))
    .map((e) => e.path)
    .sort();
}

export async function branchSha(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  branch: string,
): Promise<string | undefined> {
  return emu.repo(owner, repo).git.readRef(`refs/heads/${branch}`);
}

/** The pull request as `GET /pulls/{n}` answers it. */
export async function getPull(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  number: number,
): Promise<PullView["body"]> {
  const r = emu.repo(owner, repo);
  const issue = r.issues.get(number);
  if (!issue?.pull) throw new Error(`no pull request #${number}`);
  return (await computePull(emu, r, issue)).body;
}

/** Pull requests in `repo` (JSON as `GET /pulls/{n}`), optionally filtered. */
export async function listPulls(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  filter: PullFilter = {},
): Promise<PullView["body"][]> {
  const r = emu.repo(owner, repo);
  const result = [];
  for (const issue of r.issues.values()) {
    if (!issue.pull) continue;
    if ((filter.state ?? "all") !== "all" && issue.state !== filter.state) continue;
    if (filter.head && issue.pull.headRef !== filter.head) continue;
    result.push((await computePull(emu, r, issue)).body);
  }
  return result;
}

/** Comments on an issue or PR, oldest first. */
export function listComments(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  number: number,
): { id: number; user: string; body: string; reactions: string[] }[] {
  const r = emu.repo(owner, repo);
  return [...r.comments.values()]
    .filter((x) => x.issueNumber === number && !x.deleted)
    .map((x) => ({
      id: x.id,
      user: x.user,
      body: x.body,
      reactions: x.reactions.map((y) => `${y.user}:${y.content}`),
    }));
}
