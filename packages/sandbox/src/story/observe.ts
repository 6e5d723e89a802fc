/**
 * Probes of the real effects, read as a person would see them: pull requests, files at a commit,
 * check runs and Deployment statuses through the emulator's API and git; Deployments from the
 * cluster simulator; holds from Ferry's dashboard issue.
 */
import {
  parseBody,
  DASHBOARD_TITLE,
  parseState,
  type Hold,
  type PlanBlock,
  parseImageRef,
  shortSha,
} from "../../../../src/embedding.js";
import { CONFIG_REPO, ENVIRONMENTS, OWNER, REQUIRED_CHECK, type EnvironmentName } from "./story-repos.js";
import type { SandboxWorld } from "./sandbox-world.js";
import { done, notYet, type Probe } from "./wait-until.js";
import { inspect } from "../github/index.js";

const repo = { owner: OWNER, repo: CONFIG_REPO };

export interface PullSeen {
  number: number;
  title: string;
  state: string;
  merged: boolean;
  headSha: string;
  mergeCommitSha: string | null;
  mergedBy: string | undefined;
  plan: PlanBlock | undefined;
}

/** Ferry's pull requests for an environment (branch `ferry/<env>`), newest first. */
export async function environmentPulls(
  world: SandboxWorld,
  environment: EnvironmentName,
): Promise<PullSeen[]> {
  const pulls = await inspect.listPulls(world.emu, OWNER, CONFIG_REPO, { head: `ferry/${environment}` });
  return pulls
    .map((pull) => {
      const p = pull as unknown as {
        number: number;
        title: string;
        state: string;
        merged: boolean;
        merge_commit_sha: string | null;
        merged_by: { login: string } | null;
        head: { sha: string };
        body: string | null;
      };
      return {
        number: p.number,
        title: p.title,
        state: p.state,
        merged: p.merged,
        headSha: p.head.sha,
        mergeCommitSha: p.merge_commit_sha,
        mergedBy: p.merged_by?.login,
        plan: parseBody(p.body),
      };
    })
    .sort((a, b) => b.number - a.number);
}

/** A pull request that `accept` likes, newer than `after` (so an earlier PR of the same branch does not count). */
export function pullProbe(
  world: SandboxWorld,
  environment: EnvironmentName,
  accept: (pull: PullSeen) => boolean,
  after = 0,
): Probe<PullSeen> {
  return async () => {
    const pulls = (await environmentPulls(world, environment)).filter((pull) => pull.number > after);
    const found = pulls.find(accept);
    if (found) return done(found);
    return notYet(
      pulls[0]
        ? `#${pulls[0].number} ${pulls[0].title} (${pulls[0].merged ? "merged" : pulls[0].state})`
        : `no ferry/${environment} PR`,
    );
  };
}

/** The required check concluded successfully on `sha`. */
export function checkPassedProbe(world: SandboxWorld, sha: string): Probe<string> {
  return async () => {
    const { data } = await world.as.mona.rest.checks.listForRef({
      ...repo,
      ref: sha,
      check_name: REQUIRED_CHECK,
    });
    const run = data.check_runs[0];
    if (run?.status === "completed" && run.conclusion === "success") return done(run.name);
    return notYet(
      run
        ? `${run.name} ${run.status}${run.conclusion ? ` ${run.conclusion}` : ""}`
        : `no ${REQUIRED_CHECK} check yet`,
    );
  };
}

/** The files' text at `sha`, read from the emulator's git (empty when a file is missing). */
export async function filesAt(
  world: SandboxWorld,
  sha: string,
  paths: string[],
): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const path of paths)
    files[path] = (await inspect.readFile(world.emu, OWNER, CONFIG_REPO, sha, path)) ?? "";
  return files;
}

/** Whether Ferry turned on GitHub's native auto-merge for the pull request (its `auto_merge_enabled` event). */
export function autoMergeEnabledBy(world: SandboxWorld, number: number): string | undefined {
  const delivery = world.emu.webhooks
    .deliveries()
    .find(
      (d) =>
        d.event === "pull_request" &&
        d.action === "auto_merge_enabled" &&
        (d.payload.pull_request as { number?: number } | undefined)?.number === number,
    );
  return (delivery?.payload.sender as { login?: string } | undefined)?.login;
}

export interface RolloutSeen {
  image: string;
  tag: string | undefined;
  digest: string | undefined;
  replicas: number;
  available: number;
}

function deploymentOf(world: SandboxWorld, environment: EnvironmentName): RolloutSeen | undefined {
  const namespace = ENVIRONMENTS.find((env) => env.name === environment)!.namespace;
  const object = world.cluster.get("apps/v1", "Deployment", namespace, "shop") as
    | {
        metadata: { generation?: number };
        spec: { replicas?: number; template: { spec: { containers: { image: string }[] } } };
        status?: {
          observedGeneration?: number;
          availableReplicas?: number;
          updatedReplicas?: number;
          replicas?: number;
        };
      }
    | undefined;
  if (!object) return undefined;
  const image = object.spec.template.spec.containers[0]?.image ?? "";
  let ref: { tag?: string; digest?: string } = {};
  try {
    ref = parseImageRef(image);
  } catch {
    // An image this story did not write; reported as is.
  }
  const settled =
    (object.status?.observedGeneration ?? 0) >= (object.metadata.generation ?? 0) &&
    object.status?.updatedReplicas === object.spec.replicas &&
    object.status?.replicas === object.spec.replicas;
  return {
    image,
    tag: ref.tag,
    digest: ref.digest,
    replicas: object.spec.replicas ?? 1,
    available: settled ? (object.status?.availableReplicas ?? 0) : 0,
  };
}

/** The environment's Deployment runs `tag` with every wanted replica available and the rollout finished. */
export function rolloutProbe(
  world: SandboxWorld,
  environment: EnvironmentName,
  tag: string,
): Probe<RolloutSeen> {
  const wanted = ENVIRONMENTS.find((env) => env.name === environment)!.replicas;
  return async () => {
    const seen = deploymentOf(world, environment);
    if (!seen) return notYet(`no Deployment shop in ${environment}`);
    const describe = `${seen.tag ?? seen.image}, ${seen.available}/${seen.replicas} available`;
    if (seen.tag === tag && seen.replicas === wanted && seen.available === wanted) return done(seen);
    return notYet(describe);
  };
}

export function currentRollout(world: SandboxWorld, environment: EnvironmentName): RolloutSeen | undefined {
  return deploymentOf(world, environment);
}

/** The reconciler applied `revision` and reports it Synced and Healthy. */
export function reconciledProbe(
  world: SandboxWorld,
  environment: EnvironmentName,
  revision: string,
): Probe<string> {
  return async () => {
    const status = world.reconcilers[environment].status();
    if (status.lastApplied === revision && status.sync === "Synced" && status.health === "Healthy")
      return done(revision);
    return notYet(
      `reconciler at ${status.lastApplied ? shortSha(status.lastApplied) : "nothing"}, ${status.sync}/${status.health}${status.errors[0] ? `: ${status.errors[0]}` : ""}`,
    );
  };
}

/** The newest status of the environment's GitHub Deployment on `sha` is `success`. */
export function deploymentSuccessProbe(
  world: SandboxWorld,
  environment: EnvironmentName,
  sha: string,
  /** The description must say this too (e.g. the manual changes undone). */
  saying?: string,
): Probe<string> {
  return async () => {
    const { data: deployments } = await world.as.mona.rest.repos.listDeployments({
      ...repo,
      sha,
      environment,
    });
    const deployment = deployments[0];
    if (!deployment) return notYet(`no ${environment} Deployment on ${shortSha(sha)}`);
    const { data: statuses } = await world.as.mona.rest.repos.listDeploymentStatuses({
      ...repo,
      deployment_id: deployment.id,
      per_page: 1,
    });
    const latest = statuses[0];
    if (latest?.state === "success" && (saying === undefined || latest.description?.includes(saying)))
      return done(latest.description ?? "success");
    return notYet(
      latest ? `Deployment status ${latest.state}: ${latest.description ?? ""}` : "Deployment without status",
    );
  };
}

/**
 * Ferry's reaction on a command comment and, when `replyPrefix` is given, its reply after it
 * (a refusal says why; a success only reacts, the PR it opens links back to the comment's issue).
 */
export function commentOutcomeProbe(
  world: SandboxWorld,
  issue: number,
  commentId: number,
  reaction: "rocket" | "-1",
  replyPrefix?: string,
): Probe<{ reply: string | undefined }> {
  return async () => {
    const comments = inspect.listComments(world.emu, OWNER, CONFIG_REPO, issue);
    const comment = comments.find((c) => c.id === commentId);
    const reactions =
      comment?.reactions.filter((r) => r.startsWith(`${world.botLogin}:`)).map((r) => r.split(":")[1]) ?? [];
    if (!reactions.includes(reaction))
      return notYet(reactions.length > 0 ? `reactions: ${reactions.join(", ")}` : "no reaction yet");
    if (replyPrefix === undefined) return done({ reply: undefined });
    // Ferry reacts first and replies after: both are part of the outcome.
    const reply = comments.find(
      (c) => c.id > commentId && c.user === world.botLogin && c.body.startsWith(replyPrefix),
    )?.body;
    return reply === undefined ? notYet(`reacted ${reactions.join(", ")}, no reply yet`) : done({ reply });
  };
}

/** The pinned dashboard issue's body says `text`. */
export function dashboardProbe(world: SandboxWorld, text: string): Probe<string> {
  return async () => {
    const { data: issues } = await world.as.mona.rest.issues.listForRepo({ ...repo, state: "open" });
    const body = issues.find((issue) => issue.title === DASHBOARD_TITLE)?.body ?? "";
    return body.includes(text) ? done(text) : notYet(`the dashboard does not say ${JSON.stringify(text)}`);
  };
}

/** Holds recorded in Ferry's dashboard issue (GitHub holds Ferry's state). */
export async function holds(world: SandboxWorld): Promise<Record<string, Hold>> {
  const { data } = await world.as.mona.rest.issues.listForRepo({ ...repo, state: "all", per_page: 100 });
  const dashboard = data.find((issue) => issue.title === DASHBOARD_TITLE && !issue.pull_request);
  return parseState(dashboard?.body).holds;
}

/** The digest a tag of the embedded registry points at (what `docker pull` would get). */
export async function registryDigest(
  world: SandboxWorld,
  repository: string,
  tag: string,
): Promise<string | undefined> {
  const response = await fetch(`${world.registry.url}/v2/${repository}/manifests/${tag}`, {
    method: "HEAD",
    headers: {
      accept: [
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.v2+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
      ].join(", "),
    },
  });
  return response.ok ? (response.headers.get("docker-content-digest") ?? undefined) : undefined;
}
