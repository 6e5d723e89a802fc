/**
 * A kept sandbox (`ferry sandbox --keep`) hands out a repository admin's token (`octocat`) beside
 * mona's, hubot's and eve's, so a user reproduces their organisation's settings on it with the
 * API they use on GitHub: here a real `curl -X PATCH /repos/{owner}/{repo}`
 * (https://docs.github.com/en/rest/repos/repos#update-a-repository) and `curl -X PUT
 * /branches/{b}/protection`, which a maintainer (mona) is refused.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandboxWorld, type SandboxWorld } from "../../../packages/sandbox/src/story/sandbox-world.js";
import { endpointsOf } from "../../../packages/sandbox/src/story/run-sandbox-story.js";
import { CONFIG_REPO, OWNER } from "../../../packages/sandbox/src/story/story-repos.js";
import { formatEndpoints } from "../../../packages/sandbox/src/story/timeline.js";

const run = promisify(execFile);
let world: SandboxWorld;

beforeAll(async () => {
  world = await startSandboxWorld({ log: () => undefined });
});
afterAll(async () => {
  await world?.close();
});

/** `curl -X <method>` as the README shows it; answers the HTTP status and the parsed body. */
async function curl(method: string, path: string, token: string, body: unknown) {
  const { stdout } = await run("curl", [
    "-s",
    "-X",
    method,
    "-H",
    `Authorization: token ${token}`,
    "-H",
    "Accept: application/vnd.github+json",
    "-d",
    JSON.stringify(body),
    "-w",
    "\n%{http_code}",
    `${world.emu.apiUrl}${path}`,
  ]);
  const lines = stdout.trimEnd().split("\n");
  const status = Number(lines.pop());
  return { status, body: JSON.parse(lines.join("\n") || "null") as Record<string, unknown> };
}

describe("the kept sandbox's repository settings", () => {
  it("prints octocat's token beside mona's, hubot's and eve's", () => {
    const printed = formatEndpoints(endpointsOf(world));
    for (const user of ["mona", "hubot", "eve", "octocat"] as const)
      expect(printed).toMatch(new RegExp(`^token ${user} +${world.users[user].token}$`, "m"));
  });

  it("octocat changes merge methods, auto-merge and branch deletion with curl -X PATCH; mona is refused", async () => {
    const path = `/repos/${OWNER}/${CONFIG_REPO}`;
    const refused = await curl("PATCH", path, world.users.mona.token, { allow_merge_commit: false });
    expect(refused).toEqual({
      status: 403,
      body: expect.objectContaining({ message: "Must have admin rights to Repository." }),
    });
    const changed = await curl("PATCH", path, world.users.octocat.token, {
      allow_merge_commit: false,
      allow_rebase_merge: false,
      allow_squash_merge: true,
      allow_auto_merge: false,
      delete_branch_on_merge: true,
    });
    expect(changed.status).toBe(200);
    const { data } = await world.as.mona.rest.repos.get({ owner: OWNER, repo: CONFIG_REPO });
    expect(data).toMatchObject({
      allow_merge_commit: false,
      allow_rebase_merge: false,
      allow_squash_merge: true,
      allow_auto_merge: false,
      delete_branch_on_merge: true,
    });
  });

  it("octocat protects main with curl -X PUT /branches/main/protection", async () => {
    const path = `/repos/${OWNER}/${CONFIG_REPO}/branches/main/protection`;
    const protection = {
      required_status_checks: { strict: false, contexts: ["ci"] },
      enforce_admins: true,
      required_pull_request_reviews: { required_approving_review_count: 1 },
      restrictions: null,
    };
    expect((await curl("PUT", path, world.users.mona.token, protection)).status).toBe(403);
    const answer = await curl("PUT", path, world.users.octocat.token, protection);
    expect(answer.status).toBe(200);
    expect(answer.body.required_status_checks).toMatchObject({ contexts: ["ci"] });
  });
});
