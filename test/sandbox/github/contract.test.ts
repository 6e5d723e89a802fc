/**
 * Contract tests: every response the emulator serves in a broad scenario is validated
 * against the api.github.com OpenAPI description, and every webhook it sends against
 * @octokit/webhooks-schemas.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  recordContract,
  startReceiver,
  validateWebhook,
  type CheckedResponse,
  type ContractFailure,
} from "../../support/github-contract-kit.js";
import { expectStatus, installApp, startWorld, type World } from "../../support/github-emulator-world.js";
import { actAs, repos } from "../../../packages/sandbox/src/github/index.js";

describe("the emulator's REST responses and webhook payloads match GitHub's published schemas", () => {
  let world: World;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const checked: CheckedResponse[] = [];
  const failures: ContractFailure[] = [];

  beforeAll(async () => {
    world = await startWorld();
    receiver = await startReceiver("s3cret");
    const { emu } = world;
    repos.createTeam(emu, "acme", "release", ["mona"]);
    repos.protectBranch(emu, "acme", "config", "main", { requiredChecks: ["ci/test"], requiredApprovals: 1 });
    repos.addRuleset(emu, "acme", "config", {
      name: "release",
      branches: ["release"],
      requiredChecks: ["ci/test"],
      mergeQueue: {},
    });
    const ferry = await installApp(world, { webhookUrl: receiver.url, webhookSecret: "s3cret" });
    const bot = ferry.installation;
    const mona = world.as("mona");
    const hubot = world.as("hubot");
    for (const client of [ferry.app, bot, mona, hubot]) recordContract(client, checked, failures);
    const owner = "acme";
    const repo = "config";

    await ferry.app.rest.apps.getAuthenticated();
    await ferry.app.rest.apps.listInstallations();
    await ferry.app.rest.apps.getInstallation({ installation_id: ferry.installationId });
    await ferry.app.rest.apps.getRepoInstallation({ owner, repo });
    await ferry.app.rest.apps.getOrgInstallation({ org: owner });
    await ferry.app.rest.apps.createInstallationAccessToken({
      installation_id: ferry.installationId,
      repositories: ["config"],
    });
    await bot.rest.apps.listReposAccessibleToInstallation();

    await bot.rest.repos.get({ owner, repo });
    // Repository settings, as an admin changes them (mona is admin here).
    await mona.rest.repos.update({ owner, repo, description: "GitOps config" });
    // Forks (https://docs.github.com/en/rest/repos/forks): a fork's repository carries parent and source.
    await hubot.rest.repos.createFork({ owner, repo });
    await hubot.rest.repos.listForks({ owner, repo });
    await hubot.rest.repos.get({ owner: "hubot", repo });
    await bot.rest.repos.getBranchRules({ owner, repo, branch: "release" });
    await bot.rest.repos.getBranchRules({ owner, repo, branch: "main" });
    // Rulesets over REST (https://docs.github.com/en/rest/repos/rules).
    const { data: ruleset } = await mona.rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "contract",
      enforcement: "evaluate",
      conditions: { ref_name: { include: ["refs/heads/nothing/**"], exclude: [] } },
      rules: [{ type: "creation" }],
    });
    await bot.rest.repos.getRepoRulesets({ owner, repo });
    await bot.rest.repos.getRepoRuleset({ owner, repo, ruleset_id: ruleset.id });
    await mona.rest.repos.updateRepoRuleset({ owner, repo, ruleset_id: ruleset.id, enforcement: "disabled" });
    await mona.rest.repos.deleteRepoRuleset({ owner, repo, ruleset_id: ruleset.id });
    await bot.rest.repos.getContent({ owner, repo, path: "overlays/staging/kustomization.yaml" });
    await bot.rest.repos.getContent({ owner, repo, path: "overlays" });
    await expectStatus(bot.rest.repos.getContent({ owner, repo, path: "missing.yaml" }), 404);
    const { data: mainRef } = await bot.rest.git.getRef({ owner, repo, ref: "heads/main" });
    const { data: mainCommit } = await bot.rest.git.getCommit({
      owner,
      repo,
      commit_sha: mainRef.object.sha,
    });
    const { data: blob } = await bot.rest.git.createBlob({
      owner,
      repo,
      content: "images:\n  - name: shop\n    newTag: 1.8.0\n",
    });
    await bot.rest.git.getBlob({ owner, repo, file_sha: blob.sha });
    const { data: tree } = await bot.rest.git.createTree({
      owner,
      repo,
      base_tree: mainCommit.tree.sha,
      tree: [{ path: "overlays/staging/kustomization.yaml", mode: "100644", type: "blob", sha: blob.sha }],
    });
    await bot.rest.git.getTree({ owner, repo, tree_sha: tree.sha, recursive: "true" });
    const { data: commit } = await bot.rest.git.createCommit({
      owner,
      repo,
      message: "Promote shop 1.8.0 to staging",
      tree: tree.sha,
      parents: [mainRef.object.sha],
    });
    await bot.rest.git.createRef({ owner, repo, ref: "refs/heads/ferry/staging", sha: commit.sha });
    await expectStatus(
      bot.rest.git.createRef({ owner, repo, ref: "refs/heads/ferry/staging", sha: commit.sha }),
      422,
    );
    await bot.rest.git.updateRef({ owner, repo, ref: "heads/ferry/staging", sha: commit.sha, force: true });
    await bot.rest.git.listMatchingRefs({ owner, repo, ref: "heads/ferry" });
    const { data: tag } = await bot.rest.git.createTag({
      owner,
      repo,
      tag: "v1",
      message: "v1",
      object: mainRef.object.sha,
      type: "commit",
    });
    await bot.rest.git.getTag({ owner, repo, tag_sha: tag.sha });
    await bot.rest.repos.getBranch({ owner, repo, branch: "main" });
    await bot.rest.repos.listBranches({ owner, repo });
    await bot.rest.repos.listCommits({ owner, repo, sha: "ferry/staging" });
    await bot.rest.repos.getCommit({ owner, repo, ref: commit.sha });
    await bot.rest.repos.compareCommitsWithBasehead({ owner, repo, basehead: "main...ferry/staging" });
    await bot.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: "mona" });
    await bot.rest.teams.getMembershipForUserInOrg({ org: owner, team_slug: "release", username: "mona" });

    const { data: pr } = await bot.rest.pulls.create({
      owner,
      repo,
      head: "ferry/staging",
      base: "main",
      title: "Promote shop 1.8.0 to staging",
      body: "body",
    });
    // The head contains the base: 202, and the branch stays where it is.
    await bot.rest.pulls.updateBranch({
      owner,
      repo,
      pull_number: pr.number,
      expected_head_sha: pr.head.sha,
    });
    await expectStatus(
      bot.rest.pulls.create({ owner, repo, head: "ferry/staging", base: "main", title: "again" }),
      422,
    );
    await bot.rest.pulls.list({ owner, repo, head: "acme:ferry/staging", state: "open" });
    await bot.rest.pulls.get({ owner, repo, pull_number: pr.number });
    await bot.rest.pulls.listFiles({ owner, repo, pull_number: pr.number });
    await bot.rest.pulls.listCommits({ owner, repo, pull_number: pr.number });
    await bot.rest.pulls.update({ owner, repo, pull_number: pr.number, body: "new body" });
    await bot.rest.pulls.requestReviewers({ owner, repo, pull_number: pr.number, reviewers: ["mona"] });
    // A team without access to the repository: 422, as on github.com.
    await expectStatus(
      bot.rest.pulls.requestReviewers({ owner, repo, pull_number: pr.number, team_reviewers: ["release"] }),
      422,
    );
    // Bodies over 65,536 characters: 422 "body is too long".
    await expectStatus(
      bot.rest.pulls.update({ owner, repo, pull_number: pr.number, body: "x".repeat(65_537) }),
      422,
    );
    await expectStatus(
      bot.rest.issues.createComment({ owner, repo, issue_number: pr.number, body: "x".repeat(65_537) }),
      422,
    );
    await bot.rest.issues.createLabel({ owner, repo, name: "ferry", color: "0e8a16" });
    await bot.rest.issues.listLabelsForRepo({ owner, repo });
    await bot.rest.issues.addLabels({
      owner,
      repo,
      issue_number: pr.number,
      labels: ["ferry", "env:staging"],
    });
    await bot.rest.issues.listLabelsOnIssue({ owner, repo, issue_number: pr.number });
    await bot.rest.issues.removeLabel({ owner, repo, issue_number: pr.number, name: "env:staging" });
    const { data: comment } = await bot.rest.issues.createComment({
      owner,
      repo,
      issue_number: pr.number,
      body: "hello",
    });
    await bot.rest.issues.getComment({ owner, repo, comment_id: comment.id });
    await bot.rest.issues.updateComment({ owner, repo, comment_id: comment.id, body: "hello again" });
    await bot.rest.issues.listComments({ owner, repo, issue_number: pr.number });
    await bot.rest.reactions.createForIssueComment({ owner, repo, comment_id: comment.id, content: "eyes" });
    await bot.rest.reactions.listForIssueComment({ owner, repo, comment_id: comment.id });
    const { data: thumbs } = await bot.rest.reactions.createForIssueComment({
      owner,
      repo,
      comment_id: comment.id,
      content: "+1",
    });
    await bot.rest.reactions.deleteForIssueComment({
      owner,
      repo,
      comment_id: comment.id,
      reaction_id: thumbs.id,
    });
    await hubot.rest.repos.listCollaborators({ owner, repo });
    await bot.rest.reactions.createForIssue({ owner, repo, issue_number: pr.number, content: "rocket" });
    await bot.rest.reactions.listForIssue({ owner, repo, issue_number: pr.number });
    const { data: issue } = await bot.rest.issues.create({
      owner,
      repo,
      title: "Hold prod",
      labels: ["ferry"],
    });
    await bot.rest.issues.get({ owner, repo, issue_number: issue.number });
    await bot.graphql(`mutation($id: ID!) { pinIssue(input: { issueId: $id }) { clientMutationId } }`, {
      id: issue.node_id,
    });
    await bot.rest.issues.update({ owner, repo, issue_number: issue.number, state: "closed" });
    await bot.rest.issues.listForRepo({ owner, repo, labels: "ferry", state: "all" });

    const { data: run } = await bot.rest.checks.create({
      owner,
      repo,
      name: "ferry/config",
      head_sha: commit.sha,
      status: "in_progress",
    });
    await bot.rest.checks.update({
      owner,
      repo,
      check_run_id: run.id,
      conclusion: "success",
      output: { title: "ok", summary: "fine" },
    });
    await bot.rest.checks.get({ owner, repo, check_run_id: run.id });
    await bot.rest.checks.listForRef({ owner, repo, ref: commit.sha });
    await bot.rest.checks.listSuitesForRef({ owner, repo, ref: commit.sha });
    await bot.rest.repos.createCommitStatus({
      owner,
      repo,
      sha: commit.sha,
      state: "success",
      context: "ci/test",
    });
    await bot.rest.repos.getCombinedStatusForRef({ owner, repo, ref: commit.sha });
    await bot.rest.repos.listCommitStatusesForRef({ owner, repo, ref: commit.sha });

    await mona.rest.repos.getBranchProtection({ owner, repo, branch: "main" });
    await mona.rest.repos.updateBranchProtection({
      owner,
      repo,
      branch: "main",
      required_status_checks: { strict: false, contexts: ["ci/test"] },
      enforce_admins: true,
      required_pull_request_reviews: { required_approving_review_count: 1 },
      restrictions: null,
    });
    await bot.graphql(
      `mutation($id: ID!) { enablePullRequestAutoMerge(input: {pullRequestId: $id, mergeMethod: SQUASH}) { clientMutationId } }`,
      { id: pr.node_id },
    );
    await bot.graphql(
      `mutation($id: ID!) { disablePullRequestAutoMerge(input: {pullRequestId: $id}) { clientMutationId } }`,
      { id: pr.node_id },
    );
    await actAs.commit(
      emu,
      owner,
      repo,
      "ferry/staging",
      { "notes.txt": "synchronize\n" },
      "another commit",
      {
        as: "hubot",
      },
    );
    const { data: synced } = await bot.rest.pulls.get({ owner, repo, pull_number: pr.number });
    await bot.rest.repos.createCommitStatus({
      owner,
      repo,
      sha: synced.head.sha,
      state: "success",
      context: "ci/test",
    });
    const { data: doomed } = await bot.rest.issues.createComment({
      owner,
      repo,
      issue_number: pr.number,
      body: "temporary",
    });
    await bot.rest.issues.deleteComment({ owner, repo, comment_id: doomed.id });
    await mona.rest.pulls.createReview({ owner, repo, pull_number: pr.number, event: "APPROVE" });
    await mona.rest.pulls.listReviews({ owner, repo, pull_number: pr.number });
    await actAs.completeWorkflowRun(emu, owner, repo, synced.head.sha, "success");
    await bot.rest.pulls.merge({
      owner,
      repo,
      pull_number: pr.number,
      merge_method: "squash",
      sha: synced.head.sha,
    });

    const { data: merged } = await bot.rest.git.getRef({ owner, repo, ref: "heads/main" });
    const { data: deployment } = await bot.rest.repos.createDeployment({
      owner,
      repo,
      ref: merged.object.sha,
      environment: "staging",
      auto_merge: false,
      required_contexts: [],
    });
    if (!("id" in deployment)) throw new Error("deployment was not created");
    await bot.rest.repos.listDeployments({ owner, repo, environment: "staging" });
    await bot.rest.repos.getDeployment({ owner, repo, deployment_id: deployment.id });
    await bot.rest.repos.createDeploymentStatus({
      owner,
      repo,
      deployment_id: deployment.id,
      state: "success",
      description: "Synced, Healthy",
      log_url: "http://127.0.0.1/log",
      environment_url: "http://127.0.0.1/staging",
    });
    await bot.rest.repos.listDeploymentStatuses({ owner, repo, deployment_id: deployment.id });
    const { data: readme } = await hubot.rest.repos.getContent({ owner, repo, path: "README.md" });
    await hubot.rest.repos.createOrUpdateFileContents({
      owner,
      repo,
      path: "README.md",
      message: "docs",
      content: Buffer.from("x\n").toString("base64"),
      sha: (readme as { sha: string }).sha,
      branch: "ferry/staging",
    });
    await bot.rest.git.deleteRef({ owner, repo, ref: "heads/ferry/staging" });
    await hubot.rest.users.getByUsername({ username: "mona" });
    await hubot.rest.users.getAuthenticated();
    await hubot.rest.rateLimit.get();
    await ferry.app.rest.apps.getUserInstallation({ username: owner }).catch(() => undefined);
    await bot.rest.teams.getByName({ org: owner, team_slug: "release" });
    await bot.rest.pulls.checkIfMerged({ owner, repo, pull_number: pr.number });
    await bot.rest.pulls.listRequestedReviewers({ owner, repo, pull_number: pr.number });
    const { data: reviews } = await bot.rest.pulls.listReviews({ owner, repo, pull_number: pr.number });
    await bot.rest.pulls.getReview({ owner, repo, pull_number: pr.number, review_id: reviews[0]!.id });
    const { data: annotated } = await bot.rest.checks.create({
      owner,
      repo,
      name: "ferry/annotated",
      head_sha: merged.object.sha,
      conclusion: "failure",
      output: {
        title: "bad",
        summary: "bad",
        annotations: [
          { path: "README.md", start_line: 1, end_line: 1, annotation_level: "failure", message: "no" },
        ],
      },
    });
    await bot.rest.checks.listAnnotations({ owner, repo, check_run_id: annotated.id });
    await bot.rest.checks.getSuite({ owner, repo, check_suite_id: annotated.check_suite!.id });
    await bot.rest.issues.getLabel({ owner, repo, name: "ferry" });
    await bot.rest.issues.setLabels({ owner, repo, issue_number: issue.number, labels: ["ferry"] });
    await bot.rest.issues.listCommentsForRepo({ owner, repo });
    await bot.rest.git.getRef({ owner, repo, ref: "tags/v1" }).catch(() => undefined);
    const { data: readme2 } = await hubot.rest.repos.getContent({ owner, repo, path: "README.md" });
    await hubot.rest.repos.deleteFile({
      owner,
      repo,
      path: "README.md",
      message: "bye",
      sha: (readme2 as { sha: string }).sha,
    });
    await mona.rest.repos.deleteBranchProtection({ owner, repo, branch: "main" });
    actAs.publishPackage(emu, owner, repo, {
      name: "shop",
      tag: "1.8.0",
      digest: `sha256:${"a".repeat(64)}`,
    });
    await actAs.comment(emu, owner, repo, pr.number, "/promote prod", { as: "eve" });
    await emu.idle();
  });

  afterAll(async () => {
    await world?.emu.close();
    await receiver?.close();
  });

  it("answers every call with a body that validates against the operation's OpenAPI response schema", () => {
    expect(failures).toEqual([]);
    expect(new Set(checked.map((c) => c.operation)).size).toBeGreaterThan(75);
  });

  it("exercised every REST route the emulator serves", () => {
    // Aliases GitHub keeps for old clients, answered by the same code as their documented twins.
    const aliases = new Set([
      "GET /repos/{}/{}/git/refs/{}",
      "GET /repos/{}/{}/git/refs",
      "GET /repos/{}/{}/git/matching-refs",
      "GET /repos/{}/{}/contents",
    ]);
    const served = new Set(checked.map((c) => c.route));
    const missing = world.emu.router.list().filter((route) => !served.has(route) && !aliases.has(route));
    expect(missing).toEqual([]);
  });

  it("signs every webhook delivery and sends GitHub's headers", () => {
    expect(receiver.received.length).toBeGreaterThan(20);
    for (const hook of receiver.received) {
      expect(hook.signatureValid).toBe(true);
      expect(hook.headers["user-agent"]).toMatch(/^GitHub-Hookshot\//);
      expect(hook.delivery).toMatch(/^[0-9a-f-]{36}$/);
      expect(hook.headers["x-github-hook-installation-target-id"]).toBeDefined();
    }
  });

  it("sends webhook payloads that validate against @octokit/webhooks-schemas", () => {
    const events = new Set(receiver.received.map((h) => `${h.event}.${String(h.payload.action ?? "")}`));
    for (const wanted of [
      "push.",
      "pull_request.opened",
      "pull_request.closed",
      "pull_request.labeled",
      "pull_request.synchronize",
      "pull_request.auto_merge_enabled",
      "pull_request.auto_merge_disabled",
      "pull_request.edited",
      "pull_request.review_requested",
      "issue_comment.deleted",
      "issues.closed",
      "check_run.created",
      "issue_comment.created",
      "issue_comment.edited",
      "issues.opened",
      "check_run.completed",
      "check_suite.completed",
      "status.",
      "pull_request_review.submitted",
      "workflow_run.completed",
      "deployment.created",
      "deployment_status.created",
      "registry_package.published",
      "installation.created",
    ]) {
      expect(events).toContain(wanted);
    }
    const problems = receiver.received
      .map((h) => ({
        event: `${h.event}.${String(h.payload.action ?? "")}`,
        errors: validateWebhook(h.event, h.payload),
      }))
      .filter((x) => x.errors.length > 0);
    expect(problems).toEqual([]);
  });
});
