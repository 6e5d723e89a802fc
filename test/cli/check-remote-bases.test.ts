import { describe, expect, it } from "vitest";
import { runFerry } from "../support/cli-io.js";
import { tempDirPerTest } from "../support/temp-tree.js";

const CONFIG = `images:
  shop:
    repository: ghcr.io/acme/shop
environments:
  staging:
    paths: [overlays/staging]
`;

const temp = tempDirPerTest("ferry-check-");
const { put } = temp;

async function check(): Promise<{ code: number; stdout: string; stderr: string }> {
  return runFerry(["check", "--dir", "."], temp.dir, { now: () => new Date(0) });
}

describe("ferry check and remote bases", () => {
  it("warns on the environment's paths line when a kustomization loads a remote base", async () => {
    await put(".github/ferry.yml", CONFIG);
    await put(
      "overlays/staging/kustomization.yaml",
      "resources:\n  - https://github.com/acme/bases//shop?ref=v1\n  - web.yaml\nimages:\n- name: ghcr.io/acme/shop\n  newTag: 1.8.0\n",
    );
    const result = await check();
    const output = result.stdout + result.stderr;
    expect(output).toMatch(
      /\.github\/ferry\.yml:6:\d+ .*environment staging: overlays\/staging\/kustomization\.yaml loads the remote resources entry "https:\/\/github\.com\/acme\/bases\/\/shop\?ref=v1"; ferry reconcile refuses remote resources unless allowed with --allow-remote-base/,
    );
  });

  it("warns on a remote base under any spelling kustomize accepts (RESOURCES:, Components:, a merge key)", async () => {
    await put(".github/ferry.yml", CONFIG);
    await put(
      "overlays/staging/kustomization.yaml",
      "RESOURCES:\n  - http://127.0.0.1:8080/a.yaml\nx: &x\n  Components: [github.com/acme/c]\n<<: *x\n",
    );
    const output = Object.values(await check()).join("\n");
    expect(output).toMatch(/loads the remote RESOURCES entry "http:\/\/127\.0\.0\.1:8080\/a\.yaml"/i);
    expect(output).toMatch(/loads the remote components entry "github\.com\/acme\/c"/);
  });

  it("says nothing about local bases", async () => {
    await put(".github/ferry.yml", CONFIG);
    await put(
      "overlays/staging/kustomization.yaml",
      "resources:\n  - ../../base\nimages:\n- name: ghcr.io/acme/shop\n  newTag: 1.8.0\n",
    );
    const result = await check();
    expect(result.stdout + result.stderr).not.toMatch(/remote/);
    expect(result.code).toBe(0);
  });
});
