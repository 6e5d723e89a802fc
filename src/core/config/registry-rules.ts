import { DOCKER_HUB, parseImageName, registryApiHost } from "../image-ref.js";
import { isAzureRegistryHost, isGoogleRegistryHost, parseEcrHost } from "../cloud-registries.js";
import { classifyHost } from "../net-address.js";
import {
  isRegistryEnvAllowed,
  isServerSecretName,
  REGISTRY_ENV_PREFIX,
  type ConfigContext,
} from "./config-context.js";
import { ambientCredentialName, isSecretBindingName, secretUseProblem } from "./secret-bindings.js";

export interface RuleProblem {
  path: string[];
  message: string;
}

interface LooseRegistry {
  auth?: unknown;
  roleArn?: unknown;
  username?: unknown;
  insecure?: unknown;
  passwordEnv?: unknown;
  tokenEnv?: unknown;
}

/** Fields that name an environment variable Ferry reads a secret from. */
const ENV_FIELDS = ["passwordEnv", "tokenEnv"] as const;

/**
 * What a config's `registries:` and image hosts may ask of the Ferry that reads it (the registry
 * client enforces the same at run time; docs/security.md). Errors (the config is refused) and warnings (it works, but not for everything it names), each
 * with the path of the offending field. Tolerant of data that failed the schema.
 */
export function registryRuleProblems(
  data: unknown,
  context: ConfigContext,
): { errors: RuleProblem[]; warnings: RuleProblem[] } {
  const errors: RuleProblem[] = [];
  const warnings: RuleProblem[] = [];
  if (!isObject(data)) return { errors, warnings };
  const registries = isObject(data.registries) ? data.registries : {};
  const images = isObject(data.images) ? data.images : {};
  for (const [name, image] of Object.entries(images)) {
    if (!isObject(image) || typeof image.repository !== "string") continue;
    let registry: string;
    try {
      registry = parseImageName(image.repository).registry;
    } catch {
      continue; // the schema reports it
    }
    const problem = addressRuleProblem(registry, context);
    if (problem) errors.push({ path: ["images", name, "repository"], message: problem });
  }
  for (const key of Object.keys(registries)) {
    const problem = addressRuleProblem(registryKeyHost(key), context);
    if (problem) errors.push({ path: ["registries", key], message: problem });
  }
  for (const [key, value] of Object.entries(registries)) {
    if (!isObject(value)) continue;
    const registry = value as LooseRegistry;
    for (const field of ENV_FIELDS) {
      const name = registry[field];
      if (typeof name !== "string") continue;
      const problem = secretFieldProblem(name, registryKeyHost(key), registry, context);
      if (problem) errors.push({ path: ["registries", key, field], message: `${field} ${problem}` });
    }
    errors.push(...providerRuleProblems(key, registry));
    const ambient = ambientProblem(key, registry, context);
    if (ambient) errors.push({ path: ["registries", key, "auth"], message: ambient });
    if (registry.auth !== "github") continue;
    const host = registryKeyHost(key);
    if (host !== context.githubContainerRegistry) {
      // The installation token can write contents, checks and PRs on every repository of the
      // installation: it must never reach a host the config chooses.
      errors.push({
        path: ["registries", key, "auth"],
        message: `auth: github sends the GitHub App installation token and is allowed only for ${context.githubContainerRegistry}, not ${JSON.stringify(key)}; use auth: basic or bearer with a FERRY_REGISTRY_* variable`,
      });
    } else if (registry.insecure === true) {
      errors.push({
        path: ["registries", key, "insecure"],
        message: "auth: github never sends the installation token over plain HTTP",
      });
    } else {
      warnings.push({
        path: ["registries", key, "auth"],
        message: `auth: github works only for public packages on ${host}: GitHub App installation tokens cannot pull private ones; for private images use username + passwordEnv with a personal access token (classic) with read:packages`,
      });
    }
  }
  return { errors, warnings };
}

/** Providers that take no variable: their own rules refuse `passwordEnv`/`tokenEnv` beside them. */
const PROVIDERS = new Set(["aws", "gcp", "azure", "dockerconfig", "github"]);

/**
 * Why a config may not name variable `name` as the secret for `host`: not a registry variable,
 * one of Ferry's own, or not bound by the operator to this host (and, in `ferry serve`, to this
 * installation; secret-bindings.ts).
 */
function secretFieldProblem(
  name: string,
  host: string,
  registry: LooseRegistry,
  context: ConfigContext,
): string | undefined {
  if (isServerSecretName(name))
    return `${name} names one of Ferry's or the platform's own secrets, which configs can never read`;
  if (isSecretBindingName(name))
    return `${name} is the binding of a secret, not a secret: name the secret itself`;
  if (!isRegistryEnvAllowed(name, context))
    return `${name} is not readable by configs: use a ${REGISTRY_ENV_PREFIX}* name, or ask the operator to list it in FERRY_REGISTRY_ENV_ALLOW`;
  if (typeof registry.auth === "string" && PROVIDERS.has(registry.auth)) return undefined;
  return secretUseProblem(context.secretBindings, {
    secret: name,
    host,
    ...(context.installationOwner !== undefined ? { owner: context.installationOwner } : {}),
  });
}

/**
 * `auth: aws | gcp | azure | dockerconfig` uses a credential of Ferry's own environment, which the
 * config does not hold but chooses the host for: bound by the operator like a secret
 * (`AMBIENT_CREDENTIALS` in secret-bindings.ts), to hosts and, in `ferry serve`, installations.
 */
function ambientProblem(key: string, registry: LooseRegistry, context: ConfigContext): string | undefined {
  const secret = ambientCredentialName(registry.auth);
  if (secret === undefined) return undefined;
  const problem = secretUseProblem(context.secretBindings, {
    secret,
    host: registryKeyHost(key),
    ...(context.installationOwner !== undefined ? { owner: context.installationOwner } : {}),
  });
  return problem && `auth: ${String(registry.auth)} uses the operator's own credentials: ${problem}`;
}

/**
 * `auth: aws | gcp | azure | dockerconfig` names a provider and never a secret: the credentials come from Ferry's own
 * environment (docs/security.md), the region from the ECR host, and they never travel over plain HTTP.
 */
function providerRuleProblems(key: string, registry: LooseRegistry): RuleProblem[] {
  const problems: RuleProblem[] = [];
  if (registry.roleArn !== undefined && registry.auth !== "aws")
    problems.push({ path: ["registries", key, "roleArn"], message: "roleArn is used only with auth: aws" });
  const source: Record<string, string> = {
    dockerconfig: "the Docker config.json the operator gives Ferry",
    gcp: "Google Application Default Credentials of Ferry's environment",
    azure: "the Azure default credential chain of Ferry's environment",
  };
  const from = typeof registry.auth === "string" ? source[registry.auth] : undefined;
  if (from)
    for (const field of ["username", "passwordEnv", "tokenEnv"] as const)
      if (registry[field] !== undefined)
        problems.push({
          path: ["registries", key, field],
          message: `auth: ${String(registry.auth)} takes its credentials from ${from}; remove ${field}`,
        });
  if (registry.auth === "gcp" && !isGoogleRegistryHost(registryKeyHost(key)))
    problems.push({
      path: ["registries", key, "auth"],
      message: `auth: gcp is for Artifact Registry (<location>-docker.pkg.dev) and gcr.io hosts, not ${JSON.stringify(key)}`,
    });
  if (registry.auth === "gcp" && registry.insecure === true)
    problems.push({
      path: ["registries", key, "insecure"],
      message: "auth: gcp never sends Google access tokens over plain HTTP",
    });
  if (registry.auth === "azure" && !isAzureRegistryHost(registryKeyHost(key)))
    problems.push({
      path: ["registries", key, "auth"],
      message: `auth: azure is for Azure Container Registry hosts (<name>.azurecr.io), not ${JSON.stringify(key)}`,
    });
  if (registry.auth === "azure" && registry.insecure === true)
    problems.push({
      path: ["registries", key, "insecure"],
      message: "auth: azure never sends Entra ID or ACR tokens over plain HTTP",
    });
  if (registry.auth !== "aws") return problems;
  if (!parseEcrHost(registryKeyHost(key)))
    problems.push({
      path: ["registries", key, "auth"],
      message: `auth: aws is for Amazon ECR hosts (<account>.dkr.ecr.<region>.amazonaws.com), not ${JSON.stringify(key)}`,
    });
  for (const field of ["username", "passwordEnv", "tokenEnv"] as const)
    if (registry[field] !== undefined)
      problems.push({
        path: ["registries", key, field],
        message: `auth: aws takes its credentials from the AWS credential chain of Ferry's environment; remove ${field}`,
      });
  if (registry.insecure === true)
    problems.push({
      path: ["registries", key, "insecure"],
      message: "auth: aws never sends ECR credentials over plain HTTP",
    });
  return problems;
}

/**
 * A registry at an address this Ferry refuses to contact (the registry client's rule): link-local
 * always (cloud metadata), loopback and private ones when the server refuses them. Names are
 * judged after DNS, at run time.
 */
function addressRuleProblem(registry: string, context: ConfigContext): string | undefined {
  let hostname: string;
  try {
    hostname = new URL(`http://${registryApiHost(registry)}`).hostname;
  } catch {
    return undefined;
  }
  const kind = classifyHost(hostname);
  if (kind === "link-local")
    return `registry ${registry} is at a link-local address (cloud metadata); Ferry never contacts it`;
  if (context.refusePrivateRegistries && (kind === "loopback" || kind === "private"))
    return `registry ${registry} is at a ${kind} address, which this Ferry refuses (set FERRY_ALLOW_PRIVATE_REGISTRIES=true for on-prem registries)`;
  return undefined;
}

/** A `registries:` key as the host the client would match it with (`docker.io` for Docker Hub aliases). */
function registryKeyHost(key: string): string {
  try {
    return parseImageName(`${key}/x`).registry;
  } catch {
    return key.toLowerCase() === DOCKER_HUB ? DOCKER_HUB : key.toLowerCase();
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
