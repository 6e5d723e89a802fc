import type { Command } from "../core/pr/commands.js";
import { formatExplanation } from "../core/why/explain-tag.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { repoFileSource } from "./repo-files.js";
import { soakPending } from "./soak.js";
import { loadState } from "./state-ref.js";
import { ciGate } from "./sync-repository.js";
import { explainImageTag } from "./why-tag.js";

/**
 * `/ferry why <env> <image>[@tag]`: every check Ferry applies to that tag in that environment,
 * from the default branch's config and files, the registry, Ferry's state, CI and the upstream's
 * soak, as a table (docs/config.md "Why a tag is not used"). Read-only.
 */
export async function whyAnswer(
  deps: AppDeps,
  loaded: LoadedConfig,
  command: Extract<Command, { name: "why" }>,
): Promise<string> {
  const { config } = loaded;
  const { state } = await loadState(deps);
  const explanation = await explainImageTag(
    {
      registry: deps.registryFor(config),
      files: repoFileSource(deps.github, loaded.base.treeSha),
      config,
      now: deps.now(),
      secrets: deps.secrets,
      state,
      ci: ciGate(deps, config),
      soakPending: async (upstream) =>
        (await soakPending(deps, loaded, upstream, config.environments[command.environment]?.soak))?.reason,
    },
    {
      environment: command.environment,
      image: command.imageName,
      ...(command.tag !== undefined ? { tag: command.tag } : {}),
    },
  );
  return formatExplanation(explanation, true);
}
