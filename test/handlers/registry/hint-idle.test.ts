/**
 * A registry notification is acknowledged at once and its work goes on behind the ack: the
 * server's `idle()` (what tests and shutdown wait on) must cover all of it, including the walk of
 * the installations that comes before any work is queued.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CanaryWatch } from "../../support/canary.js";
import { startStubbedFerry, type StubbedFerry } from "../../support/ferry-stub-server.js";
import { send } from "../../support/raw-http.js";
import { REGISTRY_PAYLOADS, sign256 } from "../../support/webhook-attacks.js";

let stub: StubbedFerry | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

describe("the server's idle()", () => {
  it("waits until a registry hint's GitHub calls have been answered, however slow GitHub is", async () => {
    stub = await startStubbedFerry(new CanaryWatch(), { installationsDelayMs: 500 });
    const body = REGISTRY_PAYLOADS.generic;
    const response = await send(stub.ferry.url, {
      path: "/registry/generic",
      headers: [
        ["Content-Type", "application/json"],
        ["X-Ferry-Signature-256", `sha256=${sign256(stub.secrets.generic, body)}`],
      ],
      body,
    });
    expect(response.status).toBe(202);
    // Wait for the effect: the hint has reached Ferry and its walk of the installations has begun.
    while (!stub.githubCalls.some((call) => call.startsWith("GET /app/installations")))
      await new Promise((resolve) => setImmediate(resolve));
    await stub.ferry.idle();
    expect(stub.githubCallsInFlight()).toBe(0);
  });
});
