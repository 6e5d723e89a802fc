/**
 * The reconciler's kubeconfig reading (src/adapters/kubernetes/cluster-access.ts): every way a
 * kubeconfig names the server and the credentials, the default places in kubectl's order, a pod's
 * service account, and the credential plugins left to client-node.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadClusterAccess } from "../../../src/adapters/kubernetes/cluster-access.js";
import { packagesLoadedBy } from "../../support/static-imports.js";

const SRC = path.join(import.meta.dirname, "..", "..", "..", "src");

function kubeconfig(
  cluster: object,
  user: object,
  extra: { namespace?: string; name?: string } = {},
): string {
  const name = extra.name ?? "dev";
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster }],
    users: [{ name, user }],
    contexts: [
      {
        name,
        context: { cluster: name, user: name, ...(extra.namespace ? { namespace: extra.namespace } : {}) },
      },
    ],
    "current-context": name,
  });
}

describe("loadClusterAccess", () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ferry-access-"));
    dirs.push(dir);
    return dir;
  };
  const noDefaults = (dir: string): NodeJS.ProcessEnv => ({ HOME: dir, KUBECONFIG: "" });
  afterEach(() => {
    vi.useRealTimers();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("reads the server, its CA, the token and the context's namespace", async () => {
    const access = loadClusterAccess({
      kubeconfig: kubeconfig(
        {
          server: "https://10.0.0.1:6443/",
          "certificate-authority-data": Buffer.from("CA PEM").toString("base64"),
          "tls-server-name": "kubernetes.default",
        },
        { token: "s3cret" },
        { namespace: "shop" },
      ),
    });
    expect(access.server).toBe("https://10.0.0.1:6443");
    expect(String(access.ca)).toBe("CA PEM");
    expect(access.rejectUnauthorized).toBe(true);
    expect(access.servername).toBe("kubernetes.default");
    expect(access.namespace).toBe("shop");
    expect(await access.credentials()).toEqual({ authorization: "Bearer s3cret" });
  });

  it("reads files relative to the kubeconfig's own directory: CA, client certificate and key", async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, "pki"));
    writeFileSync(path.join(dir, "pki", "ca.crt"), "CA FILE");
    writeFileSync(path.join(dir, "pki", "me.crt"), "CERT FILE");
    writeFileSync(path.join(dir, "pki", "me.key"), "KEY FILE");
    const file = path.join(dir, "config");
    writeFileSync(
      file,
      kubeconfig(
        { server: "https://h:6443", "certificate-authority": "pki/ca.crt" },
        { "client-certificate": "pki/me.crt", "client-key": "pki/me.key" },
      ),
    );
    const access = loadClusterAccess({ kubeconfigFile: file });
    expect(String(access.ca)).toBe("CA FILE");
    const credentials = await access.credentials();
    expect(String(credentials.cert)).toBe("CERT FILE");
    expect(String(credentials.key)).toBe("KEY FILE");
    expect(credentials.authorization).toBeUndefined();
  });

  it("takes inline client certificates, basic auth and insecure-skip-tls-verify", async () => {
    const access = loadClusterAccess({
      kubeconfig: kubeconfig(
        { server: "http://127.0.0.1:8001", "insecure-skip-tls-verify": true },
        {
          "client-certificate-data": Buffer.from("C").toString("base64"),
          "client-key-data": Buffer.from("K").toString("base64"),
          username: "admin",
          password: "pw",
        },
      ),
    });
    expect(access.rejectUnauthorized).toBe(false);
    const credentials = await access.credentials();
    expect(credentials.authorization).toBe(`Basic ${Buffer.from("admin:pw").toString("base64")}`);
    expect(String(credentials.cert)).toBe("C");
    expect(String(credentials.key)).toBe("K");
  });

  it("reads a tokenFile again once a minute has passed, as a rotated token needs", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const dir = tempDir();
    writeFileSync(path.join(dir, "token"), "first\n");
    const access = loadClusterAccess({
      kubeconfig: kubeconfig({ server: "https://h" }, { tokenFile: path.join(dir, "token") }),
    });
    expect((await access.credentials()).authorization).toBe("Bearer first");
    writeFileSync(path.join(dir, "token"), "second\n");
    vi.advanceTimersByTime(30_000);
    expect((await access.credentials()).authorization).toBe("Bearer first");
    vi.advanceTimersByTime(31_000);
    expect((await access.credentials()).authorization).toBe("Bearer second");
  });

  it("merges the files KUBECONFIG lists, the first to name an entry or a current context winning", () => {
    const dir = tempDir();
    const first = path.join(dir, "a");
    const second = path.join(dir, "b");
    writeFileSync(
      first,
      JSON.stringify({
        clusters: [{ name: "shared", cluster: { server: "https://first" } }],
        "current-context": "two",
      }),
    );
    writeFileSync(
      second,
      JSON.stringify({
        clusters: [
          { name: "shared", cluster: { server: "https://second" } },
          { name: "other", cluster: { server: "https://other" } },
        ],
        users: [{ name: "u", user: { token: "t" } }],
        contexts: [{ name: "two", context: { cluster: "shared", user: "u", namespace: "ns2" } }],
        "current-context": "ignored",
      }),
    );
    const env = {
      ...noDefaults(dir),
      KUBECONFIG: [first, path.join(dir, "missing"), second].join(path.delimiter),
    };
    const access = loadClusterAccess({ env });
    expect(access.server).toBe("https://first");
    expect(access.namespace).toBe("ns2");
  });

  it("falls back to ~/.kube/config, then to the pod's service account", async () => {
    const home = tempDir();
    mkdirSync(path.join(home, ".kube"));
    writeFileSync(
      path.join(home, ".kube", "config"),
      kubeconfig({ server: "https://from-home" }, { token: "h" }),
    );
    expect(loadClusterAccess({ env: noDefaults(home) }).server).toBe("https://from-home");

    const empty = tempDir();
    const sa = tempDir();
    writeFileSync(path.join(sa, "token"), "pod-token\n");
    writeFileSync(path.join(sa, "ca.crt"), "POD CA");
    writeFileSync(path.join(sa, "namespace"), "ferry-system\n");
    const pod = loadClusterAccess({
      serviceAccountDir: sa,
      env: { ...noDefaults(empty), KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" },
    });
    expect(pod.server).toBe("https://[fd00::1]:443");
    expect(String(pod.ca)).toBe("POD CA");
    expect(pod.namespace).toBe("ferry-system");
    expect(await pod.credentials()).toEqual({ authorization: "Bearer pod-token" });

    expect(() => loadClusterAccess({ serviceAccountDir: sa, env: noDefaults(empty) })).toThrow(
      /no kubeconfig found/,
    );
  });

  it("says in one line what is wrong with a kubeconfig", () => {
    const one = (text: string) => () => loadClusterAccess({ kubeconfig: text });
    expect(one("clusters: []\n")).toThrow(/sets no current-context/);
    expect(one("current-context: x\n")).toThrow(/no context named "x"/);
    expect(one(`current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n`)).toThrow(
      /names no cluster/,
    );
    expect(one(kubeconfig({}, {}))).toThrow(/has no server/);
    expect(one(kubeconfig({ server: "ftp://h" }, {}))).toThrow(/must be an http\(s\) URL/);
    expect(one("- a list\n")).toThrow(/not a YAML mapping/);
    expect(one("clusters: {a: 1}\ncurrent-context: x\n")).toThrow(/clusters is not a list/);
  });

  it("runs an exec credential plugin through client-node, and only for a user that names one", async () => {
    const dir = tempDir();
    const plugin = path.join(dir, "plugin.sh");
    writeFileSync(
      plugin,
      `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}'\n`,
    );
    chmodSync(plugin, 0o755);
    // Its CA is a path relative to the kubeconfig, which is not in the working directory.
    writeFileSync(path.join(dir, "ca.crt"), "CA FILE");
    const file = path.join(dir, "config");
    writeFileSync(
      file,
      kubeconfig(
        { server: "https://h", "certificate-authority": "ca.crt" },
        {
          exec: { apiVersion: "client.authentication.k8s.io/v1", command: plugin, interactiveMode: "Never" },
        },
      ),
    );
    const access = loadClusterAccess({ kubeconfigFile: file });
    expect((await access.credentials()).authorization).toBe("Bearer from-plugin");
    // What the reconciler loads at start reaches client-node (and Octokit, loaded by a reconciler
    // that reports to GitHub) through no static import.
    for (const root of ["cli/reconcile.ts", "reconciler/start.ts", "adapters/kubernetes/kube-cluster.ts"])
      for (const heavy of ["@kubernetes/client-node", "@octokit/rest", "@octokit/auth-app"])
        expect([...packagesLoadedBy(path.join(SRC, root))], root).not.toContain(heavy);
    // The scan sees them where they are imported.
    expect([...packagesLoadedBy(path.join(SRC, "adapters/github/deployment-reporter.ts"))]).toContain(
      "@octokit/rest",
    );
  });
});
