import type { AppDeps } from "./app-deps.js";
import { loadRepoConfig, type ConfigReading } from "./load-repo-config.js";
import type { PullWork } from "./merge-when-ready.js";
import { planEnvironment } from "./plan-environment.js";
import { unitLock } from "./keyed-mutex.js";
import { ferryPull } from "./pull-trust.js";
import { repoFileSource } from "./repo-files.js";
import { bodyRows } from "./pr-body-rows.js";
import { upsertPromotionPr } from "./upsert-promotion-pr.js";
import { shortSha } from "../core/commit-sha.js";

export type GuardOutcome = "not-ferry" | "intact" | "rebuilt" | "closed";

const LOGIN = /^[A-Za-z0-9-]{1,39}(?:\[bot\])?$/;

/**
 * A commit Ferry did not write reached one of its PRs (someone with write access pushed to
 * `ferry/<env>`). Ferry never merges it: auto-merge is turned off at once (GitHub keeps it armed
 * after a push by someone with write access), the PR says what happened, and the branch is
 * rebuilt from the sealed plan as a new commit on the base, so the pushed change is dropped. When
 * the plan cannot be verified any more, the PR is closed instead (the next sync opens a new one).
 */
export async function guardFerryPull(
  deps: AppDeps<ConfigReading & PullWork>,
  number: number,
  pusher?: string,
): Promise<GuardOutcome> {
  const first = await deps.github.getPull(number);
  const environment = first && ferryPull(deps, first)?.environment;
  if (!first || environment === undefined) return "not-ferry";
  // The lock of the PR's unit: its branch.
  return deps.locks.run(unitLock(deps, first.headRef), async () => {
    // Re-read inside the environment's lock: a sync of this replica may just have rewritten it.
    const pull = await deps.github.getPull(number);
    const ferry = pull && ferryPull(deps, pull);
    if (!pull || !ferry || pull.state !== "open") return "not-ferry";
    if (ferry.headIsFerrys) return "intact";
    if (pull.autoMerge)
      await deps.github.disableAutoMerge(pull).catch((error: unknown) => {
        deps.log.warn({ pull: number, error: (error as Error).message }, "could not turn auto-merge off");
      });
    const who = pusher !== undefined && LOGIN.test(pusher) ? `@${pusher} pushed` : "Someone pushed";
    const block = ferry.block;
    const loaded = await loadRepoConfig(deps, pull.baseRef);
    if (!block || !loaded.ok) {
      await deps.github.comment(
        number,
        `${who} ${shortSha(pull.headSha)} to \`${pull.headRef}\`. Ferry merges only commits it wrote and cannot verify this pull request's plan any more, so it closes it; the next sync opens a new one.`,
      );
      await deps.github.updatePull(number, { state: "closed" });
      return "closed";
    }
    await deps.github.comment(
      number,
      `${who} ${shortSha(pull.headSha)} to \`${pull.headRef}\`, a commit Ferry did not write. Ferry never merges such a commit: it turned auto-merge off and rebuilt the branch from its plan. Change what Ferry proposes with a command, not a push.`,
    );
    deps.log.warn({ pull: number, sha: pull.headSha, pusher }, "foreign commit on a Ferry PR; rebuilding");
    const { config } = loaded;
    const pins = Object.fromEntries(
      block.changes.map((change) => [
        change.image,
        { ...(change.to.tag !== undefined ? { tag: change.to.tag } : {}), digest: change.to.digest },
      ]),
    );
    const plan = await planEnvironment(
      {
        registry: deps.registryFor(config),
        files: repoFileSource(deps.github, loaded.base.treeSha),
        now: deps.now(),
      },
      config,
      environment,
      { pins, images: Object.keys(pins) },
    );
    const upsert = await upsertPromotionPr(deps, {
      loaded,
      plan,
      ...(ferry.group ? { group: ferry.group } : {}),
      kind: block.kind,
      ...(block.requestedBy ? { requestedBy: block.requestedBy } : {}),
      rows: await bodyRows(deps, config, environment, plan),
      note: `Rebuilt by Ferry after ${shortSha(pull.headSha)}, a commit it did not write, was pushed to this branch.`,
      // The pushed commit may name a newer tag: it is replaced all the same.
      replaceNewerTip: true,
    });
    if (upsert.action === "none") {
      // The base already has the plan: nothing of Ferry's is left to merge here.
      await deps.github.updatePull(number, { state: "closed" });
      return "closed";
    }
    return "rebuilt";
  });
}
