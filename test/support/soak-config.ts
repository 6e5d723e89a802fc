/**
 * Shared set-up of the health-source e2e tests (docs/config.md "Health"): the app e2e world's
 * config with a `health:` source on staging and a 30-minute `soak` on prod, committed by mona.
 */
import type { World } from "./app-e2e-world.js";

/** The default branch's head commit of acme/config. */
export async function configHead(world: World): Promise<string> {
  return (await world.as.mona.rest.repos.getBranch({ owner: "acme", repo: "config", branch: "main" })).data
    .commit.sha;
}

/** Gives staging the `health:` line (indented under the environment) and prod a 30m soak on it. */
export async function soakOnStagingHealth(world: World, healthLine: string, message: string): Promise<void> {
  const { data } = await world.as.mona.rest.repos.getContent({
    owner: "acme",
    repo: "config",
    path: ".github/ferry.yml",
  });
  const file = data as { sha: string; content: string };
  const before = Buffer.from(file.content, "base64").toString("utf8");
  const text = before
    .replace("    merge: auto\n", `    merge: auto\n${healthLine}`)
    .replace("    from: staging\n", "    from: staging\n    soak: 30m\n");
  if (!text.includes(healthLine) || !text.includes("soak: 30m"))
    throw new Error("the e2e world's config no longer has the lines soakOnStagingHealth edits");
  await world.as.mona.rest.repos.createOrUpdateFileContents({
    owner: "acme",
    repo: "config",
    path: ".github/ferry.yml",
    message,
    content: Buffer.from(text).toString("base64"),
    sha: file.sha,
  });
  await world.settle();
}
