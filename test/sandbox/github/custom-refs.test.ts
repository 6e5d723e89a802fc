/**
 * Refs outside refs/heads (Ferry keeps its holds on `refs/ferry/state`): GitHub creates them with
 * `POST /git/refs`, moves them only by fast-forward without `force`. The contents API takes only a
 * branch, tag or SHA as `ref` (https://docs.github.com/en/rest/repos/contents#get-repository-content),
 * so a file there is read at the SHA `GET /git/ref/…` gives. A commit there need not share history
 * with any branch.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectStatus, startWorld, type World } from "../../support/github-emulator-world.js";
import { inspect } from "../../../packages/sandbox/src/github/index.js";

const STATE_REF = "refs/ferry/state";

describe("a ref outside refs/heads", () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.emu.close();
  });

  /** A root-or-child commit holding only state.json, as a state writer makes it (inline content, no base tree). */
  async function stateCommit(content: string, parents: string[]): Promise<string> {
    const octokit = world.as("hubot");
    const r = { owner: "acme", repo: "config" };
    const tree = await octokit.rest.git.createTree({
      ...r,
      tree: [{ path: "state.json", mode: "100644", type: "blob", content }],
    });
    const commit = await octokit.rest.git.createCommit({
      ...r,
      message: "state",
      tree: tree.data.sha,
      parents,
    });
    return commit.data.sha;
  }

  it("is created by POST /git/refs and its file is readable through the contents API at the SHA it points at", async () => {
    const octokit = world.as("hubot");
    const first = await stateCommit('{"version":1}\n', []);
    const created = await octokit.rest.git.createRef({
      owner: "acme",
      repo: "config",
      ref: STATE_REF,
      sha: first,
    });
    expect(created.data.ref).toBe(STATE_REF);
    const ref = await octokit.rest.git.getRef({ owner: "acme", repo: "config", ref: "ferry/state" });
    expect(ref.data.object.sha).toBe(first);
    const { data } = await octokit.rest.repos.getContent({
      owner: "acme",
      repo: "config",
      path: "state.json",
      ref: ref.data.object.sha,
    });
    expect(Buffer.from((data as { content: string }).content, "base64").toString("utf8")).toBe(
      '{"version":1}\n',
    );
  });

  it("answers 422 'Reference already exists' to a second POST of the same ref", async () => {
    const octokit = world.as("hubot");
    const first = await stateCommit("a\n", []);
    await octokit.rest.git.createRef({ owner: "acme", repo: "config", ref: STATE_REF, sha: first });
    const second = await stateCommit("b\n", []);
    const { message } = await expectStatus(
      octokit.rest.git.createRef({ owner: "acme", repo: "config", ref: STATE_REF, sha: second }),
      422,
    );
    expect(message).toMatch(/already exists/i);
  });

  it("moves by fast-forward and refuses, with 422, a commit whose parent is no longer the ref's head", async () => {
    const octokit = world.as("hubot");
    const r = { owner: "acme", repo: "config", ref: "ferry/state" };
    const base = await stateCommit("base\n", []);
    await octokit.rest.git.createRef({ owner: "acme", repo: "config", ref: STATE_REF, sha: base });
    const winner = await stateCommit("winner\n", [base]);
    const loser = await stateCommit("loser\n", [base]);
    await octokit.rest.git.updateRef({ ...r, sha: winner, force: false });
    const { message } = await expectStatus(
      octokit.rest.git.updateRef({ ...r, sha: loser, force: false }),
      422,
    );
    expect(message).toMatch(/fast forward/i);
    expect(await inspect.readFile(world.emu, "acme", "config", STATE_REF, "state.json")).toBe("winner\n");
  });
});
