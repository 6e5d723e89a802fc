/**
 * End to end: `/ferry why <env> <image>[@tag]` answers on an issue with the reason chain for one
 * tag, read from the default branch, the registry and Ferry's state: a hold, a tag the range
 * refuses, a tag not newer than what runs, and prod waiting for staging.
 */
import { afterEach, describe, expect, it } from "vitest";
import { commandReply, startWorld, type World } from "../support/app-e2e-world.js";

describe("/ferry why (end to end)", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("names the check that holds each tag back, and that nothing does for the one staging will take", async () => {
    world = await startWorld({ ci: true });
    await world.push("1.8.0");
    const issue = await world.openIssue();

    // The policy is ^1.0.0: 2.0.0 is refused by the range, whatever else holds.
    await world.push("2.0.0");
    expect(await commandReply(world, issue, "/ferry why staging shop@2.0.0")).toMatch(
      /shop@2\.0\.0 in staging: not used: policy: 2\.0\.0 is outside the policy's range \^1\.0\.0/,
    );
    // Staging runs 1.8.0 after the push: 1.7.0 is not newer.
    expect(await commandReply(world, issue, "/ferry why staging shop@1.7.0")).toMatch(
      /not used: newer: not newer than 1\.8\.0/,
    );

    await commandReply(world, issue, "/hold staging");
    await world.push("1.9.0");
    const held = await commandReply(world, issue, "/ferry why staging shop");
    // Without a tag: the newest the policy admits, 1.9.0, waiting on the hold.
    expect(held).toMatch(/shop@1\.9\.0 in staging: waits: hold: on hold since .* by @mona/);
    expect(held).toMatch(/\| policy \| ✅ \|/);

    // prod follows staging and changes only by command.
    const prod = await commandReply(world, issue, "/ferry why prod shop@1.9.0");
    expect(prod).toMatch(/\| update \| ⏳ \| update: manual/);
    expect(prod).toMatch(/\| upstream \| ⏳ \| staging runs 1\.8\.0/);

    await commandReply(world, issue, "/unhold staging");
    await world.push("1.9.1");
    // Unheld, the push is promoted: staging now runs 1.9.1, which the answer says.
    expect(await commandReply(world, issue, "/ferry why staging shop@1.9.1")).toMatch(
      /not used: newer: the environment already runs 1\.9\.1/,
    );
  });
});
