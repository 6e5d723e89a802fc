import type { NotifyEventKind } from "../core/config/notify-schema.js";
import { targetsFor } from "../core/config/notify-schema.js";
import type { FerryConfig } from "../core/config/schema.js";
import { readDeploymentStatus, type DeploymentStatusState } from "../core/deployment-status.js";
import { healthSourceOf } from "../core/health/health-source.js";
import type { ReleaseChange } from "../core/notify/notify-event.js";
import { targetUseProblem, type NotifyTarget, type NotifyTargets } from "../core/notify/targets.js";
import type { PlanBlock, PlanBlockChange } from "../core/pr/plan-block.js";
import type { AppDeps, AppLogger } from "./app-deps.js";
import type { GitHubNotifyLedger, GitHubPulls, PullRequestInfo, RepoIdentity } from "./github-port.js";
import { loadRepoConfig, type ConfigReading } from "./load-repo-config.js";
import type { NotificationOutbox } from "./notify-outbox.js";
import type { Notifier } from "./notifier.js";

/**
 * What Ferry tells the world outside GitHub (docs/config.md "Notifications"): each use case that
 * decides something worth telling calls one of these with what it decided; the environment's
 * `notify:` says which of the operator's targets hear it. Sending is the outbox's
 * (notify-outbox.ts): queued, claimed once across replicas, retried.
 */

/** The Notifier of one repository of installation `owner`: only targets bound to it are used. */
export function repositoryNotifier(input: {
  outbox: NotificationOutbox;
  targets: NotifyTargets;
  ledger: GitHubNotifyLedger;
  owner: string;
  log: () => AppLogger;
}): Notifier {
  return {
    publish(config, event) {
      const names = targetsFor(config.environments[event.environment]?.notify, event.kind);
      const targets: NotifyTarget[] = [];
      for (const name of names) {
        const problem = targetUseProblem(input.targets, name, input.owner);
        if (problem) input.log().warn({ target: name, environment: event.environment }, problem);
        else targets.push(input.targets.get(name)!);
      }
      const claim = input.ledger.claimNotification?.bind(input.ledger);
      if (targets.length === 0 || !claim) return;
      input.outbox.enqueue({ event, targets, claim });
    },
  };
}

type Deps = AppDeps<RepoIdentity & Pick<GitHubPulls, "listReviews">>;

function pullUrl(deps: Deps, number: number): string {
  return `${deps.webUrl.replace(/\/+$/, "")}/${deps.github.owner}/${deps.github.repo}/pull/${number}`;
}

/** The images of a plan as a notification names them: from → to, digest, the source compare link. */
export async function releaseChanges(
  deps: Pick<AppDeps, "registryFor" | "webUrl">,
  config: FerryConfig,
  changes: readonly PlanBlockChange[],
): Promise<ReleaseChange[]> {
  const web = deps.webUrl.replace(/\/+$/, "");
  const result: ReleaseChange[] = [];
  for (const change of changes) {
    const source = config.images[change.image]?.source;
    let compareUrl: string | undefined;
    if (source && change.revision) {
      const fromRef = change.from.digest ?? change.from.tag;
      const fromRevision = fromRef
        ? await deps
            .registryFor(config)
            .describe(change.repository, fromRef)
            .then(
              (description) => description.revision,
              () => undefined,
            )
        : undefined;
      compareUrl =
        fromRevision && fromRevision !== change.revision
          ? `${web}/${source}/compare/${fromRevision}...${change.revision}`
          : `${web}/${source}/commit/${change.revision}`;
    }
    result.push({
      image: change.image,
      repository: change.repository,
      ...((change.from.tag ?? change.from.digest) ? { from: (change.from.tag ?? change.from.digest)! } : {}),
      to: change.to.tag ?? change.to.digest,
      digest: change.to.digest,
      ...(compareUrl ? { compareUrl } : {}),
    });
  }
  return result;
}

function summaryOf(kind: NotifyEventKind, environment: string, changes: readonly ReleaseChange[]): string {
  const list = changes
    .slice(0, 3)
    .map((change) => `${change.image} ${change.from ?? "(none)"} → ${change.to}`)
    .join(", ");
  const more = changes.length > 3 ? ` and ${changes.length - 3} more` : "";
  const verb = {
    opened: "proposed for",
    merged: "merged into",
    promoted: "promoted to",
    "rolled-back": "rolled back in",
    held: "held in",
    blocked: "blocked for",
    "sync-failed": "failing in",
    degraded: "degraded in",
  }[kind];
  return `${list}${more} ${verb} ${environment}`;
}

/** A Ferry PR opened: occurrence is its number, the same for every replica that raced to open it. */
export async function notifyPullOpened(
  deps: Deps,
  config: FerryConfig,
  pull: PullRequestInfo,
  block: PlanBlock,
): Promise<void> {
  if (!deps.notify) return;
  const changes = await releaseChanges(deps, config, block.changes);
  deps.notify.publish(config, {
    kind: "opened",
    repository: `${deps.github.owner}/${deps.github.repo}`,
    environment: block.environment,
    occurrence: `pull:${pull.number}`,
    summary: summaryOf("opened", block.environment, changes),
    changes,
    pull: { number: pull.number, url: pullUrl(deps, pull.number) },
    ...(block.requestedBy ? { requestedBy: block.requestedBy } : {}),
    at: deps.now().toISOString(),
  });
}

/** A Ferry PR merged: `merged` for a bump, `promoted` for /promote's, `rolled-back` for /rollback's. */
export async function notifyPullMerged(
  deps: Deps,
  config: FerryConfig,
  pull: PullRequestInfo,
  block: PlanBlock,
): Promise<void> {
  if (!deps.notify) return;
  const kind: NotifyEventKind =
    block.kind === "promote" ? "promoted" : block.kind === "rollback" ? "rolled-back" : "merged";
  if (targetsFor(config.environments[block.environment]?.notify, kind).length === 0) return;
  const changes = await releaseChanges(deps, config, block.changes);
  const reviews = (await deps.github.listReviews?.(pull.number).catch(() => undefined)) ?? [];
  const approvedBy = [
    ...new Set(reviews.filter((r) => r.state === "APPROVED" && r.user).map((r) => r.user!)),
  ];
  deps.notify.publish(config, {
    kind,
    repository: `${deps.github.owner}/${deps.github.repo}`,
    environment: block.environment,
    occurrence: `pull:${pull.number}`,
    summary: summaryOf(kind, block.environment, changes),
    changes,
    pull: { number: pull.number, url: pullUrl(deps, pull.number) },
    ...(block.requestedBy ? { requestedBy: block.requestedBy } : {}),
    ...(approvedBy.length > 0 ? { approvedBy } : {}),
    at: deps.now().toISOString(),
  });
}

/** `/hold`: occurrence is the hold's own time, which every replica reads back from the state ref. */
export function notifyHeld(
  deps: Deps,
  config: FerryConfig,
  environment: string,
  hold: { by: string; at: string },
): void {
  deps.notify?.publish(config, {
    kind: "held",
    repository: `${deps.github.owner}/${deps.github.repo}`,
    environment,
    occurrence: `hold:${hold.at}`,
    summary: `${environment} is on hold: automatic updates stop until /unhold ${environment}`,
    changes: [],
    requestedBy: hold.by,
    at: deps.now().toISOString(),
  });
}

/** Why a promotion is blocked; `window` is for change windows and freezes. */
export type BlockReason = "gating" | "soak" | "window" | "signature";

/**
 * A promotion Ferry refused or postponed. `occurrence` must name what the block is about (the
 * config commit, the versions) and never when it was seen, so that every scan and every replica
 * that meets the same block tells it once.
 */
export function notifyBlocked(
  deps: Deps,
  config: FerryConfig,
  input: {
    environment: string;
    reason: BlockReason;
    detail: string;
    occurrence: string;
    requestedBy?: string;
  },
): void {
  deps.notify?.publish(config, {
    kind: "blocked",
    repository: `${deps.github.owner}/${deps.github.repo}`,
    environment: input.environment,
    occurrence: `${input.reason}:${input.occurrence}`,
    summary: `a promotion to ${input.environment} is blocked (${input.reason})`,
    changes: [],
    reason: input.reason,
    detail: input.detail,
    ...(input.requestedBy ? { requestedBy: input.requestedBy } : {}),
    at: deps.now().toISOString(),
  });
}

/** What a `deployment_status` event says, as the handler hands it over. */
export interface DeploymentStatusReport {
  id: number;
  state: string;
  description: string;
  /** The GitHub environment of the Deployment. */
  environment: string;
  creator: string;
  sha: string;
  logUrl?: string;
}

/**
 * A reconciler's report (a `deployment_status` event): `sync-failed` when it could not apply,
 * `degraded` when the environment's health is Degraded. Counted only from the identity the
 * environment's health source names (docs/security.md "Health"), like soak.
 */
export function notifyDeploymentStatus(
  deps: Deps,
  config: FerryConfig,
  report: DeploymentStatusReport,
): void {
  if (!deps.notify) return;
  const states = ["success", "failure", "error", "in_progress", "queued", "pending", "inactive"];
  if (!states.includes(report.state)) return;
  const read = readDeploymentStatus({
    state: report.state as DeploymentStatusState,
    description: report.description,
    sha: report.sha,
    at: "",
  });
  const kind: NotifyEventKind | undefined =
    report.state === "failure" || report.state === "error"
      ? read.health === "Degraded"
        ? "degraded"
        : "sync-failed"
      : read.health === "Degraded"
        ? "degraded"
        : undefined;
  if (!kind) return;
  for (const environment of Object.keys(config.environments)) {
    const source = healthSourceOf(config, environment, deps.appLogin);
    if (source.kind !== "deployments" || source.environment !== report.environment) continue;
    if (!source.reporters.some((login) => login.toLowerCase() === report.creator.toLowerCase())) continue;
    deps.notify.publish(config, {
      kind,
      repository: `${deps.github.owner}/${deps.github.repo}`,
      environment,
      occurrence: `deployment-status:${report.id}`,
      summary: `${environment} ${kind === "degraded" ? "is degraded" : "failed to sync"} at ${report.sha.slice(0, 7)}`,
      changes: [],
      reason: kind === "degraded" ? "health" : "sync",
      detail: report.description.slice(0, 140),
      ...(report.logUrl ? { url: report.logUrl } : {}),
      at: deps.now().toISOString(),
    });
  }
}

/** A `deployment_status` event: the config is read on the default branch only when a target may hear it. */
export async function notifyReconcilerReport(
  deps: AppDeps<ConfigReading & RepoIdentity>,
  branch: string | undefined,
  report: DeploymentStatusReport,
): Promise<void> {
  if (!deps.notify) return;
  const loaded = await loadRepoConfig(deps, branch, { readOnly: true });
  if (loaded.ok) notifyDeploymentStatus(deps, loaded.config, report);
}
