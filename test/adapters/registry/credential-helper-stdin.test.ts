import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fetchDockerConfigCredentials } from "../../../src/adapters/registry/docker-config-credentials.js";

/**
 * A credential helper that answers without reading the host from stdin (helpers that serve one
 * registry do): when it has exited before Ferry's write reaches the pipe, the write fails with
 * EPIPE, which must be ignored (the answer on stdout decides), not crash the process through an
 * unhandled 'error' event on the stdin socket.
 */
const dir = mkdtempSync(join(tmpdir(), "ferry-helper-stdin-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a credential helper that never reads stdin", () => {
  it("answers every time, and the process survives the helper closing stdin first", async () => {
    const helper = join(dir, "docker-credential-nostdin");
    // Closes stdin at once, then answers.
    writeFileSync(
      helper,
      `#!/bin/sh\nexec 0<&-\nprintf '{"Username":"ci","Secret":"nostdin-secret-0123"}'\n`,
    );
    chmodSync(helper, 0o755);
    const config = join(dir, "config.json");
    writeFileSync(config, JSON.stringify({ credHelpers: { "registry.example.com": "nostdin" } }));
    const env = { ...process.env, PATH: `${dir}:${process.env.PATH ?? ""}` };
    // Many runs, 20 at a time: the race between Ferry's write and the helper's exit is lost often enough.
    for (let round = 0; round < 10; round += 1) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetchDockerConfigCredentials("registry.example.com", config, { now: () => 0, env }),
        ),
      );
      expect(answers.map((answer) => answer.password)).toEqual(Array(20).fill("nostdin-secret-0123"));
    }
  });
});
