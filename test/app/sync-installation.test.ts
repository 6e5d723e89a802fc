import { describe, expect, it } from "vitest";
import { syncInstallation } from "../../src/app/sync-installation.js";
import { WorkQueue } from "../../src/app/work-queue.js";

const silent = { info: () => {}, warn: () => {}, error: () => {} };

describe("syncInstallation", () => {
  it("syncs every installation of a scan, not only the first two (one app, several organisations)", async () => {
    const listed: string[] = [];
    const queue = new WorkQueue(silent);
    for (const [id, name] of [
      [1, "acme"],
      [2, "globex"],
      [3, "initech"],
    ] as const) {
      syncInstallation(
        {
          id,
          repositories: async () => {
            listed.push(name);
            return [];
          },
          depsFor: () => {
            throw new Error("no repositories to sync");
          },
        },
        queue,
        { reason: "scan" },
      );
    }
    await queue.idle();
    expect(listed.sort()).toEqual(["acme", "globex", "initech"]);
  });
});
