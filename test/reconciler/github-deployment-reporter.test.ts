import { afterEach, describe, expect, it } from "vitest";
import { ConfigRepoFetcher } from "../../src/adapters/git/config-repo-fetcher.js";
import { KubeCluster } from "../../src/adapters/kubernetes/kube-cluster.js";
import { GitHubDeploymentReporter } from "../../src/adapters/github/deployment-reporter.js";
import { DEFAULT_PRUNE_OPTIONS } from "../../src/reconciler/plan.js";
import { createReconciler } from "../../src/reconciler/reconciler.js";
import { buildReconciler } from "../../src/reconciler/start.js";
import {
  startClusterSimulator,
  type ClusterSimulator,
} from "../../packages/sandbox/src/cluster/cluster-simulator.js";
import { startGitHubEmulator, accounts, repos } from "../../packages/sandbox/src/github/index.js";
import { deploymentYaml, GIT_ENV, TempDirs } from "../support/reconciler-harness.js";

type Emulator = Awaited<ReturnType<typeof startGitHubEmulator>>;

const temp = new TempDirs();
let github: Emulator | undefined;
let sim: ClusterSimulator | undefined;

afterEach(async () => {
  await github?.close();
  await sim?.close();
  github = undefined;
  sim = undefined;
  temp.cleanup();
});

interface DeploymentJson {
  id: number;
  sha: string;
  environment: string;
}

async function api<T>(path: string, token: string): Promise<T> {
  const response = await fetch(`${github!.apiUrl}${path}`, { headers: { authorization: `token ${token}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

/** The emulator and the simulator, and mona's private config repo with one Deployment for staging. */
async function privateConfigRepo() {
  github = await startGitHubEmulator();
  sim = await startClusterSimulator({ rolloutStepMs: 20 });
  sim.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
  const mona = accounts.createUser(github, "mona");
  const repo = await repos.createRepo(github, "mona", "config", {
    private: true,
    files: { "env/staging/web.yaml": deploymentYaml("web") },
  });
  return { mona, repo };
}

describe("reporting to GitHub", () => {
  it("fetches a private config repo over HTTP with a token and reports Deployment statuses on the applied commit", async () => {
    const { mona, repo } = await privateConfigRepo();
    if (!github || !sim) throw new Error("the emulator and the simulator did not start");

    const logs: string[] = [];
    const reporter = new GitHubDeploymentReporter({
      repository: "mona/config",
      environment: "staging",
      token: mona.token,
      baseUrl: github.apiUrl,
      instance: "staging",
    });
    const reconciler = createReconciler({
      cluster: KubeCluster.fromOptions({ kubeconfig: sim.kubeconfig() }),
      source: new ConfigRepoFetcher({
        repo: github.gitUrl("mona", "config"),
        token: mona.token,
        workDir: temp.make(),
        env: GIT_ENV,
      }),
      settings: {
        instance: "staging",
        path: "env/staging",
        namespace: "shop",
        inventoryNamespace: "shop",
        createNamespace: false,
        dryRun: false,
        prune: DEFAULT_PRUNE_OPTIONS,
      },
      reporter,
      log: (message, fields) => logs.push(JSON.stringify({ message, ...fields })),
    });

    const first = await reconciler.cycle();
    expect(first.errors).toEqual([]);
    expect(first.revision).toBe(repo.headSha);
    await sim.waitFor(
      "apps/v1",
      "Deployment",
      "shop",
      "web",
      (object) => (object.status as { availableReplicas?: number } | undefined)?.availableReplicas === 2,
    );
    await reconciler.cycle();
    await reconciler.cycle(); // unchanged state: no new status

    const deployments = await api<DeploymentJson[]>(
      `/repos/mona/config/deployments?sha=${repo.headSha}`,
      mona.token,
    );
    expect(deployments).toHaveLength(1);
    expect(deployments[0]).toMatchObject({ sha: repo.headSha, environment: "staging" });
    const statuses = await api<{ state: string; description: string }[]>(
      `/repos/mona/config/deployments/${deployments[0]!.id}/statuses`,
      mona.token,
    );
    // Newest first, as GitHub lists them.
    expect(statuses.map((status) => status.state)).toEqual(["success", "in_progress"]);
    expect(statuses.every((status) => status.description.length < 140)).toBe(true);
    // The token shows up nowhere the reconciler writes: logs, status, descriptions.
    const written = [...logs, JSON.stringify(reconciler.status()), JSON.stringify(statuses)].join("\n");
    expect(written).not.toContain(mona.token);
  });

  it("reports through the reporter `github` names, whose Octokit it loads on the first report", async () => {
    const { mona, repo } = await privateConfigRepo();
    if (!github || !sim) throw new Error("the emulator and the simulator did not start");
    const reconciler = buildReconciler({
      repo: github.gitUrl("mona", "config"),
      path: "env/staging",
      instance: "staging",
      environment: "staging",
      namespace: "shop",
      kubeconfig: sim.kubeconfig(),
      gitToken: mona.token,
      gitEnv: GIT_ENV,
      workDir: temp.make(),
      leaseDurationMs: false,
      github: { repository: "mona/config", token: mona.token, apiUrl: github.apiUrl },
    });
    expect((await reconciler.cycle()).errors).toEqual([]);
    const deployments = await api<DeploymentJson[]>(
      `/repos/mona/config/deployments?sha=${repo.headSha}`,
      mona.token,
    );
    expect(deployments).toMatchObject([{ sha: repo.headSha, environment: "staging" }]);
    const statuses = await api<{ state: string }[]>(
      `/repos/mona/config/deployments/${deployments[0]!.id}/statuses`,
      mona.token,
    );
    expect(statuses.length).toBeGreaterThan(0);
  });

  it("finds the existing Deployment after a restart instead of creating a second one", async () => {
    github = await startGitHubEmulator();
    const mona = accounts.createUser(github, "mona");
    const repo = await repos.createRepo(github, "mona", "config", { files: { "README.md": "config\n" } });
    const options = {
      repository: "mona/config",
      environment: "prod",
      token: mona.token,
      baseUrl: github.apiUrl,
      instance: "prod",
    };
    await new GitHubDeploymentReporter(options).report({
      revision: repo.headSha,
      state: "in_progress",
      description: "rolling out",
    });
    const restarted = new GitHubDeploymentReporter(options);
    await restarted.report({
      revision: repo.headSha,
      state: "in_progress",
      description: "still rolling out",
    });
    await restarted.report({ revision: repo.headSha, state: "failure", description: "Degraded" });
    const deployments = await api<DeploymentJson[]>(
      `/repos/mona/config/deployments?environment=prod`,
      mona.token,
    );
    expect(deployments).toHaveLength(1);
    const statuses = await api<{ state: string }[]>(
      `/repos/mona/config/deployments/${deployments[0]!.id}/statuses`,
      mona.token,
    );
    expect(statuses.map((status) => status.state)).toEqual(["failure", "in_progress"]);
  });

  it("posts a new status when the day's count of undone manual changes changes, though the state stays success", async () => {
    github = await startGitHubEmulator();
    const mona = accounts.createUser(github, "mona");
    const repo = await repos.createRepo(github, "mona", "config", { files: { "README.md": "config\n" } });
    const reporter = new GitHubDeploymentReporter({
      repository: "mona/config",
      environment: "prod",
      token: mona.token,
      baseUrl: github.apiUrl,
      instance: "prod",
    });
    const report = (description: string) =>
      reporter.report({ revision: repo.headSha, state: "success", description });
    await report("Synced and Healthy: 4 objects");
    await report("Synced and Healthy: 4 objects; 1 manual change undone in the last 24 h, last: x");
    await report("Synced and Healthy: 4 objects; 1 manual change undone in the last 24 h");
    await report("Synced and Healthy: 5 objects");
    const [deployment] = await api<DeploymentJson[]>(
      `/repos/mona/config/deployments?environment=prod`,
      mona.token,
    );
    const statuses = await api<{ state: string; description: string }[]>(
      `/repos/mona/config/deployments/${deployment!.id}/statuses`,
      mona.token,
    );
    // Newest first: the count went 0 → 1 (posted), stayed 1 (not), went back to 0 (posted).
    expect(statuses.map((status) => status.description)).toEqual([
      "Synced and Healthy: 5 objects",
      "Synced and Healthy: 4 objects; 1 manual change undone in the last 24 h, last: x",
      "Synced and Healthy: 4 objects",
    ]);
  });
});
