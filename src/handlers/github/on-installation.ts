import { syncInstallation } from "../../app/sync-installation.js";
import { type HandlerEvent, type HandlerServices, installationOf } from "./services.js";

/** installation / installation_repositories: a first sync of the repos Ferry can now see. */
export async function onInstallation(
  event: HandlerEvent<{ installation?: { id: number } }>,
  services: HandlerServices,
): Promise<void> {
  syncInstallation(installationOf(services, event.octokit, event.payload.installation?.id), services.queue, {
    reason: event.name,
  });
}
