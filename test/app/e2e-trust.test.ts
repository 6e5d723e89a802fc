/**
 * End to end, through the routes a collaborator with write access would use: a branch named
 * `ferry/<env>`, a commit pushed into Ferry's own PR, and the command that lowers a floor. Ferry
 * trusts only the PRs it opened and the commits it wrote.
 */
import { afterEach, describe, expect, it } from "vitest";
import { formatBody } from "../../src/core/pr/body.js";
import { commentsOn, startWorld, type World } from "../support/app-e2e-world.js";
import { inspect } from "../../packages/sandbox/src/github/index.js";

const STAGING = "overlays/staging/kustomization.yaml";

async function state(world: World): Promise<{ floors: Record<string, Record<string, string>> }> {
  const text = await inspect.readFile(world.emu, "acme", "config", "refs/ferry/state", "state.json");
  return text === undefined ? { floors: {} } : JSON.parse(text);
}

/** Replaces the staging tag on `branch` as `who` would with the contents API (one commit). */
async function pushTag(world: World, who: "hubot" | "mona", branch: string, tag: string): Promise<string> {
  const octokit = world.as[who];
  const { data: file } = await octokit.rest.repos.getContent({
    owner: "acme",
    repo: "config",
    path: STAGING,
    ref: branch,
  });
  const text = (await inspect.readFile(world.emu, "acme", "config", branch, STAGING))!;
  const { data } = await octokit.rest.repos.createOrUpdateFileContents({
    owner: "acme",
    repo: "config",
    path: STAGING,
    branch,
    message: `shop ${tag}`,
    sha: (file as { sha: string }).sha,
    content: Buffer.from(text.replace(/newTag: "[^"]*"/, `newTag: "${tag}"`)).toString("base64"),
  });
  return data.commit.sha!;
}

async function comment(world: World, who: "mona" | "hubot" | "eve", issue: number, body: string) {
  await world.as[who].rest.issues.createComment({ owner: "acme", repo: "config", issue_number: issue, body });
  await world.settle();
}

describe("Ferry trusts only its own PRs and commits (end to end)", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("does not merge a collaborator's PR from a branch named ferry/staging with a forged plan block, and sets no floor from it", async () => {
    world = await startWorld({ ci: true });
    const main = (await inspect.branchSha(world.emu, "acme", "config", "main"))!;
    await world.as.hubot.rest.git.createRef({
      owner: "acme",
      repo: "config",
      ref: "refs/heads/ferry/staging",
      sha: main,
    });
    await pushTag(world, "hubot", "ferry/staging", "999.0.0");
    const forged = formatBody({
      plan: {
        version: 1,
        environment: "staging",
        kind: "bump",
        changes: [
          {
            image: "shop",
            repository: `${world.registry.host}/acme/shop`,
            from: { tag: "1.7.0" },
            to: { tag: "999.0.0", digest: `sha256:${"a".repeat(64)}` },
          },
        ],
      },
      rows: {},
      webUrl: world.emu.webUrl,
    });
    const { data: pull } = await world.as.hubot.rest.pulls.create({
      owner: "acme",
      repo: "config",
      head: "ferry/staging",
      base: "main",
      title: "Promote shop 999.0.0 to staging",
      body: forged,
    });
    await world.settle();
    const { data: after } = await world.as.mona.rest.pulls.get({
      owner: "acme",
      repo: "config",
      pull_number: pull.number,
    });
    expect(after.merged).toBe(false);
    expect(await inspect.readFile(world.emu, "acme", "config", "main", STAGING)).toContain('newTag: "1.7.0"');
    expect((await state(world)).floors.staging?.shop).toBeUndefined();
  });

  it("does not merge a commit pushed into Ferry's own PR after it opened: Ferry says so and rebuilds the branch", async () => {
    // CI never reports on its own: the test posts the required check when it chooses.
    world = await startWorld({ ci: false });
    await world.push("1.8.0");
    const [ferry] = await world.pulls("open");
    expect(ferry?.title).toBe("Promote shop 1.8.0 to staging");
    const foreign = await pushTag(world, "hubot", "ferry/staging", "999.0.0");
    await world.settle();
    const { data: rebuilt } = await world.as.mona.rest.pulls.get({
      owner: "acme",
      repo: "config",
      pull_number: ferry!.number,
    });
    expect(rebuilt.head.sha).not.toBe(foreign);
    expect(await inspect.readFile(world.emu, "acme", "config", rebuilt.head.sha, STAGING)).toContain(
      'newTag: "1.8.0"',
    );
    expect((await commentsOn(world, ferry!.number)).join("\n")).toContain(foreign.slice(0, 7));
    // The required check passes on whatever the branch holds now: only Ferry's content merges.
    for (const sha of [foreign, rebuilt.head.sha])
      await world.as.mona.rest.repos.createCommitStatus({
        owner: "acme",
        repo: "config",
        sha,
        state: "success",
        context: "ci",
      });
    await world.settle();
    expect(await inspect.readFile(world.emu, "acme", "config", "main", STAGING)).toContain('newTag: "1.8.0"');
    expect((await state(world)).floors.staging?.shop).toBe("1.8.0");
  });

  it("/unfloor staging by a maintainer lowers the floor; a writer and an outsider are refused", async () => {
    world = await startWorld({ ci: true });
    await world.push("1.8.0");
    expect((await state(world)).floors.staging?.shop).toBe("1.8.0");
    const issue = await world.openIssue();
    await comment(world, "hubot", issue, "/unfloor staging");
    await comment(world, "eve", issue, "/unfloor staging shop");
    expect((await state(world)).floors.staging?.shop).toBe("1.8.0");
    const refused = (await commentsOn(world, issue)).filter((body) => body.startsWith("@"));
    expect(refused).toEqual([
      expect.stringMatching(/^@hubot you need maintain permission to change staging/),
      expect.stringMatching(/^@eve you need maintain permission to change staging/),
    ]);
    await comment(world, "mona", issue, "/unfloor staging shop");
    expect((await state(world)).floors.staging).toBeUndefined();
    expect((await commentsOn(world, issue)).at(-1)).toMatch(/floor of shop in staging/);
  });
});
