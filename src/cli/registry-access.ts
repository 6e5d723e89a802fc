import {
  createRegistryClient,
  trustedRootFromEnv,
  type RegistryClient,
  type RegistryClientOptions,
} from "../adapters/registry/index.js";
import { configContextFromEnv } from "../core/config/config-context.js";
import type { FerryConfig } from "../core/config/schema.js";
import { parseImageName } from "../core/image-ref.js";

/**
 * The registry client of `ferry plan` and `ferry check`: the config's `registries:` with the same
 * providers as the App (FERRY_REGISTRY_* variables, the cloud SDKs' chains of this environment,
 * FERRY_DOCKER_CONFIG, the Sigstore trusted root of FERRY_SIGSTORE_TRUSTED_ROOT). Each variable
 * goes only to the hosts of its `<NAME>_HOSTS` in this environment, as the config rules judged
 * (the CLI has no installation, so `_OWNERS` does not apply). `overrides` are for tests (loopback
 * endpoints of the fakes).
 */
export function cliRegistryClient(
  config: FerryConfig,
  env: Record<string, string | undefined>,
  overrides: Partial<RegistryClientOptions> = {},
): RegistryClient {
  // Read once, when the first signature is checked (a run that verifies nothing never reads it).
  let trustedRoot: ReturnType<typeof trustedRootFromEnv> | undefined;
  return createRegistryClient({
    ...(config.registries ? { registries: config.registries } : {}),
    env,
    secretBindings: configContextFromEnv(env).secretBindings,
    ...(env.FERRY_DOCKER_CONFIG ? { dockerConfigPath: env.FERRY_DOCKER_CONFIG } : {}),
    trustedRoot: () => (trustedRoot ??= trustedRootFromEnv(env)),
    ...overrides,
  });
}

/** Bounds of `ferry check`'s probe: one page of one tag per registry, no long retries. */
export const PROBE_LIMITS = { requestTimeoutMs: 10_000, maxRetries: 1, retryBaseMs: 200, maxBudgetWaitMs: 0 };

export type ProbeResult =
  | { key: string; repository: string; ok: true }
  | { key: string; repository: string; ok: false; problem: string }
  | { key: string; skipped: string };

/**
 * `ferry check`'s registry probe: for each entry of `registries:`, one authenticated read of the
 * first image the config takes from it, through the same auth a scan uses, so a wrong, expired or
 * revoked credential shows before the App meets it. `auth: github` is not probed: the
 * installation token exists only inside the App.
 */
export async function probeRegistries(
  client: Pick<RegistryClient, "checkAccess">,
  config: FerryConfig,
): Promise<ProbeResult[]> {
  const entries = Object.entries(config.registries ?? {});
  return Promise.all(
    entries.map(async ([key, settings]): Promise<ProbeResult> => {
      if (settings.auth === "github")
        return { key, skipped: "auth: github uses the App's installation token, which only the App holds" };
      const host = registryOf(`${key}/x`);
      const repository = Object.values(config.images)
        .map((image) => image.repository)
        .find((name) => registryOf(name) === host);
      if (!repository) return { key, skipped: "no image of this config is taken from it" };
      try {
        await client.checkAccess(repository);
        return { key, repository, ok: true };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        return { key, repository, ok: false, problem: message.split("\n")[0]! };
      }
    }),
  );
}

function registryOf(name: string): string | undefined {
  try {
    return parseImageName(name).registry;
  } catch {
    return undefined;
  }
}
