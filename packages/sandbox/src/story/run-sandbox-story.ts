/**
 * `ferry sandbox`: the release of shop 1.8.0 (docs/architecture.md "The sandbox"), end to end on
 * the embedded parts. Each step acts like a person or a CI system would, then waits — bounded by a
 * deadline — for the real effect and says what it saw. The first failing step ends the story;
 * the summary and `close()` work either way.
 */
import {
  CONFIG_REPO,
  ENVIRONMENTS,
  FIRST_VERSION,
  IMAGE_PATH,
  NEW_VERSION,
  OWNER,
  environmentFiles,
  type EnvironmentName,
} from "./story-repos.js";
import {
  autoMergeEnabledBy,
  checkPassedProbe,
  commentOutcomeProbe,
  currentRollout,
  dashboardProbe,
  deploymentSuccessProbe,
  filesAt,
  holds,
  pullProbe,
  reconciledProbe,
  registryDigest,
  rolloutProbe,
  type PullSeen,
} from "./observe.js";
import { prodDiff } from "./diff-step.js";
import { startSandboxWorld, type SandboxWorld } from "./sandbox-world.js";
import { describeDrift, shortDigest, shortSha } from "../../../../src/embedding.js";
import { type EnvironmentSummary, type SandboxEndpoints, type StepResult } from "./timeline.js";
import { done, notYet, waitUntil, type Probe } from "./wait-until.js";
import { inspect } from "../github/index.js";

export interface SandboxStoryOptions {
  /** Leave everything running after the story (until `close()`). */
  keep?: boolean;
  /** Called as each step finishes (the CLI prints its line). */
  onStep?: (step: StepResult, index: number) => void;
  /** Where Probot's warnings go; never stdout. */
  log?: (text: string) => void;
  /** Aborting it ends the story early (the step in flight fails as interrupted) and shuts down. */
  signal?: AbortSignal;
}

export interface SandboxStory {
  steps: StepResult[];
  environments: EnvironmentSummary[];
  endpoints: SandboxEndpoints;
  /** True when every step passed. */
  ok: boolean;
  /** The running parts (with `keep`, to act on them; after close, for inspection). */
  world?: SandboxWorld;
  close(): Promise<void>;
}

const repo = { owner: OWNER, repo: CONFIG_REPO };

/** Facts one step hands to the next (the digest pushed, the issue commands go on…). */
interface StoryState {
  digest?: string;
  issue?: number;
  lastProdPull?: number;
  /** When step 6's merge landed on main (its commit's date), for step 9's question. */
  prodMergedAt?: string;
  /** When prod's reconciler reported step 6's merge applied (its Deployment status). */
  prodDeployedAt?: string;
}

export async function runSandboxStory(options: SandboxStoryOptions = {}): Promise<SandboxStory> {
  const steps: StepResult[] = [];
  const record = (step: StepResult): void => {
    steps.push(step);
    options.onStep?.(step, steps.length - 1);
  };
  const setupStarted = performance.now();
  let world: SandboxWorld;
  try {
    world = await startSandboxWorld({
      ...(options.log ? { log: options.log } : {}),
      ...(options.keep ? { scanIntervalMs: 60_000 } : {}),
    });
  } catch (error) {
    record({
      name: "setup",
      ok: false,
      ms: Math.round(performance.now() - setupStarted),
      detail: `could not start the sandbox: ${(error as Error).message}`,
    });
    return { steps, environments: [], endpoints: emptyEndpoints(), ok: false, close: async () => undefined };
  }

  const interrupted = (): boolean => options.signal?.aborted === true;
  options.signal?.addEventListener("abort", () => world.abort(), { once: true });
  if (interrupted()) world.abort();
  const state: StoryState = {};
  const story: [string, () => Promise<string>][] = [
    ["setup", () => setup(world, setupStarted)],
    ["push", () => push(world, state)],
    ["staging-pr", () => stagingPullRequest(world, state)],
    ["staging-rollout", () => stagingRollout(world)],
    ["promote-command", () => promoteCommand(world, state)],
    ["prod-diff", () => prodDiff(world, state.digest)],
    ["prod-pr", () => prodPullRequest(world, state)],
    ["self-heal", () => selfHeal(world)],
    ["rollback", () => rollbackProd(world, state)],
    ["history", () => historyAtProdRollout(world, state)],
  ];
  for (const [name, run] of story) {
    const started = name === "setup" ? setupStarted : performance.now();
    if (interrupted()) {
      record({ name, ok: false, ms: 0, detail: "interrupted before it started" });
      break;
    }
    try {
      const detail = await run();
      record({ name, ok: true, ms: Math.round(performance.now() - started), detail });
    } catch (error) {
      record({
        name,
        ok: false,
        ms: Math.round(performance.now() - started),
        detail: (error as Error).message,
      });
      break;
    }
  }

  const environments = await summarize(world).catch(() => []);
  const endpoints = endpointsOf(world);
  const ok = steps.length === story.length && steps.every((step) => step.ok);
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => (closed ??= world.close());
  if (!options.keep) await close();
  return { steps, environments, endpoints, ok, world, close };
}

/** Waits for a probe until the world's deadline or its abort (Ctrl-C). */
function waitFor<T>(world: SandboxWorld, waitingFor: string, probe: Probe<T>): Promise<T> {
  return waitUntil(waitingFor, probe, { signal: world.signal });
}

/** Both reconcilers have applied the first commit and shop 1.7.3 runs everywhere. */
async function setup(world: SandboxWorld, started: number): Promise<string> {
  const head = (await inspect.branchSha(world.emu, OWNER, CONFIG_REPO, "main"))!;
  for (const { name } of ENVIRONMENTS) {
    // The reconciler first: while it fails (no kubectl for kustomize, say) its error is what to show.
    await waitFor(
      world,
      `the ${name} reconciler to apply ${shortSha(head)}`,
      reconciledProbe(world, name, head),
    );
    await waitFor(world, `${name} to run shop ${FIRST_VERSION}`, rolloutProbe(world, name, FIRST_VERSION));
  }
  return `GitHub emulator, registry with shop:${FIRST_VERSION}, cluster, Ferry and 2 reconcilers up; staging and prod run ${FIRST_VERSION} (${Math.round(performance.now() - started)} ms)`;
}

/** 1. CI in acme/shop passes and pushes shop:1.8.0; the registry's notification reaches Ferry. */
async function push(world: SandboxWorld, state: StoryState): Promise<string> {
  const hintsBefore = await registryHints(world);
  const { digest, revision } = await world.release(NEW_VERSION);
  state.digest = digest;
  await waitFor(world, "the registry notification to reach Ferry", async () => {
    const hints = await registryHints(world);
    return hints > hintsBefore ? done(hints) : notYet(`${hints} registry hints`);
  });
  return `${OWNER}/shop@${shortSha(revision)} passed CI, pushed shop:${NEW_VERSION} (${shortDigest(digest)}); the registry's notification reached Ferry`;
}

/** 2. The staging PR opens with both files bumped, its required check passes, native auto-merge merges it. */
async function stagingPullRequest(world: SandboxWorld, state: StoryState): Promise<string> {
  const title = `Promote shop ${NEW_VERSION} to staging`;
  const opened = await waitFor(
    world,
    `the PR "${title}"`,
    pullProbe(world, "staging", (pull) => pull.title === title),
  );
  const files = await expectFilesBumped(world, opened, "staging", { from: FIRST_VERSION, to: NEW_VERSION });
  await waitFor(world, `the required check on #${opened.number}`, checkPassedProbe(world, opened.headSha));
  const merged = await waitFor(
    world,
    `#${opened.number} to merge`,
    pullProbe(world, "staging", (pull) => pull.number === opened.number && pull.merged),
  );
  // Native auto-merge merges once the check passes. When the check passes before Ferry has enabled
  // it (a busy machine, a fast CI), Ferry merges the validated head itself: both are `merge: auto`.
  const enabledBy = autoMergeEnabledBy(world, merged.number);
  if (!enabledBy && merged.mergedBy !== world.botLogin)
    throw new Error(
      `#${merged.number} was merged by ${merged.mergedBy ?? "nobody"}, not by Ferry or auto-merge`,
    );
  // Either way only the head whose required check passed may have been merged.
  if (merged.headSha !== opened.headSha)
    throw new Error(
      `#${merged.number} merged head ${shortSha(merged.headSha)}, not the checked ${shortSha(opened.headSha)}`,
    );
  const how = enabledBy ? `auto-merge by ${enabledBy} merged` : `${world.botLogin} merged`;
  const why = enabledBy ? "" : " (auto-merge was not armed)";
  const digest = merged.plan?.changes.find((change) => change.image === "shop")?.to.digest;
  if (digest !== state.digest)
    throw new Error(
      `#${merged.number} carries ${shortDigest(digest)}, not the pushed ${shortDigest(state.digest)}`,
    );
  return `#${merged.number} "${title}" (${files.length} files, ${shortDigest(digest)}), check passed, ${how} ${merged.mergeCommitSha ? shortSha(merged.mergeCommitSha) : "-"}${why}`;
}

/**
 * A merge is deployed when the environment runs `version`, its reconciler applied `sha`, and
 * GitHub shows a successful Deployment status on `sha`; returns the rollout it saw.
 */
async function deployed(world: SandboxWorld, environment: EnvironmentName, version: string, sha: string) {
  const rollout = await waitFor(
    world,
    `${environment} to run shop ${version}`,
    rolloutProbe(world, environment, version),
  );
  await waitFor(
    world,
    `the ${environment} reconciler to apply ${shortSha(sha)}`,
    reconciledProbe(world, environment, sha),
  );
  await waitFor(
    world,
    `a successful ${environment} Deployment status on ${shortSha(sha)}`,
    deploymentSuccessProbe(world, environment, sha),
  );
  return rollout;
}

/** 3. The staging reconciler applies the merge commit, the rollout goes Healthy, GitHub shows the Deployment succeeded. */
async function stagingRollout(world: SandboxWorld): Promise<string> {
  const head = (await inspect.branchSha(world.emu, OWNER, CONFIG_REPO, "main"))!;
  const rollout = await deployed(world, "staging", NEW_VERSION, head);
  return `applied ${shortSha(head)}: staging/shop runs ${NEW_VERSION}, ${rollout.available}/${rollout.replicas} available, Synced/Healthy; Deployment status success on ${shortSha(head)}`;
}

/** 4. /promote prod: refused for eve (no access), accepted for mona (maintainer). */
async function promoteCommand(world: SandboxWorld, state: StoryState): Promise<string> {
  const { data: issue } = await world.as.mona.rest.issues.create({
    ...repo,
    title: `Release shop ${NEW_VERSION}`,
    body: "Tracking the release.",
  });
  state.issue = issue.number;
  const { data: fromEve } = await world.as.eve.rest.issues.createComment({
    ...repo,
    issue_number: issue.number,
    body: "/promote prod",
  });
  const refused = await waitFor(
    world,
    "Ferry to refuse eve's /promote prod and say why",
    commentOutcomeProbe(world, issue.number, fromEve.id, "-1", "@eve "),
  );
  const { data: fromMona } = await world.as.mona.rest.issues.createComment({
    ...repo,
    issue_number: issue.number,
    body: "/promote prod",
  });
  await waitFor(
    world,
    "Ferry to accept mona's /promote prod",
    commentOutcomeProbe(world, issue.number, fromMona.id, "rocket"),
  );
  return `on #${issue.number}: eve refused 👎 ("${firstSentence((refused.reply ?? "").replace(/^@eve\s*/, ""))}"), mona accepted 🚀`;
}

/** 6. The prod PR carries staging's exact digest; mona approves and merges it; prod rolls out. */
async function prodPullRequest(world: SandboxWorld, state: StoryState): Promise<string> {
  const title = `Promote shop ${NEW_VERSION} to prod`;
  const pull = await waitFor(
    world,
    `the PR "${title}"`,
    pullProbe(world, "prod", (p) => p.title === title && p.state === "open"),
  );
  const change = pull.plan?.changes.find((c) => c.image === "shop");
  if (!change || change.to.digest !== state.digest) {
    throw new Error(
      `#${pull.number} carries ${shortDigest(change?.to.digest)}, not staging's ${shortDigest(state.digest)}`,
    );
  }
  await expectFilesBumped(world, pull, "prod", {
    from: FIRST_VERSION,
    to: NEW_VERSION,
    digest: change.to.digest,
  });
  const mergeSha = await approveAndMerge(world, pull);
  state.lastProdPull = pull.number;
  const { data: merged } = await world.as.mona.rest.repos.getCommit({ ...repo, ref: mergeSha });
  state.prodMergedAt = merged.commit.committer?.date ?? undefined;
  const rollout = await deployed(world, "prod", NEW_VERSION, mergeSha);
  state.prodDeployedAt = await deploymentSuccessAt(world, "prod", mergeSha);
  return `#${pull.number} carries staging's ${shortDigest(change.to.digest)}; mona approved and merged ${shortSha(mergeSha)}; prod/shop runs ${NEW_VERSION}, ${rollout.available}/${rollout.replicas} available`;
}

/** 7. Someone scales prod by hand; the reconciler puts Git's replica count back. */
async function selfHeal(world: SandboxWorld): Promise<string> {
  const wanted = ENVIRONMENTS.find((env) => env.name === "prod")!.replicas;
  const manual = 1;
  world.cluster.scale("Deployment", "prod", "shop", manual);
  const drifted = currentRollout(world, "prod");
  if (drifted?.replicas !== manual)
    throw new Error(`the manual scale did not take (replicas ${drifted?.replicas})`);
  const healed = await waitFor(
    world,
    `prod/shop back to ${wanted} replicas`,
    rolloutProbe(world, "prod", NEW_VERSION),
  );
  await waitFor(world, "the prod reconciler to report Synced/Healthy", async () => {
    const status = world.reconcilers.prod.status();
    return status.sync === "Synced" && status.health === "Healthy"
      ? done(status)
      : notYet(`${status.sync}/${status.health}`);
  });
  const undone = world.reconcilers.prod
    .status()
    .driftUndone?.find((record) => record.field === "spec.replicas");
  if (!undone) throw new Error("the prod reconciler did not record the manual change it undid");
  // Drift made visible on GitHub: the prod Deployment status says how many changes were undone.
  const head = (await inspect.branchSha(world.emu, OWNER, CONFIG_REPO, "main"))!;
  const said = describeDrift(1);
  await waitFor(
    world,
    `the prod Deployment status to say "${said}"`,
    deploymentSuccessProbe(world, "prod", head, said),
  );
  return `scaled prod/shop ${wanted} → ${manual} by hand; self-heal restored ${healed.available}/${healed.replicas} available; recorded ${undone.field} ${undone.live} → ${undone.git} by ${undone.manager ?? "an unknown manager"}; the Deployment status says "${said}"`;
}

/** 8. /rollback prod: the revert PR is approved and merged, prod runs 1.7.3 again and is held. */
async function rollbackProd(world: SandboxWorld, state: StoryState): Promise<string> {
  const issue = state.issue!;
  // A minute passes on the emulator's clock, whose times are whole seconds like GitHub's: step 9
  // asks what ran at step 6's rollout, which must not share a second with this merge.
  world.emu.advanceClock(60_000);
  const { data: command } = await world.as.mona.rest.issues.createComment({
    ...repo,
    issue_number: issue,
    body: "/rollback prod",
  });
  await waitFor(
    world,
    "Ferry to accept mona's /rollback prod",
    commentOutcomeProbe(world, issue, command.id, "rocket"),
  );
  const pull = await waitFor(
    world,
    `the rollback PR for prod`,
    pullProbe(
      world,
      "prod",
      (p) => p.state === "open" && p.plan?.kind === "rollback",
      state.lastProdPull ?? 0,
    ),
  );
  const change = pull.plan?.changes.find((c) => c.image === "shop");
  if (!change || change.to.tag !== FIRST_VERSION)
    throw new Error(`#${pull.number} rolls back to ${change?.to.tag}, not ${FIRST_VERSION}`);
  await expectFilesBumped(world, pull, "prod", { from: NEW_VERSION, to: FIRST_VERSION });
  const mergeSha = await approveAndMerge(world, pull);
  const rollout = await deployed(world, "prod", FIRST_VERSION, mergeSha);
  const hold = await waitFor(world, "a hold on prod", async () => {
    const held = (await holds(world)).prod;
    return held ? done(held) : notYet("prod not held");
  });
  // The dashboard, rewritten with the hold, shows step 7's drift from the prod Deployment status.
  const drift = `**prod**: ${describeDrift(1)}`;
  await waitFor(world, `the dashboard to say "${drift}"`, dashboardProbe(world, drift));
  return `#${pull.number} rolls back to ${FIRST_VERSION} (${shortDigest(change.to.digest)}), merged ${shortSha(mergeSha)}; prod/shop runs ${FIRST_VERSION}, ${rollout.available}/${rollout.replicas} available; held by ${hold.by} (${hold.reason}); the dashboard shows prod's drift`;
}

/** When GitHub shows the environment's first successful Deployment status on `sha`. */
async function deploymentSuccessAt(
  world: SandboxWorld,
  environment: EnvironmentName,
  sha: string,
): Promise<string | undefined> {
  const { data: deployments } = await world.as.mona.rest.repos.listDeployments({ ...repo, sha, environment });
  if (!deployments[0]) return undefined;
  const { data: statuses } = await world.as.mona.rest.repos.listDeploymentStatuses({
    ...repo,
    deployment_id: deployments[0].id,
  });
  return statuses.filter((status) => status.state === "success").at(-1)?.created_at;
}

/**
 * 9. "What ran in prod at the time of step 6?", answered by `/ferry history prod --at …` from the
 * config repo's history and the prod reconciler's Deployment statuses (asked at the moment step 6's
 * rollout was reported applied: at the merge itself prod still ran the version before).
 */
async function historyAtProdRollout(world: SandboxWorld, state: StoryState): Promise<string> {
  const issue = state.issue!;
  const at = (state.prodDeployedAt ?? state.prodMergedAt!).replace(/\.\d+Z$/, "Z");
  const body = `/ferry history prod --at ${at}`;
  const { data: command } = await world.as.mona.rest.issues.createComment({
    ...repo,
    issue_number: issue,
    body,
  });
  const { reply } = await waitFor(
    world,
    `Ferry to answer ${body}`,
    commentOutcomeProbe(world, issue, command.id, "rocket", "What ran in prod at"),
  );
  const line = (reply ?? "").split("\n").find((text) => text.startsWith("- shop: "));
  if (!line?.startsWith(`- shop: \`${NEW_VERSION}`))
    throw new Error(`the answer does not say prod ran ${NEW_VERSION} then: ${line ?? reply}`);
  const pull = /\[#(\d+)\]/.exec(line)?.[1];
  const by = / by @([^\s;]+)/.exec(line)?.[1];
  const source = line.includes("source: Deployment statuses")
    ? "the config repo's history and prod's Deployment statuses"
    : "the config repo's history";
  return `${body}: prod ran shop ${NEW_VERSION} then (promotion #${pull ?? "?"}${by ? ` merged by ${by}` : ""}), read from ${source}`;
}

/**
 * Every file of the environment names `to` (and `digest`, when given) and no longer `from` at the
 * PR's head, read from the emulator's git. Ferry may write a tag or `tag@digest`, so the check is
 * on the versions, not on one spelling.
 */
async function expectFilesBumped(
  world: SandboxWorld,
  pull: PullSeen,
  environment: EnvironmentName,
  change: { from: string; to: string; digest?: string },
): Promise<string[]> {
  const { data: listed } = await world.as.mona.rest.pulls.listFiles({ ...repo, pull_number: pull.number });
  const changed = listed.map((file) => file.filename).sort();
  const expected = environmentFiles(environment);
  if (changed.join() !== expected.join()) {
    throw new Error(
      `#${pull.number} changes ${changed.join(", ") || "nothing"}, expected ${expected.join(", ")}`,
    );
  }
  const files = await filesAt(world, pull.headSha, expected);
  const stale = Object.entries(files)
    .filter(([, text]) => !text.includes(change.to) || text.includes(change.from))
    .map(([path]) => path);
  if (stale.length > 0)
    throw new Error(`#${pull.number} does not move ${stale.join(", ")} from ${change.from} to ${change.to}`);
  if (change.digest && !Object.values(files).some((text) => text.includes(change.digest!))) {
    throw new Error(
      `#${pull.number} does not pin ${shortDigest(change.digest)} in ${Object.keys(files).join(", ")}`,
    );
  }
  return changed;
}

/** mona waits for the required check, approves, and merges with the head she approved. */
async function approveAndMerge(world: SandboxWorld, pull: PullSeen): Promise<string> {
  await waitFor(world, `the required check on #${pull.number}`, checkPassedProbe(world, pull.headSha));
  await world.as.mona.rest.pulls.createReview({
    ...repo,
    pull_number: pull.number,
    event: "APPROVE",
    commit_id: pull.headSha,
  });
  const { data } = await world.as.mona.rest.pulls.merge({
    ...repo,
    pull_number: pull.number,
    sha: pull.headSha,
    merge_method: "squash",
  });
  if (!data.merged) throw new Error(`#${pull.number} did not merge: ${data.message}`);
  return data.sha;
}

function firstSentence(text: string): string {
  return text.split(/(?<=[a-z0-9)])[.;:](\s|$)/i)[0]!.trim();
}

async function registryHints(world: SandboxWorld): Promise<number> {
  const metric = await world.ferry.metrics.getSingleMetric("ferry_registry_hints_total")?.get();
  return metric?.values.reduce((sum, value) => sum + value.value, 0) ?? 0;
}

async function summarize(world: SandboxWorld): Promise<EnvironmentSummary[]> {
  const held = await holds(world).catch(() => ({}) as Record<string, unknown>);
  const summaries: EnvironmentSummary[] = [];
  for (const { name } of ENVIRONMENTS) {
    const rollout = currentRollout(world, name);
    const status = world.reconcilers[name].status();
    const digest =
      rollout?.digest ?? (rollout?.tag ? await registryDigest(world, IMAGE_PATH, rollout.tag) : undefined);
    summaries.push({
      environment: name,
      version: rollout?.tag ?? "-",
      digest: digest ?? "-",
      sync: status.sync,
      health: status.health,
      held: name in held,
    });
  }
  return summaries;
}

/** What `--keep` prints: addresses and a token per sandbox user. */
export function endpointsOf(world: SandboxWorld): SandboxEndpoints {
  return {
    github: world.emu.apiUrl,
    repositories: {
      [`${OWNER}/shop`]: `${world.emu.apiUrl}/repos/${OWNER}/shop`,
      [`${OWNER}/${CONFIG_REPO}`]: `${world.emu.apiUrl}/repos/${OWNER}/${CONFIG_REPO}`,
    },
    registry: world.registry.host,
    cluster: world.cluster.url,
    status: world.ferry.statusUrl ?? "",
    tokens: Object.fromEntries(Object.entries(world.users).map(([login, user]) => [login, user.token])),
  };
}

function emptyEndpoints(): SandboxEndpoints {
  return { github: "", repositories: {}, registry: "", cluster: "", status: "", tokens: {} };
}
