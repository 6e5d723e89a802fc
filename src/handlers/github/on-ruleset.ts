import { syncRepository } from "../../app/sync-repository.js";
import type { HandlerEvent, HandlerServices, RepositoryPayload } from "./services.js";

/**
 * `repository_ruleset` (created, edited, deleted): the rules on Ferry's branches may have
 * changed, so the repository is synced at once; an environment a ruleset refused is written again
 * when its rules read differently now (rule-refusals.ts, docs/reliability.md row 58).
 */
export function onRepositoryRuleset(event: HandlerEvent<RepositoryPayload>, services: HandlerServices): void {
  const { repository } = event.payload;
  const owner = repository.owner.login;
  const repo = repository.name;
  services.queue.enqueue(`sync:${owner}/${repo}`, async () => {
    await syncRepository(services.depsFor(event.octokit, owner, repo), { reason: "scan" });
  });
}
