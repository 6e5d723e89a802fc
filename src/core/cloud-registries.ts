/**
 * What a registry host says about the cloud that serves it. Amazon ECR private registries are
 * `<account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn]`
 * (https://docs.aws.amazon.com/AmazonECR/latest/userguide/Registries.html), so the region of its
 * `GetAuthorizationToken` call comes from the host and never from the config.
 */
const ECR_HOST = /^(\d{12})\.dkr\.ecr(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-\d+)\.amazonaws\.com(?:\.cn)?$/;

export interface EcrRegistry {
  account: string;
  region: string;
}

/** The account and region of an ECR registry host (a port is ignored), or undefined. */
export function parseEcrHost(host: string): EcrRegistry | undefined {
  const match = ECR_HOST.exec(host.toLowerCase().replace(/:\d+$/, ""));
  return match ? { account: match[1]!, region: match[2]! } : undefined;
}

/**
 * Google Artifact Registry (`<location>-docker.pkg.dev`) and Container Registry (`gcr.io`,
 * `<region>.gcr.io`): registries that accept an OAuth access token as the password of user
 * `oauth2accesstoken` (https://cloud.google.com/artifact-registry/docs/docker/authentication#token).
 */
export function isGoogleRegistryHost(host: string): boolean {
  const name = host.toLowerCase().replace(/:\d+$/, "");
  return /^[a-z0-9-]+-docker\.pkg\.dev$/.test(name) || /^(?:[a-z]+\.)?gcr\.io$/.test(name);
}

/**
 * Azure Container Registry login servers: `<name>.azurecr.io` (and the sovereign clouds'
 * `.azurecr.cn`, `.azurecr.us`), which exchange an Entra ID token at `/oauth2/exchange`
 * (https://learn.microsoft.com/en-us/azure/container-registry/container-registry-authentication).
 */
export function isAzureRegistryHost(host: string): boolean {
  return /^[a-z0-9]{5,50}\.azurecr\.(?:io|cn|us)$/.test(host.toLowerCase().replace(/:\d+$/, ""));
}

/** The variables that name who Ferry is at Entra ID (not secrets): shown in registry errors. */
export const AZURE_IDENTITY_VARIABLES = ["AZURE_CLIENT_ID", "AZURE_TENANT_ID"] as const;
