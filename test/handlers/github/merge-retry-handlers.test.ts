import { describe, expect, it } from "vitest";
import { WorkQueue } from "../../../src/app/work-queue.js";
import { CommandFloodGuard } from "../../../src/handlers/github/command-flood-guard.js";
import {
  MAX_REQUEUES,
  onPullRequestDequeued,
  onPullRequestReview,
} from "../../../src/handlers/github/merge-retry-handlers.js";
import type { HandlerServices } from "../../../src/handlers/github/services.js";

const silent = { info: () => {}, warn: () => {}, error: () => {} };

/** Services whose GitHub records each merge attempt (its first read) and each comment. */
function services() {
  const attempts: string[] = [];
  const comments: string[] = [];
  const github = new Proxy(
    {},
    {
      get(_target, name) {
        if (name === "owner") return "acme";
        if (name === "repo") return "config";
        if (name === "comment") return async (_number: number, body: string) => void comments.push(body);
        return async () => {
          attempts.push(String(name));
          throw new Error("not needed here");
        };
      },
    },
  );
  const value: HandlerServices = {
    queue: new WorkQueue(silent),
    installationRepos: async () => [],
    depsFor: () => ({ appLogin: "ferry[bot]", github, log: silent }) as never,
    commandGuard: new CommandFloodGuard(),
  };
  return { value, attempts, comments };
}

const repository = {
  name: "config",
  full_name: "acme/config",
  default_branch: "main",
  owner: { login: "acme" },
};
const pull = (login: string) => ({
  number: 7,
  head: { ref: "ferry/staging", sha: "a".repeat(40) },
  user: { login },
});
const dequeued = (reason: string, login = "ferry[bot]") => ({
  id: "1",
  name: "pull_request",
  octokit: {} as never,
  payload: { repository, action: "dequeued", reason, pull_request: pull(login) },
});

describe("pull_request dequeued", () => {
  it(`re-adds Ferry's PR ${MAX_REQUEUES} times per commit, then says so once and stops`, async () => {
    const { value, attempts, comments } = services();
    for (let round = 0; round < MAX_REQUEUES + 3; round++) {
      await onPullRequestDequeued(dequeued("CI_FAILURE"), value);
      await value.queue.idle();
    }
    expect(attempts.length).toBe(MAX_REQUEUES);
    expect(comments).toHaveLength(1);
    expect(comments[0]).toContain(
      `removed this pull request ${MAX_REQUEUES + 1} times (last reason: CI_FAILURE)`,
    );
  });

  it("leaves a PR a person took out of the queue, and PRs Ferry did not open", async () => {
    const { value, attempts, comments } = services();
    await onPullRequestDequeued(dequeued("MANUAL"), value);
    await onPullRequestDequeued(dequeued("CI_FAILURE", "mallory"), value);
    await value.queue.idle();
    expect(attempts).toEqual([]);
    expect(comments).toEqual([]);
  });
});

describe("pull_request_review submitted", () => {
  it("retries the merge of Ferry's PR on an approval only", async () => {
    const { value, attempts } = services();
    const review = (state: string) => ({
      id: "2",
      name: "pull_request_review",
      octokit: {} as never,
      payload: { repository, action: "submitted", review: { state }, pull_request: pull("ferry[bot]") },
    });
    await onPullRequestReview(review("commented"), value);
    await value.queue.idle();
    expect(attempts).toEqual([]);
    await onPullRequestReview(review("approved"), value);
    await value.queue.idle();
    expect(attempts.length).toBe(1);
  });
});
