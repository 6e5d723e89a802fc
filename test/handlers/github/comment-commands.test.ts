/**
 * Comment commands through the real route: comments created in the GitHub emulator, delivered as
 * signed webhooks to Ferry's server, answered with reactions and replies the emulator records.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startWorld, type World } from "../../support/app-e2e-world.js";

describe("comment commands through GitHub", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  const comment = async (as: "mona" | "eve", issue: number, body: string) =>
    (
      await world.as[as].rest.issues.createComment({
        owner: "acme",
        repo: "config",
        issue_number: issue,
        body,
      })
    ).data;

  const reactionsOn = async (commentId: number) =>
    (
      await world.as.mona.rest.reactions.listForIssueComment({
        owner: "acme",
        repo: "config",
        comment_id: commentId,
      })
    ).data.map((reaction) => reaction.content);

  const repliesOn = async (issue: number) =>
    (
      await world.as.mona.rest.issues.listComments({
        owner: "acme",
        repo: "config",
        issue_number: issue,
        per_page: 100,
      })
    ).data.filter((c) => c.user?.login === "ferry[bot]");

  it("costs a bounded number of GitHub requests and replies when a non-maintainer posts 200 /promote prod comments, and still serves a maintainer", async () => {
    world = await startWorld({ ci: false });
    const issue = await world.openIssue();
    await world.settle();
    world.onlyEvents(["issue_comment"]);
    const start = world.emu.requests().length;
    for (let i = 0; i < 200; i++) await comment("eve", issue, "/promote prod");
    await world.settle();
    const requests = world.appRequests(start);
    // At most five refusals (👀, the config read, 👎 and a reply each; one permission lookup in
    // all) and one last reply; without the guard it is about five requests per comment.
    expect(requests.length).toBeLessThanOrEqual(5 * 8 + 1);
    const replies = await repliesOn(issue);
    expect(replies.length).toBeLessThanOrEqual(6);
    expect(
      replies.filter((reply) =>
        /^@eve too many commands: further commands from you in acme\/config are ignored for 10 minutes\.$/.test(
          reply.body ?? "",
        ),
      ),
    ).toHaveLength(1);
    expect(requests.filter((r) => r.path.includes("/collaborators/eve/permission"))).toHaveLength(1);

    const hold = await comment("mona", issue, "/hold staging");
    await world.settle();
    expect((await reactionsOn(hold.id)).sort()).toEqual(["eyes", "rocket"]);
  });

  it("takes no command from code, HTML comments or quotes in a comment, and does take one from its paragraph text", async () => {
    world = await startWorld({ ci: false });
    const issue = await world.openIssue();
    await world.settle();
    world.onlyEvents(["issue_comment"]);
    const hiddenForms = [
      "````\n```\n/hold prod\n````",
      "~~~\n/hold prod\n~~~",
      "Later, maybe:\n\n    /hold prod",
      "<!--\n/hold prod\n-->",
      "> someone said\n/hold prod",
    ];
    const start = world.emu.requests().length;
    const hidden = [];
    for (const body of hiddenForms) hidden.push(await comment("mona", issue, body));
    await world.settle();
    for (const c of hidden) expect(await reactionsOn(c.id), c.body).toEqual([]);
    expect(world.appRequests(start)).toEqual([]);

    const shown = await comment("mona", issue, "> should we stop prod?\n\nYes:\n/hold prod");
    await world.settle();
    expect((await reactionsOn(shown.id)).sort()).toEqual(["eyes", "rocket"]);
  });
});
