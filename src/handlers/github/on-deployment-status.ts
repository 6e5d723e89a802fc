import { notifyReconcilerReport } from "../../app/notifications.js";
import type { HandlerEvent, HandlerServices, RepositoryPayload } from "./services.js";

/** `deployment_status` as GitHub sends it (https://docs.github.com/webhooks/webhook-events-and-payloads#deployment_status). */
interface DeploymentStatusPayload extends RepositoryPayload {
  action: string;
  deployment_status: {
    id: number;
    state: string;
    description?: string | null;
    environment?: string;
    log_url?: string;
    target_url?: string;
    creator?: { login: string } | null;
  };
  deployment: { sha: string; environment: string };
}

/**
 * deployment_status created: a reconciler's report becomes a notification when it says the sync
 * failed or the health degraded (docs/config.md "Notifications"). Read only when some
 * environment's `notify:` may hear it: the config is read on the default branch.
 */
export async function onDeploymentStatus(
  event: HandlerEvent<DeploymentStatusPayload>,
  services: HandlerServices,
): Promise<void> {
  const { payload } = event;
  const status = payload.deployment_status;
  if (payload.action !== "created" || !status || !payload.deployment) return;
  if (
    status.state !== "failure" &&
    status.state !== "error" &&
    !/\bDegraded\b/.test(status.description ?? "")
  )
    return;
  const owner = payload.repository.owner.login;
  const repo = payload.repository.name;
  // No target configured in this Ferry: nothing to read.
  if (!services.depsFor(event.octokit, owner, repo).notify) return;
  services.queue.enqueue(`deployment-status:${owner}/${repo}#${status.id}`, async () => {
    const deps = services.depsFor(event.octokit, owner, repo);
    const logUrl = status.log_url || status.target_url;
    await notifyReconcilerReport(deps, payload.repository.default_branch, {
      id: status.id,
      state: status.state,
      description: status.description ?? "",
      environment: status.environment || payload.deployment.environment,
      creator: status.creator?.login ?? "",
      sha: payload.deployment.sha,
      ...(logUrl ? { logUrl } : {}),
    });
  });
}
