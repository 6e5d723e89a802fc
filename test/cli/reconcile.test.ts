import path from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import { createReconciler } from "../../src/reconciler/reconciler.js";
import { startReconciler } from "../../src/reconciler/start.js";
import {
  accessFor,
  startStatusServer,
  parseListenAddress,
} from "../../src/adapters/http/reconciler-status-server.js";
import {
  configMapYaml,
  deploymentYaml,
  GIT_ENV,
  reconcileIo,
  type Setup,
  setupPerTest,
  writesOf,
} from "../support/reconciler-harness.js";

const { temp, setup } = setupPerTest();
let env: Setup | undefined;

async function kubeconfigFile(current: Setup): Promise<string> {
  const file = path.join(temp.make(), "kubeconfig");
  await current.sim.writeKubeconfig(file);
  return file;
}

describe("ferry reconcile", () => {
  it("--once applies the config and exits 0 once synced", async () => {
    env = await setup();
    env.repo.commit({ "env/staging/config.yaml": configMapYaml("web-config") });
    const io = reconcileIo(env.repo.dir);
    const code = await main(
      [
        "reconcile",
        "--repo",
        ".",
        "--path",
        "env/staging",
        "--namespace",
        "shop",
        "--environment",
        "staging",
        "--once",
        "--kubeconfig",
        await kubeconfigFile(env),
        "--work-dir",
        temp.make(),
      ],
      io,
    );
    expect(io.err).not.toMatch(/failed/);
    expect(code).toBe(0);
    expect(io.out).toMatch(/Synced, Healthy; applied 1/);
    expect(env.sim.get("v1", "ConfigMap", "shop", "web-config")).toBeDefined();
  });

  it("takes the flags it is not given from FERRY_RECONCILE_<FLAG>, and the command line wins", async () => {
    env = await setup();
    env.repo.commit({
      "env/staging/config.yaml": configMapYaml("web-config"),
      "env/other/config.yaml": configMapYaml("other-config"),
    });
    const io = reconcileIo(env.repo.dir);
    // What deploy/reconciler's ConfigMap and downward API give the pod.
    Object.assign(io.env, {
      FERRY_RECONCILE_REPO: env.repo.dir,
      FERRY_RECONCILE_PATH: "env/other",
      FERRY_RECONCILE_NAMESPACE: "shop",
      FERRY_RECONCILE_ENVIRONMENT: "staging",
      FERRY_RECONCILE_PRUNE: "true",
      FERRY_RECONCILE_ALLOW_NAMESPACE: "a, b",
      FERRY_RECONCILE_KUBECONFIG: await kubeconfigFile(env),
      FERRY_RECONCILE_WORK_DIR: temp.make(),
    });
    const code = await main(["reconcile", "--path", "env/staging", "--once"], io);
    expect(io.err).not.toMatch(/ferry reconcile:/);
    expect(code).toBe(0);
    expect(env.sim.get("v1", "ConfigMap", "shop", "web-config")).toBeDefined();
    expect(env.sim.get("v1", "ConfigMap", "shop", "other-config")).toBeUndefined();
    const bad = reconcileIo(env.repo.dir);
    Object.assign(bad.env, {
      FERRY_RECONCILE_REPO: ".",
      FERRY_RECONCILE_PATH: "x",
      FERRY_RECONCILE_PRUNE: "yes",
    });
    expect(await main(["reconcile", "--once"], bad)).toBe(2);
    expect(bad.err).toContain('FERRY_RECONCILE_PRUNE must be true or false, got "yes"');
  });

  it("--print-rbac prints the Role the rendered path needs, and talks to no cluster", async () => {
    env = await setup();
    env.repo.commit({
      "env/staging/web.yaml": deploymentYaml("web"),
      "env/staging/config.yaml": configMapYaml("web-config"),
      "env/staging/policy.yaml":
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: web}\nspec: {podSelector: {}}\n",
    });
    const io = reconcileIo(env.repo.dir);
    const args = ["reconcile", "--repo", ".", "--path", "env/staging", "--namespace", "shop", "--prune"];
    const code = await main([...args, "--print-rbac", "--work-dir", temp.make()], io);
    expect(io.err).toBe("");
    expect(code).toBe(0);
    expect(io.out).toBe(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: ferry-reconciler
  namespace: shop
rules:
  - apiGroups:
      - ""
    resources:
      - configmaps
    verbs:
      - get
      - list
      - watch
      - create
      - patch
      - delete
  - apiGroups:
      - apps
    resources:
      - deployments
    verbs:
      - get
      - list
      - watch
      - create
      - patch
      - delete
  - apiGroups:
      - networking.k8s.io
    resources:
      - networkpolicies
    verbs:
      - get
      - list
      - watch
      - create
      - patch
      - delete
`);
    expect(env.sim.get("v1", "ConfigMap", "shop", "web-config")).toBeUndefined();
  });

  it("--dry-run prints the plan and writes nothing", async () => {
    env = await setup();
    env.repo.commit({ "env/staging/web.yaml": deploymentYaml("web") });
    const io = reconcileIo(env.repo.dir);
    const code = await main(
      [
        "reconcile",
        "--repo",
        env.repo.dir,
        "--path",
        "env/staging",
        "--namespace",
        "shop",
        "--dry-run",
        "--kubeconfig",
        await kubeconfigFile(env),
        "--work-dir",
        temp.make(),
      ],
      io,
    );
    expect(code).toBe(0);
    expect(io.out).toBe("create Deployment.apps shop/web\n1 to apply, 0 unchanged, 0 to prune\n");
    expect(writesOf(env.sim.requests())).toEqual([]);
  });

  it("refuses a plaintext Secret from Git and says why, and applies it with --allow-plaintext-secrets", async () => {
    env = await setup();
    env.repo.commit({
      "env/staging/config.yaml": configMapYaml("web-config"),
      "env/staging/secret.yaml":
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: hunter2\n",
      "env/staging/sealed.yaml":
        "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: api\nspec:\n  encryptedData:\n    token: AgBy8hC\n",
    });
    const args = async (...extra: string[]) => [
      "reconcile",
      "--repo",
      env!.repo.dir,
      "--path",
      "env/staging",
      "--namespace",
      "shop",
      "--once",
      "--kubeconfig",
      await kubeconfigFile(env!),
      "--work-dir",
      temp.make(),
      ...extra,
    ];
    const io = reconcileIo(env.repo.dir);
    expect(await main(await args(), io)).toBe(1);
    expect(io.err).toContain(
      "refused: Secret shop/db: a plaintext Secret (stringData) from Git is not applied: use a SealedSecret (Bitnami Sealed Secrets), a SOPS-encrypted file, or an ExternalSecret (External Secrets Operator) (or allow it with --allow-plaintext-secrets)",
    );
    expect(env.sim.get("v1", "Secret", "shop", "db")).toBeUndefined();
    expect(env.sim.get("v1", "ConfigMap", "shop", "web-config")).toBeDefined();

    const allowed = reconcileIo(env.repo.dir);
    await main(await args("--allow-plaintext-secrets"), allowed);
    expect(allowed.err).not.toContain("plaintext");
    expect(env.sim.get("v1", "Secret", "shop", "db")).toBeDefined();
  });

  it("refuses the plaintext Secret a kustomize secretGenerator makes from a file in the repo", async () => {
    env = await setup();
    env.repo.commit({
      "env/staging/kustomization.yaml":
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - config.yaml\ngeneratorOptions:\n  disableNameSuffixHash: true\nsecretGenerator:\n  - name: db\n    envs:\n      - db.env\n",
      "env/staging/config.yaml": configMapYaml("web-config"),
      "env/staging/db.env": "PASSWORD=hunter2\n",
    });
    const io = reconcileIo(env.repo.dir);
    const code = await main(
      [
        "reconcile",
        "--repo",
        env.repo.dir,
        "--path",
        "env/staging",
        "--namespace",
        "shop",
        "--once",
        "--kubeconfig",
        await kubeconfigFile(env),
        "--work-dir",
        temp.make(),
      ],
      io,
    );
    expect(code).toBe(1);
    expect(io.err).toContain("refused: Secret shop/db: a plaintext Secret (data) from Git is not applied");
    expect(io.err).not.toContain("hunter2");
    expect(env.sim.get("v1", "Secret", "shop", "db")).toBeUndefined();
    expect(env.sim.get("v1", "ConfigMap", "shop", "web-config")).toBeDefined();
  });

  it("--once exits 1 when the config does not render", async () => {
    env = await setup();
    env.repo.commit({ "env/staging/bad.yaml": "apiVersion: v1\nkind: ConfigMap\n" });
    const io = reconcileIo(env.repo.dir);
    const code = await main(
      [
        "reconcile",
        "--repo",
        env.repo.dir,
        "--path",
        "env/staging",
        "--namespace",
        "shop",
        "--once",
        "--kubeconfig",
        await kubeconfigFile(env),
        "--work-dir",
        temp.make(),
      ],
      io,
    );
    expect(code).toBe(1);
    expect(io.err).toMatch(/render: .*bad\.yaml: metadata\.name is missing/);
  });

  it("exits 2 without --repo or --path, and on a bad --max-prune", async () => {
    const io = reconcileIo(temp.make());
    expect(await main(["reconcile", "--path", "x"], io)).toBe(2);
    expect(await main(["reconcile", "--repo", "x"], io)).toBe(2);
    expect(await main(["reconcile", "--repo", "x", "--path", "y", "--max-prune", "many"], io)).toBe(2);
    expect(io.err).toMatch(/--repo is required/);
  });

  it("exits 1 on an --interval that would cycle in a loop or overflow Node's timer, naming the flag", async () => {
    for (const interval of ["0s", "999ms", "30d"]) {
      const io = reconcileIo(temp.make());
      expect(await main(["reconcile", "--repo", "x", "--path", "y", "--interval", interval], io)).toBe(1);
      expect(io.err.trim().split("\n")).toHaveLength(1);
      expect(io.err).toContain(`--interval must be between 1s and 7d, got "${interval}"`);
    }
  });
});

describe("the status server", () => {
  it("serves /status, /metrics and /healthz", async () => {
    env = await setup();
    env.repo.commit({ "env/staging/config.yaml": configMapYaml("web-config") });
    const reconciler = createReconciler({
      cluster: env.cluster,
      source: env.fetcher,
      settings: env.settings(),
    });
    await reconciler.cycle();
    const server = await startStatusServer(reconciler, parseListenAddress("127.0.0.1:0"));
    try {
      const status = (await (await fetch(`${server.url}/status`)).json()) as Record<string, unknown>;
      expect(status).toMatchObject({ instance: "staging", sync: "Synced", health: "Healthy", errors: [] });
      expect(status.lastApplied).toBe(status.lastAttempted);
      expect(status.objects).toEqual([
        {
          kind: "ConfigMap",
          group: "",
          namespace: "shop",
          name: "web-config",
          sync: "Synced",
          health: "Healthy",
          message: "",
        },
      ]);
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toMatch(/ferry_reconcile_cycles_total\{instance="staging",result="success"\} 1/);
      expect(metrics).toMatch(/ferry_reconcile_sync_status\{instance="staging",status="Synced"\} 1/);
      // Node's process figures, registered at the first scrape and read afresh at each.
      for (const name of ["process_resident_memory_bytes", "nodejs_heap_size_used_bytes", "process_open_fds"])
        expect(metrics).toMatch(new RegExp(`^${name} [1-9]\\d*$`, "m"));
      const again = await (await fetch(`${server.url}/metrics`)).text();
      expect(again.match(/^process_open_fds /gm)).toHaveLength(1);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${server.url}/nothing`)).status).toBe(404);
    } finally {
      await server.close();
      await reconciler.stop();
    }
  });

  it("off loopback, serves /status and /metrics only with the bearer token, and /healthz to anyone", async () => {
    env = await setup();
    env.repo.commit({ "env/staging/config.yaml": configMapYaml("web-config") });
    const reconciler = createReconciler({
      cluster: env.cluster,
      source: env.fetcher,
      settings: env.settings(),
    });
    await reconciler.cycle();
    // What `--listen 0.0.0.0:8080` gets, served here on loopback so the test sends nothing off the machine.
    expect(accessFor("0.0.0.0", "s3cret-token")).toEqual({ token: "s3cret-token" });
    expect(accessFor("127.0.0.1", undefined)).toEqual({ open: true });
    const guarded = await startStatusServer(reconciler, parseListenAddress("127.0.0.1:0"), {
      token: "s3cret-token",
    });
    const closed = await startStatusServer(
      reconciler,
      parseListenAddress("127.0.0.1:0"),
      accessFor("0.0.0.0", undefined),
    );
    try {
      for (const path of ["/status", "/metrics"]) {
        expect((await fetch(`${guarded.url}${path}`)).status).toBe(401);
        const wrong = await fetch(`${guarded.url}${path}`, { headers: { authorization: "Bearer nope" } });
        expect(wrong.status).toBe(401);
        const right = await fetch(`${guarded.url}${path}`, {
          headers: { authorization: "Bearer s3cret-token" },
        });
        expect(right.status).toBe(200);
        const none = await fetch(`${closed.url}${path}`);
        expect(none.status).toBe(404);
        expect(await none.text()).toMatch(/FERRY_STATUS_TOKEN or use --status-listen/);
      }
      expect((await fetch(`${guarded.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${closed.url}/healthz`)).status).toBe(200);
    } finally {
      await guarded.close();
      await closed.close();
      await reconciler.stop();
    }
  });

  it("parses listen addresses", () => {
    expect(parseListenAddress("127.0.0.1:9090")).toEqual({ host: "127.0.0.1", port: 9090 });
    expect(parseListenAddress(":8080")).toEqual({ host: "127.0.0.1", port: 8080 });
    expect(parseListenAddress("[::1]:8080")).toEqual({ host: "::1", port: 8080 });
    expect(() => parseListenAddress("nonsense")).toThrow(/invalid listen address/);
  });
});

describe("startReconciler (the sandbox's entry)", () => {
  it("wires the adapters from plain settings, runs its loop and serves its status", async () => {
    env = await setup();
    const sha = env.repo.commit({ "env/staging/config.yaml": configMapYaml("web-config") });
    const running = await startReconciler({
      repo: env.repo.dir,
      path: "env/staging",
      environment: "staging",
      kubeconfig: env.sim.kubeconfig("shop"),
      gitEnv: GIT_ENV,
      workDir: temp.make(),
      listen: { host: "127.0.0.1", port: 0 },
      intervalMs: 3_600_000,
    });
    try {
      await env.sim.waitFor("v1", "ConfigMap", "shop", "web-config", () => true);
      let status: Record<string, unknown> = {};
      for (let attempt = 0; attempt < 100 && status.lastApplied !== sha; attempt++) {
        status = (await (await fetch(`${running.statusUrl}/status`)).json()) as Record<string, unknown>;
        if (status.lastApplied !== sha) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(status).toMatchObject({
        instance: "staging",
        lastApplied: sha,
        lastAttempted: sha,
        sync: "Synced",
      });
    } finally {
      await running.stop();
    }
  });

  it("refuses an instance name that is not a label value", async () => {
    await expect(
      startReconciler({
        repo: ".",
        path: ".",
        instance: "not a label!",
        manual: true,
        kubeconfig: "apiVersion: v1\nkind: Config\n",
      }),
    ).rejects.toThrow(/valid label value/);
  });
});
