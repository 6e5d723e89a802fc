/**
 * End to end on the emulator (docs/diff-check.md): the `ferry/diff` check run on a merge-queue
 * group commit, so a branch that requires `ferry/diff` merges through its queue instead of
 * stalling; and an Argo CD Application among an environment's objects, rendered with its own
 * overrides, the check naming the one it did not apply.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspect, repos } from "../../packages/sandbox/src/github/index.js";
import { startWorld, type World } from "../support/app-e2e-world.js";
import { diffRun, files, OVERLAY, overlay, personPull, RESOURCES } from "../support/diff-e2e.js";

const APPLICATION = "overlays/staging/application.yaml";

function application(webTag: string, workerTag: string, replicas: number): string {
  return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: shop-extras, namespace: argocd }
spec:
  destination: { namespace: extras }
  sources:
    - repoURL: https://github.com/acme/config
      path: apps/web
      kustomize:
        images: ["ghcr.io/acme/web:${webTag}"]
        namePrefix: edge-
    - repoURL: https://github.com/acme/config
      path: apps/worker
      helm:
        valuesObject: { replicas: ${replicas} }
        parameters: [{ name: image.tag, value: "${workerTag}" }]
`;
}

const workload = (name: string, image: string, replicas = "1") => `apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name} }
spec:
  replicas: ${replicas}
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec:
      containers:
        - name: ${name}
          image: ${image}
`;

function argoFiles(host: string): Record<string, string> {
  return {
    ...files(host),
    [OVERLAY]: overlay(host, "1.7.0", [...RESOURCES, "application.yaml"]),
    [APPLICATION]: application("1.0.0", "2.0.0", 1),
    "apps/web/kustomization.yaml": "resources: [deployment.yaml]\n",
    "apps/web/deployment.yaml": workload("web", "ghcr.io/acme/web:0.0.1"),
    "apps/worker/Chart.yaml": "apiVersion: v2\nname: worker\nversion: 0.1.0\n",
    "apps/worker/values.yaml": "replicas: 1\nimage: { tag: '0.0.1' }\n",
    "apps/worker/templates/deployment.yaml": workload(
      "worker",
      "ghcr.io/acme/worker:{{ .Values.image.tag }}",
      "{{ .Values.replicas }}",
    ),
  };
}

describe(
  "the ferry/diff check on merge groups and Argo CD Applications (end to end)",
  { timeout: 240_000 },
  () => {
    let world: World;
    let host: string;
    beforeAll(async () => {
      world = await startWorld({ ci: true, server: { ferry: { diffCheck: true } }, files: argoFiles });
      host = world.registry.host;
    });
    afterAll(async () => {
      await world.close();
    });

    it("renders an Argo CD Application with its overrides and names the one it did not apply", async () => {
      const head = await personPull(world, "argo-overrides", {
        [APPLICATION]: application("1.1.0", "2.1.0", 4),
      });
      const run = await diffRun(world, head);
      expect(run.conclusion).toBe("success");
      const summary = run.output.summary!;
      // kustomize.images, helm.parameters and helm.valuesObject are applied, the release namespace too.
      expect(summary).toContain("ghcr.io/acme/web 1.0.0 → 1.1.0 (container web of Deployment.apps web)");
      expect(summary).toContain(
        "ghcr.io/acme/worker 2.0.0 → 2.1.0 (container worker of Deployment.apps worker)",
      );
      expect(run.output.text).toMatch(/^- {2}replicas: 1\n\+ {2}replicas: 4$/m);
      // The Application itself is not diffed; what it renders is.
      expect(summary).not.toContain("Application.argoproj.io");
      expect(summary).toContain(
        "- **staging** not rendered: `Application shop-extras: source 0: kustomize.namePrefix not applied`",
      );
    });

    it("posts ferry/diff on the merge group's commit, so a queue that requires it merges", async () => {
      const repo = { owner: "acme", repo: "config" };
      world.emu.repo("acme", "config").protections.clear();
      repos.setRepoSettings(world.emu, "acme", "config", { allowAutoMerge: false });
      repos.addRuleset(world.emu, "acme", "config", {
        name: "main",
        requiredChecks: ["ci", "ferry/diff"],
        mergeQueue: {},
      });
      const head = await personPull(world, "bump-staging", {
        [OVERLAY]: overlay(host, "1.7.1", [...RESOURCES, "application.yaml"]),
      });
      expect((await diffRun(world, head)).conclusion).toBe("success");
      const pull = (await world.pulls()).find((item) => item.head.sha === head)!;
      const { node_id } = await inspect.getPull(world.emu, "acme", "config", pull.number);
      await world.as.mona.graphql(
        `mutation($id: ID!) { enqueuePullRequest(input: { pullRequestId: $id }) { clientMutationId } }`,
        { id: node_id },
      );
      const deadline = Date.now() + 120_000;
      let merged = (await world.pulls("all")).find((item) => item.number === pull.number)!;
      while (!merged.merged_at && merged.state === "open" && Date.now() < deadline) {
        await world.settle();
        await new Promise((resolve) => setTimeout(resolve, 200));
        merged = (await world.pulls("all")).find((item) => item.number === pull.number)!;
      }
      expect(merged.merged_at).not.toBeNull();
      // It landed through the queue: the merge commit is a merge group's, and ferry/diff reported there.
      const { data: landed } = await world.as.mona.rest.pulls.get({ ...repo, pull_number: pull.number });
      const groups = world.emu.webhooks
        .deliveries()
        .filter((delivery) => delivery.event === "merge_group")
        .map((delivery) => (delivery.payload as { merge_group: { head_sha: string } }).merge_group.head_sha);
      expect(groups).toContain(landed.merge_commit_sha);
      const run = await diffRun(world, landed.merge_commit_sha!);
      expect(run.conclusion).toBe("success");
      expect(run.output.summary).toContain(`${host}/acme/shop 1.7.0 → 1.7.1`);
    });
  },
);
