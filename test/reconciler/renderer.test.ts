/**
 * Which renderer runs and what it is given: `kustomize build` when kubectl is absent, a clear
 * error naming both tools when neither is on PATH, no token in its environment, and the sandbox
 * refusing to start without them.
 */
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { missingTools } from "../../packages/sandbox/src/command.js";
import { renderPath } from "../../src/reconciler/render-folder.js";
import {
  DEFAULT_RENDERER_LIMITS,
  findExecutable,
  findRenderer,
  runRenderer,
} from "../../src/adapters/render/render-tools.js";
import { configMapYaml, TempDirs } from "../support/reconciler-harness.js";

const temp = new TempDirs();
afterEach(() => temp.cleanup());

function configRepo(): string {
  const root = temp.make("ferry-render-");
  mkdirSync(path.join(root, "app"));
  writeFileSync(path.join(root, "app/kustomization.yaml"), "resources: [web.yaml]\nnamePrefix: staging-\n");
  writeFileSync(path.join(root, "app/web.yaml"), configMapYaml("web"));
  return root;
}

/** A PATH holding only `kustomize`: the real one when installed, else kubectl's built-in behind that name. */
function pathWithOnlyKustomize(): { dir: string; calls: string } {
  const installed = findRenderer(process.env.PATH);
  if (!installed) throw new Error("these tests need kubectl or kustomize on PATH");
  const dir = temp.make("ferry-path-");
  const calls = path.join(dir, "calls");
  const run =
    installed.name === "kustomize build"
      ? `exec '${installed.command}' "$@"`
      : `[ "$1" = build ] || exit 64\nshift\nexec '${installed.command}' kustomize "$@"`;
  writeFileSync(path.join(dir, "kustomize"), `#!/bin/sh\necho "$*" >> '${calls}'\n${run}\n`);
  chmodSync(path.join(dir, "kustomize"), 0o755);
  return { dir, calls };
}

describe("the renderer", () => {
  it("renders with kustomize build when kubectl is not on PATH", async () => {
    const { dir, calls } = pathWithOnlyKustomize();
    const root = configRepo();
    const rendered = await renderPath(root, "app", { env: { PATH: dir, HOME: root } });
    expect(rendered.map(({ object }) => object.metadata.name)).toEqual(["staging-web"]);
    expect(readFileSync(calls, "utf8")).toMatch(
      /^build --load-restrictor LoadRestrictionsRootOnly --enable-helm --helm-command helm \S+\/app\n$/,
    );
  });

  it("fails naming kubectl, kustomize and how to install them when neither is on PATH", async () => {
    const empty = temp.make("ferry-path-");
    await expect(renderPath(configRepo(), "app", { env: { PATH: empty } })).rejects.toThrow(
      /cannot render app: neither kubectl nor kustomize is on PATH: install kubectl \(https:\/\/kubernetes\.io\/docs\/tasks\/tools\/\) or kustomize .*go install sigs\.k8s\.io\/kustomize\/kustomize\/v5@v5\./,
    );
  });

  it("hands a renderer started with no environment of its own none of the App's secrets", async () => {
    // What the App's process holds: its key, webhook secret and registry passwords (docs/security.md).
    const secrets = {
      PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----",
      WEBHOOK_SECRET: "hook-secret",
      FERRY_REGISTRY_GHCR_PASSWORD: "registry-password",
      GITHUB_TOKEN: "ghs_token",
      FERRY_GITHUB_TOKEN: "ghs_ferry",
    };
    for (const [name, value] of Object.entries(secrets)) vi.stubEnv(name, value);
    try {
      const printEnv = { name: "env", command: "/usr/bin/env", args: () => [] };
      const output = await runRenderer([printEnv], configRepo(), DEFAULT_RENDERER_LIMITS, {
        allowedPrefixes: [],
      });
      const names = output.split("\n").map((line) => line.split("=")[0]);
      expect(names).toContain("PATH");
      for (const [name, value] of Object.entries(secrets)) {
        expect(names).not.toContain(name);
        expect(output).not.toContain(value);
      }
      expect(names.filter((name) => /PRIVATE_KEY|WEBHOOK_SECRET|^FERRY_REGISTRY_/.test(name!))).toEqual([]);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("hands the renderer no token and no way out, with or without a remote base allowed", async () => {
    const dir = temp.make("ferry-path-");
    writeFileSync(
      path.join(dir, "kubectl"),
      `#!/bin/sh\nprintf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: env\\ndata:\\n  token: "%s"\\n  proxy: "%s"\\n  git: "%s"\\n' "\${FERRY_GITHUB_TOKEN:-none}\${FERRY_GIT_TOKEN:-}" "$HTTPS_PROXY" "$GIT_ALLOW_PROTOCOL"\n`,
    );
    chmodSync(path.join(dir, "kubectl"), 0o755);
    const env = { PATH: dir, FERRY_GITHUB_TOKEN: "ghs_secret", FERRY_GIT_TOKEN: "git_secret" };
    const [blocked] = await renderPath(configRepo(), "app", { env });
    expect(blocked!.object.data).toEqual({
      token: "none",
      proxy: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      git: "none",
    });
    // An operator's own proxy is not the way out either, and an allowed remote base is fetched by
    // Ferry, never by the renderer: its proxy admits nothing and git no protocol.
    const [allowed] = await renderPath(configRepo(), "app", {
      env: { ...env, HTTPS_PROXY: "http://proxy.internal:3128" },
      allowRemoteBases: ["https://github.com/acme/"],
    });
    expect(allowed!.object.data).toEqual({
      token: "none",
      proxy: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      git: "none",
    });
  });

  it("lets the sandbox name what is missing before it starts anything", () => {
    const empty = temp.make("ferry-path-");
    expect(missingTools(empty)).toEqual([
      expect.stringMatching(/^git is not on PATH: install git/),
      expect.stringMatching(/^neither kubectl nor kustomize is on PATH/),
    ]);
    const { dir } = pathWithOnlyKustomize();
    symlinkSync(findExecutable("git", process.env.PATH)!, path.join(dir, "git"));
    expect(missingTools(dir)).toEqual([]);
  });
});
