/**
 * The registry client `ferry reconcile` downloads charts with (`oci://` registries and Helm HTTP
 * repositories, for `Chart.yaml` dependencies and `ferry-chart.yaml`): the
 * image registries' client (address guard, size limits, retries), private and loopback
 * addresses refused in production as for image registries (FERRY_ALLOW_PRIVATE_REGISTRIES), and
 * credentials from the operator's Docker config (FERRY_DOCKER_CONFIG) for exactly the hosts it
 * names, through the same credential code as `auth: dockerconfig`. Any other host is read
 * anonymously.
 */
import { readFileSync, statSync } from "node:fs";
import { createRegistryClient, type RegistryClient } from "../adapters/registry/index.js";
import { configContextFromEnv } from "../core/config/config-context.js";
import type { FerryConfig } from "../core/config/schema.js";
import { UserError } from "../core/errors.js";

const MAX_DOCKER_CONFIG_BYTES = 1024 * 1024;

/** The hosts the Docker config holds credentials for (`auths`, `credHelpers`). */
function dockerConfigHosts(file: string): string[] {
  let doc: { auths?: unknown; credHelpers?: unknown };
  try {
    if (statSync(file).size > MAX_DOCKER_CONFIG_BYTES) throw new Error("over 1 MiB");
    doc = JSON.parse(readFileSync(file, "utf8")) as typeof doc;
  } catch (error) {
    throw new UserError(
      "docker-config-unreadable",
      `FERRY_DOCKER_CONFIG: cannot read it (${(error as Error).message.split("\n")[0]})`,
    );
  }
  const keys = (value: unknown) =>
    typeof value === "object" && value !== null && !Array.isArray(value) ? Object.keys(value) : [];
  // `https://index.docker.io/v1/` style keys name the host inside a URL.
  return [...keys(doc.auths), ...keys(doc.credHelpers)].map((key) =>
    key.replace(/^https?:\/\//, "").replace(/\/.*$/, ""),
  );
}

export function chartRegistryClient(env: Record<string, string | undefined>): RegistryClient {
  const context = configContextFromEnv(env);
  const registries: NonNullable<FerryConfig["registries"]> = {};
  if (env.FERRY_DOCKER_CONFIG)
    for (const host of dockerConfigHosts(env.FERRY_DOCKER_CONFIG))
      registries[host] = { auth: "dockerconfig" };
  return createRegistryClient({
    registries,
    env,
    secretBindings: context.secretBindings,
    refusePrivateRegistries: context.refusePrivateRegistries,
    ...(env.FERRY_DOCKER_CONFIG ? { dockerConfigPath: env.FERRY_DOCKER_CONFIG } : {}),
  });
}
