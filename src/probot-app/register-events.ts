import type { Probot } from "probot";
import type { OctokitLike } from "../adapters/github/github-repo.js";
import { hintRepository, hintsFromGitHubPackageEvent } from "../handlers/registry/index.js";
import { onChecksCompleted } from "../handlers/github/on-checks-completed.js";
import { onInstallation } from "../handlers/github/on-installation.js";
import { onIssueComment } from "../handlers/github/on-issue-comment.js";
import { onMergeGroup } from "../handlers/github/on-merge-group.js";
import { onPackage } from "../handlers/github/on-package.js";
import { onPullRequest } from "../handlers/github/on-pull-request.js";
import { onPush } from "../handlers/github/on-push.js";
import { onPullRequestDequeued, onPullRequestReview } from "../handlers/github/merge-retry-handlers.js";
import { onRepositoryRuleset } from "../handlers/github/on-ruleset.js";
import { onDeploymentStatus } from "../handlers/github/on-deployment-status.js";
import type { HandlerEvent, HandlerServices } from "../handlers/github/services.js";
import type { AppIdentity } from "./app-identity.js";

/**
 * The GitHub events Ferry listens to, each handed to its handler once the app's login is known
 * (docs/reliability.md row 81): every one, since any of them may start work that asks whether a
 * PR is Ferry's.
 */
export function registerEvents(probot: Probot, services: HandlerServices, identity: AppIdentity): void {
  const event = <P>(context: {
    id: string;
    name: string;
    payload: unknown;
    octokit: unknown;
  }): HandlerEvent<P> => ({
    id: context.id,
    name: context.name,
    payload: context.payload as P,
    octokit: context.octokit as OctokitLike,
  });
  identity.lookUpWith(async () => {
    const octokit = await probot.auth();
    const { data } = await octokit.rest.apps.getAuthenticated();
    return data?.slug ? `${data.slug}[bot]` : undefined;
  });
  void identity.known();
  type Context = Parameters<Parameters<Probot["on"]>[1]>[0];
  const on = (names: Parameters<Probot["on"]>[0], handle: (context: Context) => unknown): void =>
    probot.on(names, async (context) => {
      await identity.known();
      await handle(context as Context);
    });
  on("issue_comment.created", (context) => onIssueComment(event(context), services));
  on(
    ["pull_request.opened", "pull_request.synchronize", "pull_request.reopened", "pull_request.closed"],
    (context) => onPullRequest(event(context), services),
  );
  // A merge may wait on an approval or on a merge queue that dropped the PR: retried on both.
  on("pull_request_review.submitted", (context) => onPullRequestReview(event(context), services));
  on("pull_request.dequeued", (context) => onPullRequestDequeued(event(context), services));
  on("push", (context) => onPush(event(context), services));
  on("repository_ruleset", (context) => onRepositoryRuleset(event(context), services));
  on("deployment_status.created", (context) => onDeploymentStatus(event(context), services));
  on("merge_group.checks_requested", (context) => onMergeGroup(event(context), services));
  on(["check_suite.completed", "check_run.completed", "status", "workflow_run.completed"], (context) =>
    onChecksCompleted(event(context), services),
  );
  on(["registry_package.published", "package.published"], (context) =>
    onPackage(
      event(context),
      services,
      hintsFromGitHubPackageEvent(context.name as "registry_package" | "package", context.payload).map(
        hintRepository,
      ),
    ),
  );
  on(["installation.created", "installation_repositories.added"], (context) =>
    onInstallation(event(context), services),
  );
}
