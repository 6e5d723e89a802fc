import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LookupFunction } from "../../../src/adapters/registry/address-guard.js";
import { refreshTrustedRoot } from "../../../src/adapters/registry/trusted-root.js";

/** DNS from a table; every name it is asked is recorded. */
function mappedLookup(table: Record<string, string>, asked: string[]): LookupFunction {
  return ((hostname: string, _options: unknown, callback: (...args: unknown[]) => void) => {
    asked.push(hostname);
    const address = table[hostname];
    if (!address) return callback(Object.assign(new Error(`no ${hostname}`), { code: "ENOTFOUND" }), []);
    callback(null, [{ address, family: address.includes(":") ? 6 : 4 }]);
  }) as unknown as LookupFunction;
}

describe("the TUF mirror's address", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  const options = () => {
    dir = mkdtempSync(join(tmpdir(), "ferry-tuf-mirror-"));
    const rootPath = join(dir, "root.json");
    writeFileSync(rootPath, "{}");
    return { cachePath: join(dir, "cache"), rootPath, timeoutMs: 2_000 };
  };

  it("refuses a mirror at link-local or cloud metadata addresses, literal or resolved, before the TUF client starts", async () => {
    for (const mirror of [
      "https://169.254.169.254/tuf",
      "https://168.63.129.16",
      "https://[::ffff:0:a9fe:a9fe]",
      "https://[64:ff9b:1::a9fe:a9fe]",
    ])
      await expect(refreshTrustedRoot({ ...options(), mirrorURL: mirror })).rejects.toThrow(
        /is a link-local address; refused$/,
      );
    const asked: string[] = [];
    const lookup = mappedLookup({ "tuf.alibaba.test": "100.100.100.200" }, asked);
    await expect(
      refreshTrustedRoot({ ...options(), mirrorURL: "https://tuf.alibaba.test", lookup }),
    ).rejects.toThrow(
      "TUF mirror https://tuf.alibaba.test: tuf.alibaba.test resolves to 100.100.100.200, a link-local address; refused",
    );
    expect(asked).toEqual(["tuf.alibaba.test"]);
  });

  it("lets a mirror at any other address through to the TUF client", async () => {
    const error = await refreshTrustedRoot({ ...options(), mirrorURL: "http://127.0.0.1:1" }).catch(
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).not.toMatch(/refused$/);
  });
});
