/**
 * The sandbox story's `prod-diff` step (docs/architecture.md "The sandbox"): the prod PR Ferry
 * opened carries a `ferry/diff` check run (docs/diff-check.md) that passed and shows what the
 * merge would change in prod once kustomize has run: the shop image moving from 1.7.3 to 1.8.0 at
 * staging's digest, and no other line.
 */
import { shortDigest } from "../../../../src/embedding.js";
import { pullProbe } from "./observe.js";
import type { SandboxWorld } from "./sandbox-world.js";
import { CONFIG_REPO, FIRST_VERSION, imageRepository, NEW_VERSION, OWNER } from "./story-repos.js";
import { done, notYet, waitUntil } from "./wait-until.js";

const DIFF_CHECK = "ferry/diff";

interface DiffRun {
  conclusion: string | null;
  summary: string;
  text: string;
}

/** The completed `ferry/diff` run on `sha`, waited for with the story's deadline. */
async function completedDiffRun(world: SandboxWorld, sha: string): Promise<DiffRun> {
  return waitUntil(
    `the ${DIFF_CHECK} check on ${sha.slice(0, 7)}`,
    async () => {
      const { data } = await world.as.mona.rest.checks.listForRef({
        owner: OWNER,
        repo: CONFIG_REPO,
        ref: sha,
        check_name: DIFF_CHECK,
      });
      const run = data.check_runs[0];
      if (run?.status !== "completed")
        return notYet(run ? `${DIFF_CHECK} ${run.status}` : `no ${DIFF_CHECK}`);
      return done({
        conclusion: run.conclusion,
        summary: run.output.summary ?? "",
        text: run.output.text ?? "",
      });
    },
    { signal: world.signal },
  );
}

/** 5. The prod PR's `ferry/diff`: success, prod's Deployment changed, the image line and nothing else. */
export async function prodDiff(world: SandboxWorld, digest: string | undefined): Promise<string> {
  const title = `Promote shop ${NEW_VERSION} to prod`;
  const pull = await waitUntil(
    `the PR "${title}"`,
    pullProbe(world, "prod", (p) => p.title === title && p.state === "open"),
    { signal: world.signal },
  );
  const run = await completedDiffRun(world, pull.headSha);
  const where = `${DIFF_CHECK} on #${pull.number}`;
  if (run.conclusion !== "success")
    throw new Error(`${where} concluded ${run.conclusion}: ${run.summary.split("\n")[0]}`);
  const row = run.summary.split("\n").find((line) => line.startsWith("| prod |"));
  if (!row) throw new Error(`${where} has no row for prod: ${run.summary.slice(0, 200)}`);
  if (run.summary.includes("| staging |"))
    throw new Error(`${where} shows staging too, which it does not touch`);
  const repository = imageRepository(world.registry.host);
  const moved = `${repository} ${FIRST_VERSION} → ${NEW_VERSION}`;
  const image = run.summary.split("\n").find((line) => line.includes(moved));
  if (!image) throw new Error(`${where} does not call out ${moved}`);
  if (digest && !image.includes(digest.replace(/^sha256:/, "").slice(0, 12)))
    throw new Error(`${where} names another digest than staging's ${shortDigest(digest)}: ${image}`);
  // The only changed lines of the rendered objects are the image's.
  const changed = run.text.split("\n").filter((line) => /^[-+](?![-+])/.test(line));
  const imageLines = changed.filter((line) => /^[-+][ -]*image: /.test(line));
  if (changed.length !== 2 || imageLines.length !== 2)
    throw new Error(`${where} changes more than the image line: ${changed.join(" / ")}`);
  const counts =
    run.summary
      .split("\n")
      .find((line) => line.startsWith("### prod: "))
      ?.slice(4) ?? row;
  return `${where}: success; ${counts}; ${image.replace(/^[-*\s]+/, "").replace(/`/g, "")}; the only line changed: ${imageLines[1]!.replace(/^\+\s*-?\s*/, "")}`;
}
