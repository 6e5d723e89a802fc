/**
 * GitHub's secondary rate limit on content-creating requests (at most 80 a minute, 500 an hour;
 * https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits)
 * applies per installation however many Ferry replicas write for it. This Octokit plugin holds each
 * installation's writes (POST, PUT, PATCH, DELETE, GraphQL included) to this replica's part of both
 * budgets: each figure divided by the live members. A write over budget waits for its slot (the
 * windows slide) rather than drawing a 403 from GitHub: work is delayed, never dropped. This is
 * the one place Ferry paces its GitHub writes (docs/capacity.md).
 */
import { RequestBudget } from "../registry/limits.js";

export const GITHUB_WRITES_PER_MINUTE = 80;
export const GITHUB_WRITES_PER_HOUR = 500;
const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export interface WriteBudgetOptions {
  /** How many replicas share each installation's budget (the live scan members). */
  share: () => number;
  perMinute?: number;
  perHour?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

type RequestOptions = { method: string; url: string };

interface HookedOctokit {
  hook: {
    wrap(
      name: "request",
      hook: (
        request: (options: RequestOptions) => Promise<unknown>,
        options: RequestOptions,
      ) => Promise<unknown>,
    ): void;
  };
}

export interface WriteBudget {
  /** The Octokit plugin (`Octokit.plugin(budget.plugin)`). */
  plugin: (octokit: HookedOctokit, options: { auth?: unknown }) => void;
  /** Per installation: writes in the last minute and this replica's part of the per-minute budget. */
  use(): Record<string, { used: number; limit: number }>;
  /** Writes that had to wait for a slot so far (each a request GitHub would have refused). */
  readonly delayed: number;
}

export function createWriteBudget(options: WriteBudgetOptions): WriteBudget {
  const perMinute = options.perMinute ?? GITHUB_WRITES_PER_MINUTE;
  const perHour = options.perHour ?? GITHUB_WRITES_PER_HOUR;
  let delayed = 0;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const budgets = new Map<string, { minute: RequestBudget; hour: RequestBudget }>();
  const budgetFor = (installation: string): { minute: RequestBudget; hour: RequestBudget } => {
    let budget = budgets.get(installation);
    if (!budget) {
      budget = {
        minute: new RequestBudget(() => perMinute / Math.max(1, options.share())),
        hour: new RequestBudget(() => perHour / Math.max(1, options.share()), 3_600_000),
      };
      budgets.set(installation, budget);
    }
    return budget;
  };
  return {
    plugin(octokit, octokitOptions) {
      const installationId = (octokitOptions.auth as { installationId?: number | string } | undefined)
        ?.installationId;
      if (installationId === undefined) return;
      const budget = budgetFor(String(installationId));
      octokit.hook.wrap("request", async (request, options) => {
        const write =
          WRITE_METHODS.has(options.method.toUpperCase()) &&
          // Minting the installation's own token is the app's request, not the installation's write.
          !/\/app\/installations\/(\d+|\{installation_id\})\/access_tokens$/.test(options.url);
        if (!write) return request(options);
        // The hour's slot first, then the minute's: a write waiting for the hour holds no minute slot.
        const slots: { window: RequestBudget; at: number }[] = [];
        let waited = false;
        for (const window of [budget.hour, budget.minute]) {
          for (;;) {
            const at = now();
            const wait = window.take(at);
            if (wait === 0) {
              slots.push({ window, at });
              break;
            }
            waited = true;
            await sleep(wait);
          }
        }
        if (waited) delayed++;
        try {
          return await request(options);
        } finally {
          // GitHub counts the write when it arrives, which is after we sent it: the slot is held
          // from when the answer came back, so our window never frees a slot before GitHub's does.
          const done = now();
          for (const slot of slots) slot.window.retime(slot.at, done);
        }
      });
    },
    use() {
      const at = now();
      return Object.fromEntries(
        [...budgets].map(([installation, budget]) => [installation, budget.minute.use(at)]),
      );
    },
    get delayed() {
      return delayed;
    },
  };
}
