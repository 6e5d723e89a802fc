import { describe, expect, it } from "vitest";
import { WorkQueue } from "../../../src/app/work-queue.js";
import { CommandFloodGuard } from "../../../src/handlers/github/command-flood-guard.js";
import { onChecksCompleted } from "../../../src/handlers/github/on-checks-completed.js";
import type { HandlerServices } from "../../../src/handlers/github/services.js";

const silent = { info: () => {}, warn: () => {}, error: () => {} };

function services() {
  const listings: number[] = [];
  const value: HandlerServices = {
    queue: new WorkQueue(silent),
    installationRepos: async () => {
      listings.push(listings.length);
      return [];
    },
    depsFor: () => {
      throw new Error("no repositories to sync");
    },
    commandGuard: new CommandFloodGuard(),
  };
  return { value, listings };
}

const source = {
  repository: { name: "shop", full_name: "acme/shop", default_branch: "main", owner: { login: "acme" } },
};

describe("onChecksCompleted", () => {
  it("merges a source build reported as workflow_run and check_suite in the same moment into one installation sync", async () => {
    const { value, listings } = services();
    const octokit = {} as never;
    // Both handlers run before the queue gets to work, as when the deliveries arrive together.
    const handled = [
      onChecksCompleted(
        {
          id: "1",
          name: "workflow_run",
          octokit,
          payload: {
            ...source,
            action: "completed",
            workflow_run: { head_sha: "abc", head_branch: "main", conclusion: "success" },
          },
        },
        value,
      ),
      onChecksCompleted(
        {
          id: "2",
          name: "check_suite",
          octokit,
          payload: {
            ...source,
            action: "completed",
            check_suite: { head_sha: "abc", head_branch: "main", conclusion: "success" },
          },
        },
        value,
      ),
    ];
    await Promise.all(handled);
    await value.queue.idle();
    expect(listings).toHaveLength(1);
  });

  it("does not sync on a failed source build", async () => {
    const { value, listings } = services();
    await onChecksCompleted(
      {
        id: "1",
        name: "workflow_run",
        octokit: {} as never,
        payload: {
          ...source,
          action: "completed",
          workflow_run: { head_sha: "abc", head_branch: "main", conclusion: "failure" },
        },
      },
      value,
    );
    await value.queue.idle();
    expect(listings).toHaveLength(0);
  });
});
