import { syncInstallation } from "../../app/sync-installation.js";
import {
  type HandlerEvent,
  type HandlerServices,
  installationOf,
  type RepositoryPayload,
} from "./services.js";

interface PackagePayload extends RepositoryPayload {
  action: string;
}

/** registry_package/package published (GHCR): hints for the repositories it names. */
export async function onPackage(
  event: HandlerEvent<PackagePayload>,
  services: HandlerServices,
  repositories: string[],
): Promise<void> {
  if (repositories.length === 0) return;
  syncInstallation(installationOf(services, event.octokit, event.payload.installation?.id), services.queue, {
    reason: event.name,
    repositories,
  });
}
