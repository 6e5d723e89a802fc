import type { FerryConfig } from "../core/config/schema.js";
import { formatDuration, parseDuration } from "../core/duration.js";
import { healthReporters } from "../core/health/health-reporters.js";
import type { AppDeps } from "./app-deps.js";
import type { GitHubDeployments } from "./github-port.js";

/**
 * Why an environment with `from` and `soak` may not take its upstream's versions yet, or undefined
 * when it may (`soak` in docs/config.md "Environments"). Read from the Deployment
 * statuses the upstream's reconciler reports; an upstream that reports no health has nothing to
 * wait for. Shared by `/promote` and by automatic environments that follow their upstream.
 */
export async function soakPending(
  deps: AppDeps<GitHubDeployments>,
  config: FerryConfig,
  upstream: string,
  soak: string | undefined,
): Promise<{ code: "unhealthy" | "soaking"; reason: string } | undefined> {
  // Without a soak there is nothing to wait for; the PR's own checks and review gate the merge.
  if (soak === undefined) return undefined;
  const health = await deps.github.deploymentHealth(
    upstream,
    healthReporters(config, upstream, deps.appLogin),
  );
  if (!health) return undefined;
  if (health.state !== "success")
    return { code: "unhealthy", reason: `${upstream} is not healthy (${health.state})` };
  const healthyFor = deps.now().getTime() - health.since.getTime();
  if (healthyFor < parseDuration(soak)) {
    return {
      code: "soaking",
      reason: `${upstream} has been healthy for ${formatDuration(healthyFor)}, less than its soak of ${soak}`,
    };
  }
  return undefined;
}
