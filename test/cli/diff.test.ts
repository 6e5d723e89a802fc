import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import { captureIo } from "../support/cli-io.js";

const CONFIG = `images:\n  shop:\n    repository: ghcr.io/acme/shop\nenvironments:\n  staging:\n    paths: [envs/staging]\n  prod:\n    paths: [envs/prod/kustomization.yaml]\n`;
const DIGEST = `sha256:${"c".repeat(64)}`;
const kustomization = (tag: string, extra = "") =>
  `resources:\n  - ../../base\n${extra ? `  - ${extra}\n` : ""}images:\n  - name: ghcr.io/acme/shop\n    newTag: "${tag}"\n`;
const BASE = {
  "base/kustomization.yaml": "resources:\n  - deployment.yaml\n  - settings.yaml\n",
  "base/deployment.yaml": [
    "apiVersion: apps/v1",
    "kind: Deployment",
    "metadata: {name: shop, namespace: shop}",
    "spec:",
    "  selector: {matchLabels: {app: shop}}",
    "  template:",
    "    metadata: {labels: {app: shop}}",
    "    spec:",
    "      containers:",
    "        - name: shop",
    "          image: ghcr.io/acme/shop:1.0.0",
    "",
  ].join("\n"),
  "base/settings.yaml":
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {mode: fast}\n",
};

let dir: string;
function write(files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}
function commit(files: Record<string, string>, message: string): string {
  write(files);
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: "mona",
    GIT_AUTHOR_EMAIL: "m@example.com",
    GIT_COMMITTER_NAME: "mona",
    GIT_COMMITTER_EMAIL: "m@example.com",
  };
  execFileSync("git", ["-C", dir, "add", "-A"], { env });
  execFileSync("git", ["-C", dir, "commit", "-q", "-m", message], { env });
  return execFileSync("git", ["-C", dir, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
}

async function ferry(env: NodeJS.ProcessEnv, ...args: string[]) {
  const io = captureIo(dir, { now: () => new Date(0), env: { ...process.env, ...env } });
  return { code: await main(["diff", ...args], io), out: io.out, err: io.err };
}
const run = (...args: string[]) => ferry({}, ...args);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "ferry-diff-cli-"));
  execFileSync("git", ["-C", dir, "init", "-q", "-b", "main"]);
  commit(
    {
      ".github/ferry.yml": CONFIG,
      ...BASE,
      "envs/staging/kustomization.yaml": kustomization("1.7.3"),
      "envs/prod/kustomization.yaml": kustomization("1.7.3"),
    },
    "Initial config",
  );
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("ferry diff", () => {
  it("shows the rendered change between two commits: the image line and nothing else", async () => {
    const head = commit({ "envs/staging/kustomization.yaml": kustomization(`1.8.0@${DIGEST}`) }, "Promote");
    const { code, out, err } = await run("--base", "main~1", "--head", head);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toContain("=== staging: 0 added, 1 changed, 0 removed, 1 unchanged");
    expect(out).toContain("=== prod: 0 added, 0 changed, 0 removed, 2 unchanged");
    expect(out).toContain(
      `ghcr.io/acme/shop 1.7.3 → 1.8.0 (${DIGEST.slice(0, 19)}) (container shop of Deployment.apps shop/shop)`,
    );
    expect(out).toContain(
      "-        - image: ghcr.io/acme/shop:1.7.3\n+        - image: ghcr.io/acme/shop:1.8.0@",
    );
    expect(out.split("\n").filter((line) => /^[-+] /.test(line))).toHaveLength(2);
    // Nothing of the repository was touched: no worktree registered, the index is where it was.
    expect(
      execFileSync("git", ["-C", dir, "worktree", "list"], { encoding: "utf8" }).trim().split("\n"),
    ).toHaveLength(1);
    expect(execFileSync("git", ["-C", dir, "status", "--porcelain"], { encoding: "utf8" })).toBe("");
  });

  it("takes the working tree as head by default, uncommitted changes included, and --env picks one", async () => {
    write({ "envs/prod/kustomization.yaml": kustomization("2.0.0") });
    const { code, out } = await run("--base", "main", "--env", "prod");
    expect(code).toBe(0);
    expect(out).not.toContain("staging");
    expect(out).toContain("+        - image: ghcr.io/acme/shop:2.0.0");
  });

  it("exits 3 when nothing changes", async () => {
    const { code, out } = await run("--base", "main", "--head", "HEAD");
    expect(code).toBe(3);
    expect(out).toContain("=== staging: 0 added, 0 changed, 0 removed, 2 unchanged");
  });

  it("names what a dropped resource would prune, and fails with --fail-on-danger", async () => {
    write({ "base/kustomization.yaml": "resources:\n  - deployment.yaml\n" });
    unlinkSync(join(dir, "base/settings.yaml"));
    const plain = await run("--base", "main");
    expect(plain.code).toBe(0);
    expect(plain.out).toContain(
      "dangers (1 object would be pruned):\n  prune: ConfigMap shop/settings would be pruned",
    );
    const strict = await run("--base", "main", "--fail-on-danger", "--json");
    expect(strict.code).toBe(4);
    const parsed = JSON.parse(strict.out) as {
      environment: string;
      diff: { dangers: { reason: string }[] };
    }[];
    expect(
      parsed.map(({ environment, diff }) => [environment, diff.dangers.map((danger) => danger.reason)]),
    ).toEqual([
      ["staging", ["prune"]],
      ["prod", ["prune"]],
    ]);
  });

  it("shows a Secret's changed keys and never its values, nor the caller's tokens", async () => {
    const secret = (password: string) =>
      `apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop}\nstringData:\n  password: ${password}\n`;
    commit(
      {
        "envs/staging/secret.yaml": secret("first-password-value"),
        "envs/staging/kustomization.yaml": kustomization("1.7.3", "secret.yaml"),
      },
      "Secret",
    );
    write({ "envs/staging/secret.yaml": secret("second-password-value") });
    const token = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";
    write({
      "base/settings.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {mode: ${token}}\n`,
    });
    const { code, out } = await ferry({ FERRY_GITHUB_TOKEN: token }, "--base", "main", "--env", "staging");
    expect(code).toBe(0);
    expect(out).toContain("Secret keys changed: password (values never shown)");
    expect(out).toContain("+  password: (hidden, changed)");
    for (const value of ["first-password-value", "second-password-value", token])
      expect(out).not.toContain(value);
    expect(out).toContain("[REDACTED]");
  });

  it("says which path it could not render, and fails on a revision that is not one", async () => {
    write({
      ".github/ferry.yml": CONFIG.replace(
        "paths: [envs/staging]",
        "paths: [envs/staging, notes/values.txt, envs/gone]",
      ),
    });
    write({ "notes/values.txt": "not yaml" });
    const noted = await run("--base", "main", "--env", "staging");
    expect(noted.code).toBe(3);
    expect(noted.err).toContain(
      "ferry diff: staging: not rendered: the working tree: notes/values.txt: not a manifest, and no kustomization or chart beside it\n",
    );
    expect(noted.err).toContain(
      "ferry diff: staging: not rendered: the working tree: envs/gone: does not exist at this revision\n",
    );
    const bad = await run("--base", "no-such-branch");
    expect(bad.code).toBe(1);
    expect(bad.err).toBe(`ferry diff: "no-such-branch" is not a commit in ${dir}\n`);
    expect((await run()).code).toBe(2);
  });

  it("renders an Argo CD Application's sources with its overrides, and says which it did not apply", async () => {
    const app = (tag: string, replicas: number, workerTag: string) =>
      [
        "apiVersion: argoproj.io/v1alpha1",
        "kind: Application",
        "metadata: {name: shop, namespace: argocd}",
        "spec:",
        "  destination: {namespace: shop-argo}",
        "  sources:",
        "    - repoURL: https://github.com/acme/config",
        "      path: envs/staging",
        "      kustomize:",
        `        images: ["ghcr.io/acme/shop:${tag}"]`,
        "        commonLabels: {team: shop}",
        "    - repoURL: https://github.com/acme/config",
        "      path: charts/worker",
        "      helm:",
        `        valuesObject: {replicas: ${replicas}}`,
        `        parameters: [{name: image.tag, value: '${workerTag}'}]`,
        "",
      ].join("\n");
    const chart = {
      "charts/worker/Chart.yaml": "apiVersion: v2\nname: worker\nversion: 0.1.0\n",
      "charts/worker/values.yaml": "replicas: 1\nimage: {tag: '1.0.0'}\n",
      "charts/worker/templates/deployment.yaml": [
        "apiVersion: apps/v1",
        "kind: Deployment",
        "metadata: {name: worker, namespace: {{ .Release.Namespace }}}",
        "spec:",
        "  replicas: {{ .Values.replicas }}",
        "  selector: {matchLabels: {app: worker}}",
        "  template:",
        "    metadata: {labels: {app: worker}}",
        "    spec:",
        "      containers:",
        "        - name: worker",
        "          image: ghcr.io/acme/worker:{{ .Values.image.tag }}",
        "",
      ].join("\n"),
    };
    commit(
      {
        ".github/ferry.yml": CONFIG.replace(
          "paths: [envs/prod/kustomization.yaml]",
          "paths: [argocd/shop.yaml]",
        ),
        "argocd/shop.yaml": app("1.7.3", 2, "2.0.0"),
        ...chart,
      },
      "Argo CD application",
    );
    write({ "argocd/shop.yaml": app("1.9.0", 4, "2.1.0") });
    const { code, out, err } = await run("--base", "main", "--env", "prod");
    expect(code).toBe(0);
    expect(out.split("\n")[0]).toBe("=== prod: 0 added, 2 changed, 0 removed, 1 unchanged");
    expect(out).toContain("ghcr.io/acme/shop 1.7.3 → 1.9.0 (container shop of Deployment.apps shop/shop)");
    expect(out).toContain("-  replicas: 2\n+  replicas: 4");
    // The chart's parameter (image.tag) and namespace come from the Application.
    expect(out).toContain(
      "ghcr.io/acme/worker 2.0.0 → 2.1.0 (container worker of Deployment.apps shop-argo/worker)",
    );
    expect(out).not.toContain("Application");
    expect(err).toContain(
      "ferry diff: prod: not rendered: the working tree: Application shop: source 0: kustomize.commonLabels not applied\n",
    );
  });
});
