import type { Probot } from "probot";
import type { OctokitLike } from "../adapters/github/github-repo.js";
import type { InstallationRepository } from "../app/sync-installation.js";

/** Up to 1,000 unarchived repositories an installation can see, with their default branches. */
export async function installationRepos(octokit: OctokitLike): Promise<InstallationRepository[]> {
  const repos: InstallationRepository[] = [];
  for (let page = 1; page <= 10; page++) {
    const { data } = await octokit.rest.apps.listReposAccessibleToInstallation({ per_page: 100, page });
    for (const repository of data.repositories) {
      // The listing names each default branch: one request less per repository and scan.
      if (!repository.archived)
        repos.push({
          owner: repository.owner.login,
          repo: repository.name,
          ...(repository.default_branch ? { defaultBranch: repository.default_branch } : {}),
        });
    }
    if (data.repositories.length < 100) break;
  }
  return repos;
}

/** Visits every installation of the app with an installation-authenticated Octokit. */
export async function eachInstallation(
  probot: Probot,
  visit: (octokit: OctokitLike, installationId: number) => Promise<void>,
): Promise<void> {
  const appOctokit = await probot.auth();
  const installations = await appOctokit.paginate(appOctokit.rest.apps.listInstallations, {
    per_page: 100,
  });
  for (const installation of installations) {
    const octokit = (await probot.auth(installation.id)) as unknown as OctokitLike;
    await visit(octokit, installation.id);
  }
}
