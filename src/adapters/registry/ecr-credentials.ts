import { parseEcrHost } from "../../core/cloud-registries.js";
import type { ExpiringCredentials } from "./credential-cache.js";
import { RegistryAuthError } from "./errors.js";

/**
 * Amazon ECR credentials for `auth: aws`: `ecr:GetAuthorizationToken` through the official SDK,
 * signed with the AWS SDK's default credential chain of Ferry's own environment (env variables,
 * web identity / IRSA token file, ECS and instance metadata), optionally after assuming
 * `roleArn` through STS. The answer's `authorizationToken` is base64 `AWS:<password>`, valid 12
 * hours (https://docs.aws.amazon.com/AmazonECR/latest/APIReference/API_GetAuthorizationToken.html,
 * https://docs.aws.amazon.com/AmazonECR/latest/APIReference/API_AuthorizationData.html).
 */

export interface EcrCredentialOptions {
  /** Tests only: the ECR (and STS) endpoint, a loopback fake; production uses the region's endpoint. */
  endpoint?: string;
  now: () => number;
}

/** How `ferry check` and errors name who Ferry is at AWS, without a secret. */
export function ecrIdentity(roleArn: string | undefined): string {
  return roleArn ? `role ${roleArn}` : "the AWS default credential chain";
}

export async function fetchEcrCredentials(
  registry: string,
  roleArn: string | undefined,
  options: EcrCredentialOptions,
): Promise<ExpiringCredentials> {
  const ecr = parseEcrHost(registry);
  if (!ecr)
    throw new RegistryAuthError(
      `${registry}: auth: aws needs an ECR host <account>.dkr.ecr.<region>.amazonaws.com`,
    );
  // Loaded on first use: deployments without ECR never load the SDK.
  const [{ ECRClient, GetAuthorizationTokenCommand }, providers] = await Promise.all([
    import("@aws-sdk/client-ecr"),
    import("@aws-sdk/credential-providers"),
  ]);
  const endpoint = options.endpoint ? { endpoint: options.endpoint } : {};
  const credentials = roleArn
    ? providers.fromTemporaryCredentials({
        params: { RoleArn: roleArn, RoleSessionName: "ferry" },
        clientConfig: { region: ecr.region, ...endpoint },
      })
    : providers.fromNodeProviderChain();
  const client = new ECRClient({ region: ecr.region, credentials, maxAttempts: 2, ...endpoint });
  const where = `auth: aws as ${ecrIdentity(roleArn)}`;
  let data;
  try {
    const answer = await client.send(new GetAuthorizationTokenCommand({}));
    data = answer.authorizationData?.[0];
  } catch (error) {
    throw new RegistryAuthError(
      `${registry}: ${where}: ECR GetAuthorizationToken failed: ${awsErrorText(error)}`,
    );
  } finally {
    client.destroy();
  }
  const decoded = data?.authorizationToken
    ? Buffer.from(data.authorizationToken, "base64").toString("utf8")
    : "";
  const colon = decoded.indexOf(":");
  if (colon <= 0 || colon === decoded.length - 1)
    throw new RegistryAuthError(`${registry}: ${where}: ECR answered no usable authorization token`);
  return {
    username: decoded.slice(0, colon),
    password: decoded.slice(colon + 1),
    // Without expiresAt, assume the documented 12 hours.
    expiresAt: data?.expiresAt?.getTime() ?? options.now() + 12 * 3600_000,
  };
}

/** The SDK error's name and first line: AWS error messages name the action and principal, not a secret. */
function awsErrorText(error: unknown): string {
  if (!(error instanceof Error)) return "unknown error";
  const name = error.name && error.name !== "Error" ? `${error.name}: ` : "";
  return `${name}${(error.message.split("\n")[0] ?? "").slice(0, 300)}`;
}
