import { isLoopbackRegistry } from "../../core/image-ref.js";
import type { SecretRedactor } from "../../core/redact.js";
import {
  ambientCredentialName,
  secretUseProblem,
  type SecretBindings,
} from "../../core/config/secret-bindings.js";
import { azureIdentity, fetchAzureCredentials } from "./azure-credentials.js";
import type { CredentialCache, ExpiringCredentials } from "./credential-cache.js";
import { dockerConfigIdentity, fetchDockerConfigCredentials } from "./docker-config-credentials.js";
import { ecrIdentity, fetchEcrCredentials } from "./ecr-credentials.js";
import { fetchGcpCredentials, GCP_IDENTITY } from "./gcp-credentials.js";
import { RegistryAuthError } from "./errors.js";
import type { RegistryClientOptions } from "./registry-client-options.js";
import type { RegistryState, Transport } from "./transport.js";

/**
 * The credentials the registry client sends, from the config's `registries:`: a FERRY_REGISTRY_* variable
 * bound to the registry, the installation token for the GitHub's own registry only, a static Bearer token,
 * or a provider (ECR, Google, Azure, the operator's Docker config.json), cached per registry in
 * credential-cache.ts. Used by auth.ts.
 */

export interface Credentials {
  username: string;
  password: string;
  /** Set for credentials derived from a cloud provider (cached, forgotten when refused). */
  expiresAt?: number;
}

/** What the credential reads share: the client's options, the environment and its bindings, the caches. */
export interface CredentialContext {
  options: AuthOptions;
  env: Record<string, string | undefined>;
  secretBindings: SecretBindings;
  secrets: SecretRedactor;
  now: () => number;
  exchange: Transport["exchange"];
  providerCredentials: CredentialCache;
  identityEnv: Record<string, string | undefined>;
}

/** The options of the registry client that authentication reads. */
export type AuthOptions = Pick<
  RegistryClientOptions,
  | "githubToken"
  | "githubTokenHost"
  | "trustedRealmHosts"
  | "ecrEndpoint"
  | "azureAuthorityCa"
  | "identityEnv"
  | "dockerConfigPath"
  | "secretOwner"
>;

/**
 * `auth: aws | gcp | azure` (the provider's SDK) and `auth: dockerconfig` (config.json, credential helpers):
 * fetched once per registry until shortly before expiry.
 */
function cloudCredentials(ctx: CredentialContext, state: RegistryState): Promise<ExpiringCredentials> {
  const { options, secrets, now, exchange, providerCredentials, identityEnv } = ctx;
  const roleArn = state.config?.roleArn;
  const provider = state.config?.auth;
  return providerCredentials.get(state.registry, async () => {
    const credentials =
      provider === "dockerconfig"
        ? await fetchDockerConfigCredentials(state.registry, options.dockerConfigPath, { now })
        : provider === "gcp"
          ? await fetchGcpCredentials(state.registry, { now })
          : provider === "azure"
            ? await fetchAzureCredentials(state.registry, {
                now,
                origin: state.origin,
                exchange: (url, headers, body, maxBytes) =>
                  exchange(state, url, "POST", headers, maxBytes, body),
                identityEnv,
                ...(options.azureAuthorityCa ? { authorityCa: options.azureAuthorityCa } : {}),
              })
            : await fetchEcrCredentials(state.registry, roleArn, {
                now,
                ...(options.ecrEndpoint ? { endpoint: options.ecrEndpoint } : {}),
              });
    secrets.add(credentials.password);
    return credentials;
  });
}

/** Who the credentials of `state` come from, for a one-line error without a secret. */
export function credentialSource(ctx: CredentialContext, state: RegistryState): string {
  const { options, identityEnv } = ctx;
  const config = state.config;
  if (config?.auth === "aws") return `auth: aws as ${ecrIdentity(config.roleArn)}`;
  if (config?.auth === "dockerconfig") return dockerConfigIdentity(options.dockerConfigPath);
  if (config?.auth === "gcp") return `auth: gcp as ${GCP_IDENTITY}`;
  if (config?.auth === "azure") return `auth: azure as ${azureIdentity(identityEnv)}`;
  if (config?.auth === "github") return "auth: github (the installation token)";
  if (config?.passwordEnv) return `user ${config.username ?? ""} with ${config.passwordEnv}`;
  return "anonymous access";
}

/** The registry refused provider credentials: the next request (or cycle) fetches new ones. */
export function forgetRefused(
  ctx: CredentialContext,
  state: RegistryState,
  credentials: Credentials | undefined,
): void {
  const { providerCredentials } = ctx;
  if (credentials?.expiresAt !== undefined)
    providerCredentials.forget(state.registry, credentials as ExpiringCredentials);
}

export async function credentialsFor(
  ctx: CredentialContext,
  state: RegistryState,
): Promise<Credentials | undefined> {
  const { options, env, secrets } = ctx;
  const config = state.config;
  if (!config || config.auth === "none") return undefined;
  if (
    config.auth === "aws" ||
    config.auth === "gcp" ||
    config.auth === "azure" ||
    config.auth === "dockerconfig"
  ) {
    refuseUnboundSecret(ctx, state, ambientCredentialName(config.auth)!);
    return cloudCredentials(ctx, state);
  }
  if (config.auth === "github") {
    refuseForeignTokenHost(ctx, state);
    if (!options.githubToken)
      throw new RegistryAuthError(
        `${state.registry}: auth: github needs the GitHub App installation token, which is not available here`,
      );
    const password = await options.githubToken();
    secrets.add(password);
    return { username: "x-access-token", password };
  }
  if (config.username !== undefined && config.passwordEnv !== undefined) {
    refuseUnboundSecret(ctx, state, config.passwordEnv);
    const password = env[config.passwordEnv];
    if (password === undefined || password === "") {
      throw new RegistryAuthError(
        `${state.registry}: environment variable ${config.passwordEnv} (registries.${state.registry}.passwordEnv) is not set`,
      );
    }
    secrets.add(password);
    return { username: config.username, password };
  }
  return undefined;
}

/** Whether the config gives `state`'s registry credentials of any kind. */
export function hasCredentials(state: RegistryState): boolean {
  const config = state.config;
  if (!config || config.auth === "none") return false;
  return (
    config.auth !== undefined ||
    (config.username !== undefined && config.passwordEnv !== undefined) ||
    config.tokenEnv !== undefined
  );
}

/** Defence in depth behind the config check: the installation token never leaves its registry. */
function refuseForeignTokenHost(ctx: CredentialContext, state: RegistryState): void {
  const { options } = ctx;
  const allowed = (options.githubTokenHost ?? "ghcr.io").toLowerCase();
  const origin = new URL(state.origin);
  // Plain HTTP only on loopback (the sandbox's registry), which production refuses anyway.
  const plainAllowed = isLoopbackRegistry(state.registry);
  if (origin.host.toLowerCase() !== allowed || (origin.protocol !== "https:" && !plainAllowed))
    throw new RegistryAuthError(
      `${state.registry}: auth: github is allowed only for https://${allowed}; the installation token is not sent to ${origin.host}`,
    );
}

/**
 * Defence in depth behind the config rules: a variable is read only for a registry (and an
 * installation) its operator binding names (secret-bindings.ts), so it reaches no other host.
 */
function refuseUnboundSecret(ctx: CredentialContext, state: RegistryState, name: string): void {
  const { options, secretBindings } = ctx;
  const problem = secretUseProblem(secretBindings, {
    secret: name,
    host: state.registry,
    ...(options.secretOwner !== undefined ? { owner: options.secretOwner } : {}),
  });
  if (problem) throw new RegistryAuthError(`${state.registry}: ${problem}`);
}

export function staticBearer(ctx: CredentialContext, state: RegistryState): string | undefined {
  const { env, secrets } = ctx;
  const name = state.config?.tokenEnv;
  if (name === undefined) return undefined;
  refuseUnboundSecret(ctx, state, name);
  const token = env[name];
  if (token === undefined || token === "")
    throw new RegistryAuthError(
      `${state.registry}: environment variable ${name} (registries.${state.registry}.tokenEnv) is not set`,
    );
  secrets.add(token);
  return token;
}
