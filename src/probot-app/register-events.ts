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

/** The app's own login, looked up once (and again after a failure): it decides which PRs are Ferry's. */
export interface AppIdentity {
  login?: string;
}

/** The GitHub events Ferry listens to, each handed to its handler once the app's login is known. */
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
  let lookup: Promise<void> | undefined;
  const knowAppLogin = (): Promise<void> =>
    identity.login !== undefined
      ? Promise.resolve()
      : (lookup ??= probot
          .auth()
          .then((octokit) => octokit.rest.apps.getAuthenticated())
          .then(({ data }) => {
            if (data?.slug) identity.login = `${data.slug}[bot]`;
          })
          .catch((error: unknown) =>
            probot.log.warn({ error: (error as Error).message }, "app login unknown"),
          )
          .finally(() => {
            lookup = undefined;
          }));
  void knowAppLogin();
  probot.on("issue_comment.created", async (context) => {
    await knowAppLogin();
    return onIssueComment(event(context), services);
  });
  probot.on(
    ["pull_request.opened", "pull_request.synchronize", "pull_request.reopened", "pull_request.closed"],
    async (context) => {
      await knowAppLogin();
      return onPullRequest(event(context), services);
    },
  );
  // A merge may wait on an approval or on a merge queue that dropped the PR: retried on both.
  probot.on("pull_request_review.submitted", async (context) => {
    await knowAppLogin();
    return onPullRequestReview(event(context), services);
  });
  probot.on("pull_request.dequeued", async (context) => {
    await knowAppLogin();
    return onPullRequestDequeued(event(context), services);
  });
  probot.on("push", (context) => onPush(event(context), services));
  probot.on("repository_ruleset", (context) => onRepositoryRuleset(event(context), services));
  probot.on("deployment_status.created", (context) => onDeploymentStatus(event(context), services));
  probot.on("merge_group.checks_requested", (context) => onMergeGroup(event(context), services));
  probot.on(
    ["check_suite.completed", "check_run.completed", "status", "workflow_run.completed"],
    async (context) => {
      await knowAppLogin();
      return onChecksCompleted(event(context), services);
    },
  );
  probot.on(["registry_package.published", "package.published"], (context) =>
    onPackage(
      event(context),
      services,
      hintsFromGitHubPackageEvent(context.name as "registry_package" | "package", context.payload).map(
        hintRepository,
      ),
    ),
  );
  probot.on(["installation.created", "installation_repositories.added"], (context) =>
    onInstallation(event(context), services),
  );
}
