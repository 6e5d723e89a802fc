import { mergeFerryPullAt } from "../../app/merge-ferry-pull.js";
import { syncInstallation } from "../../app/sync-installation.js";
import { parseBranchName } from "../../core/pr/branch.js";
import {
  type HandlerEvent,
  type HandlerServices,
  installationOf,
  type RepositoryPayload,
  repoOf,
} from "./services.js";

interface CheckPayload extends RepositoryPayload {
  action: string;
  check_suite?: {
    head_sha: string;
    head_branch?: string | null;
    conclusion?: string | null;
    status?: string | null;
  };
  check_run?: {
    head_sha: string;
    conclusion?: string | null;
    status?: string;
    check_suite?: { head_branch?: string | null };
  };
  sha?: string;
  state?: string;
  branches?: { name: string }[];
  workflow_run?: {
    head_sha: string;
    head_branch?: string | null;
    conclusion?: string | null;
    status?: string | null;
  };
}

/**
 * check_suite/check_run/status/workflow_run completions: in the config repo they may make a Ferry
 * PR mergeable; in a source repo a successful build makes its image eligible (CI gating), so the
 * installation's config repos that name that source are synced.
 */
export async function onChecksCompleted(
  event: HandlerEvent<CheckPayload>,
  services: HandlerServices,
): Promise<void> {
  const { payload } = event;
  const sha =
    payload.check_suite?.head_sha ??
    payload.check_run?.head_sha ??
    payload.workflow_run?.head_sha ??
    payload.sha;
  if (!sha) return;
  if (
    payload.state === "pending" ||
    (payload.action !== undefined && payload.action !== "completed" && event.name !== "status")
  )
    return;
  const { owner, repo } = repoOf(payload);
  const branches = [
    payload.check_suite?.head_branch,
    payload.check_run?.check_suite?.head_branch,
    payload.workflow_run?.head_branch,
    ...(payload.branches ?? []).map((b) => b.name),
  ];
  const onFerryBranch = branches.some(
    (branch) => typeof branch === "string" && parseBranchName(branch) !== undefined,
  );
  // Only Ferry's own branches carry PRs Ferry merges; other checks in the config repo are not its business.
  if (onFerryBranch) {
    const branch = branches.find(
      (name): name is string => typeof name === "string" && parseBranchName(name) !== undefined,
    )!;
    services.queue.enqueue(`checks:${owner}/${repo}@${sha}`, async () => {
      const deps = services.depsFor(event.octokit, owner, repo);
      await mergeFerryPullAt(deps, branch, sha, payload.repository.default_branch);
    });
    return;
  }
  const conclusion =
    payload.check_suite?.conclusion ??
    payload.workflow_run?.conclusion ??
    payload.check_run?.conclusion ??
    payload.state;
  // A finished build in a source repo: workflow_run and check_suite say it once (check_run and
  // status would say it once per job).
  if (conclusion === "success" && (event.name === "workflow_run" || event.name === "check_suite")) {
    const source = payload.repository.full_name;
    syncInstallation(installationOf(services, event.octokit, payload.installation?.id), services.queue, {
      reason: event.name,
      sources: [source],
    });
  }
}
