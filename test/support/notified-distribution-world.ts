/**
 * The push route end to end: the GitHub emulator with the org acme and Ferry's app, `ferry serve`
 * with its distribution notification route, and a real CNCF distribution registry that notifies
 * that route of every push (https://distribution.github.io/distribution/about/notifications/).
 * The test then creates acme/config and installs the app (`appId`) when its config is ready.
 */
import { expect } from "vitest";
import {
  startFerryServer,
  type FerryServer,
  type FerryServerOptions,
} from "../../src/server/ferry-server.js";
import {
  startGitHubEmulator,
  type GitHubEmulator,
  accounts,
} from "../../packages/sandbox/src/github/index.js";
import { ferryAppManifest, UnthrottledOctokit } from "../../packages/sandbox/src/ferry-app.js";
import { startDistribution, type RunningDistribution } from "./registry-distribution.js";

export interface NotifiedDistributionWorld {
  emu: GitHubEmulator;
  appId: number;
  server: FerryServer;
  distribution: RunningDistribution;
  /** The registry hints Ferry has received so far. */
  hints(): Promise<number>;
  /** Until Ferry has received at least `count` more hints than `before` and finished the work they queued. */
  settleAfter(before: number, count?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startNotifiedDistribution(options: {
  webhookSecret: string;
  /** The Authorization header distribution sends with each notification. */
  notifySecret: string;
  /** More `ferry serve` options (a status token, the `ferry` options a setting makes). */
  server?: Partial<FerryServerOptions>;
}): Promise<NotifiedDistributionWorld> {
  const emu = await startGitHubEmulator();
  accounts.createOrg(emu, "acme");
  const app = accounts.createApp(emu, {
    slug: "ferry",
    permissions: ferryAppManifest().permissions,
    webhookSecret: options.webhookSecret,
  });
  const server = await startFerryServer({
    appId: app.id,
    privateKey: app.privateKey,
    webhookSecret: options.webhookSecret,
    baseUrl: emu.apiUrl,
    Octokit: UnthrottledOctokit,
    scanIntervalMs: false,
    registrySecrets: { distribution: options.notifySecret },
    registryCoalesceMs: 20,
    logLevel: "fatal",
    ...options.server,
  });
  accounts.setWebhook(emu, app.id, `${server.url}/api/github/webhooks`, options.webhookSecret);
  const distribution = await startDistribution("none", {
    notifications: [
      { url: `${server.url}/registry/distribution`, headers: { Authorization: options.notifySecret } },
    ],
  }).catch(async (error: unknown) => {
    await server.close();
    await emu.close();
    throw error;
  });
  const hints = async (): Promise<number> => {
    const metric = await server.metrics.getSingleMetric("ferry_registry_hints_total")?.get();
    return (metric?.values ?? []).reduce((sum, value) => sum + value.value, 0);
  };
  return {
    emu,
    appId: app.id,
    server,
    distribution,
    hints,
    async settleAfter(before, count = 1) {
      for (let i = 0; i < 400 && (await hints()) < before + count; i++)
        await new Promise((resolve) => setTimeout(resolve, 25));
      expect(await hints()).toBeGreaterThanOrEqual(before + count);
      await server.idle();
    },
    async close() {
      await server.close();
      await distribution.close();
      await emu.close();
    },
  };
}
