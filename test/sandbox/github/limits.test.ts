/**
 * GitHub's limits on what one request may carry or list, as github.com answers them:
 * - an issue or pull request title over 256 characters: 422 "title is too long (maximum is 256
 *   characters)", resource `Issue` (https://github.com/googleapis/repo-automation-bots/issues/1895,
 *   https://github.com/rustsec/rustsec/pull/1445);
 * - a check run's `output.summary` or `output.text`: "Maximum length: 65535 characters", and "a
 *   maximum of 50 annotations" a request, more through further updates
 *   (https://docs.github.com/en/rest/checks/runs#create-a-check-run); the refusals' wording from
 *   https://github.com/zyborg/dotnet-tests-report/issues/9 and https://github.com/github/docs/issues/35252;
 * - check runs and commit statuses: "per_page … max 100", with `total_count` and Link headers
 *   (https://docs.github.com/en/rest/checks/runs#list-check-runs-for-a-git-reference,
 *   https://docs.github.com/en/rest/commits/statuses#get-the-combined-status-for-a-specific-reference);
 * - a pull request's files: 100 a page at most (and "a maximum of 3000 files" in all)
 *   (https://docs.github.com/en/rest/pulls/pulls#list-pull-requests-files);
 * - the contents API's `ref` is "The name of the commit/branch/tag"
 *   (https://docs.github.com/en/rest/repos/contents#get-repository-content): the emulator keeps to
 *   that and answers a ref of another namespace 404, so a client reads such a ref's commit through
 *   `GET /git/ref/…` and the file at that SHA.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectStatus, installApp, startWorld, type World } from "../../support/github-emulator-world.js";
import { actAs, inspect } from "../../../packages/sandbox/src/github/index.js";

/** The status and `errors` of a refused request. */
async function refusal(request: Promise<unknown>): Promise<{ status?: number; errors?: unknown }> {
  try {
    await request;
  } catch (error) {
    const e = error as { status?: number; response?: { data?: { errors?: unknown } } };
    return { status: e.status, errors: e.response?.data?.errors };
  }
  throw new Error("expected a refusal, but the call succeeded");
}

const owner = "acme";
const repo = "config";

describe("GitHub's limits on one request", () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.emu.close();
  });

  it("refuses issue and pull request titles over 256 characters, on create and on update", async () => {
    const mona = world.as("mona");
    const long = "t".repeat(257);
    const expectTooLong = async (request: Promise<unknown>) => {
      expect(await refusal(request)).toMatchObject({
        status: 422,
        errors: [
          { resource: "Issue", field: "title", message: "title is too long (maximum is 256 characters)" },
        ],
      });
    };
    await expectTooLong(mona.rest.issues.create({ owner, repo, title: long }));
    const { data: issue } = await mona.rest.issues.create({ owner, repo, title: "t".repeat(256) });
    await expectTooLong(mona.rest.issues.update({ owner, repo, issue_number: issue.number, title: long }));
    await actAs.createBranch(world.emu, owner, repo, "topic", "main");
    await actAs.commit(world.emu, owner, repo, "topic", { "a.txt": "a\n" }, "a", { as: "mona" });
    await expectTooLong(mona.rest.pulls.create({ owner, repo, head: "topic", base: "main", title: long }));
    const { data: pull } = await mona.rest.pulls.create({
      owner,
      repo,
      head: "topic",
      base: "main",
      title: "x",
    });
    await expectTooLong(mona.rest.pulls.update({ owner, repo, pull_number: pull.number, title: long }));
    expect((await mona.rest.pulls.get({ owner, repo, pull_number: pull.number })).data.title).toBe("x");
  });

  it("refuses a check run summary or text over 65,535 characters or bytes, and more than 50 annotations a request", async () => {
    const { installation } = await installApp(world);
    const head_sha = (await inspect.branchSha(world.emu, owner, repo, "main"))!;
    const run = (output: { summary: string; text?: string; annotations?: unknown[] }) =>
      installation.rest.checks.create({
        owner,
        repo,
        name: "limits",
        head_sha,
        status: "completed",
        conclusion: "neutral",
        output: { title: "t", ...output } as never,
      });
    const tooMany = await expectStatus(run({ summary: "x".repeat(65_536) }), 422);
    expect(tooMany.message).toContain("Only 65535 characters are allowed; 65536 were supplied.");
    await expectStatus(run({ summary: "ok", text: "x".repeat(65_536) }), 422);
    // 30,000 characters of two bytes each: within the characters, over the bytes.
    expect(await refusal(run({ summary: "é".repeat(33_000) }))).toMatchObject({
      status: 422,
      errors: [
        { resource: "CheckRun", field: "summary", message: "summary exceeds a maximum bytesize of 65535" },
      ],
    });
    const annotation = { path: "a", start_line: 1, end_line: 1, annotation_level: "warning", message: "m" };
    const fifty = Array.from({ length: 50 }, () => annotation);
    await expectStatus(run({ summary: "ok", annotations: [...fifty, annotation] }), 422);
    const { data: created } = await run({ summary: "x".repeat(65_535), annotations: fifty });
    // Further annotations come through updates of the run, 50 at a time, and add up.
    await installation.rest.checks.update({
      owner,
      repo,
      check_run_id: created.id,
      output: { title: "t", summary: "ok", annotations: fifty } as never,
    });
    const annotations = await installation.paginate(installation.rest.checks.listAnnotations, {
      owner,
      repo,
      check_run_id: created.id,
      per_page: 100,
    });
    expect(annotations).toHaveLength(100);
  });

  it("lists check runs and statuses 100 a page at most, with total_count and a Link to the next page", async () => {
    const head = (await inspect.branchSha(world.emu, owner, repo, "main"))!;
    for (let i = 0; i < 120; i++) {
      await actAs.completeWorkflowRun(world.emu, owner, repo, head, "success", { name: `job-${i}` });
      actAs.setStatus(world.emu, owner, repo, head, { state: "success", context: `ci-${i}` });
    }
    const mona = world.as("mona");
    const runs = await mona.rest.checks.listForRef({ owner, repo, ref: head, per_page: 500 });
    expect([runs.data.total_count, runs.data.check_runs.length]).toEqual([120, 100]);
    expect(runs.headers.link).toMatch(/page=2>; rel="next"/);
    const second = await mona.rest.checks.listForRef({ owner, repo, ref: head, per_page: 100, page: 2 });
    expect(second.data.check_runs.map((run) => run.name)).toContain("job-0");
    const combined = await mona.rest.repos.getCombinedStatusForRef({ owner, repo, ref: head, per_page: 100 });
    expect([combined.data.total_count, combined.data.statuses.length]).toEqual([120, 100]);
    expect(combined.headers.link).toMatch(/page=2>; rel="next"/);
  });

  it("reads contents at a branch, tag or SHA, and answers 404 for a ref of another namespace", async () => {
    const hubot = world.as("hubot");
    const tree = await hubot.rest.git.createTree({
      owner,
      repo,
      tree: [{ path: "state.json", mode: "100644", type: "blob", content: "{}\n" }],
    });
    const commit = await hubot.rest.git.createCommit({
      owner,
      repo,
      message: "s",
      tree: tree.data.sha,
      parents: [],
    });
    await hubot.rest.git.createRef({ owner, repo, ref: "refs/ferry/state", sha: commit.data.sha });
    for (const ref of ["refs/ferry/state", "ferry/state"]) {
      const { message } = await expectStatus(
        hubot.rest.repos.getContent({ owner, repo, path: "state.json", ref }),
        404,
      );
      expect(message).toBe(`No commit found for the ref ${ref}`);
    }
    const { data: at } = await hubot.rest.git.getRef({ owner, repo, ref: "ferry/state" });
    const { data } = await hubot.rest.repos.getContent({
      owner,
      repo,
      path: "state.json",
      ref: at.object.sha,
    });
    expect(Buffer.from((data as { content: string }).content, "base64").toString("utf8")).toBe("{}\n");
    for (const ref of ["main", "refs/heads/main"])
      await hubot.rest.repos.getContent({ owner, repo, path: "README.md", ref });
  });

  it("lists a pull request's files 100 a page at most", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 150; i++) files[`many/f${i}.txt`] = `${i}\n`;
    await actAs.createBranch(world.emu, owner, repo, "many", "main");
    await actAs.commit(world.emu, owner, repo, "many", files, "many files", { as: "mona" });
    const mona = world.as("mona");
    const { data: pull } = await mona.rest.pulls.create({
      owner,
      repo,
      head: "many",
      base: "main",
      title: "many",
    });
    const first = await mona.rest.pulls.listFiles({ owner, repo, pull_number: pull.number, per_page: 300 });
    expect(first.data).toHaveLength(100);
    const listed = await mona.paginate(mona.rest.pulls.listFiles, {
      owner,
      repo,
      pull_number: pull.number,
      per_page: 100,
    });
    expect(listed).toHaveLength(150);
  });
});
