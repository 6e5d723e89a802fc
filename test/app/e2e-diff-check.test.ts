/**
 * End to end on the emulator: the `ferry/diff` check run (docs/diff-check.md) on Ferry's own
 * staging PR, on a person's PR that would prune an object, on a PR changing a Secret, and on PR
 * heads that try to leave the render's confinement or pass its limits.
 */
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actAs } from "../../packages/sandbox/src/github/index.js";
import { SECRET, startWorld, type World } from "../support/app-e2e-world.js";
import { diffRun, files, OVERLAY, overlay, personPull, RESOURCES, secret } from "../support/diff-e2e.js";

describe("the ferry/diff check (end to end)", { timeout: 240_000 }, () => {
  let world: World;
  let host: string;
  beforeAll(async () => {
    // No CI: the staging PR stays open (its required `ci` never reports), so its body can be read.
    world = await startWorld({ ci: false, server: { ferry: { diffCheck: true } }, files });
    host = world.registry.host;
  });
  afterAll(async () => {
    await world.close();
  });

  it("shows Ferry's staging PR the image change and nothing else, in the check and the PR body", async () => {
    await world.push("1.8.0");
    const pull = (await world.pulls()).find((item) => item.head.ref === "ferry/staging");
    expect(pull).toBeDefined();
    const run = await diffRun(world, pull!.head.sha);
    expect(run.conclusion).toBe("success");
    expect(run.output.summary).toContain(`${host}/acme/shop 1.7.0 → 1.8.0`);
    expect(run.output.summary).toContain("| staging | 0 | 1 | 0 | 2 | 0 |");
    expect(run.output.summary).not.toContain("| prod |");
    // The one changed line is the image's.
    const changed = run.output.text!.split("\n").filter((line) => /^[-+](?![-+])/.test(line));
    expect(changed).toEqual([
      expect.stringMatching(new RegExp(`^-[ -]*image: ${host}/acme/shop:1\\.7\\.0$`)),
      expect.stringMatching(new RegExp(`^\\+[ -]*image: ${host}/acme/shop:1\\.8\\.0$`)),
    ]);
    await world.settle();
    const body = (await world.pulls()).find((item) => item.number === pull!.number)!.body!;
    expect(body).toContain("ferry:diff");
    expect(body).toContain("| staging | 0 | 1 | 0 | 2 | 0 |");
  });

  it("fails a person's PR that drops a resource, naming the object that would be pruned", async () => {
    const head = await personPull(world, "drop-service", {
      [OVERLAY]: overlay(host, "1.7.0", ["deployment.yaml", "secret.yaml"]),
    });
    const run = await diffRun(world, head);
    expect(run.conclusion).toBe("failure");
    expect(run.output.title).toMatch(/danger/);
    expect(run.output.summary).toMatch(/prune/);
    expect(run.output.summary).toMatch(/Service\/shop|Service shop|v1\/Service.*shop/);
  });

  it("shows a changed Secret by its key names only", async () => {
    const head = await personPull(world, "rotate-db", {
      "overlays/staging/secret.yaml": secret({ password: "rotated-head-value", user: "shop-user-value" }),
    });
    const run = await diffRun(world, head);
    const posted = `${run.output.title}\n${run.output.summary}\n${run.output.text}`;
    expect(posted).toMatch(/password/);
    expect(posted).toMatch(/user/);
    for (const value of ["hunter2-base-value", "rotated-head-value", "shop-user-value"]) {
      expect(posted).not.toContain(value);
      expect(posted).not.toContain(Buffer.from(value).toString("base64"));
    }
  });

  describe("a PR head that tries to leave the render's confinement or pass its limits", () => {
    let server: Server;
    let fetched = 0;
    beforeAll(async () => {
      server = createServer((_request, response) => {
        fetched += 1;
        response.end("apiVersion: v1\nkind: ConfigMap\nmetadata: { name: fetched }\n");
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    it("never fetches a remote base: a neutral check says it was refused", async () => {
      const port = (server.address() as AddressInfo).port;
      const head = await personPull(world, "remote-base", {
        [OVERLAY]: overlay(host, "1.7.0", [...RESOURCES, `http://127.0.0.1:${port}/base.yaml`]),
      });
      const run = await diffRun(world, head);
      expect(run.conclusion).toBe("neutral");
      expect(run.output.title).toMatch(/remote/i);
      expect(fetched).toBe(0);
    });

    it("stops an alias bomb before kustomize runs", async () => {
      const bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
      for (let level = 1; level < 9; level++) {
        const previous = String.fromCharCode(96 + level);
        const name = String.fromCharCode(97 + level);
        bomb.push(`${name}: &${name} [*${previous}, *${previous}, *${previous}, *${previous}, *${previous}]`);
      }
      const head = await personPull(world, "alias-bomb", {
        "overlays/staging/bomb.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: bomb }\ndata:\n  ${bomb.join("\n  ")}\n`,
        [OVERLAY]: overlay(host, "1.7.0", [...RESOURCES, "bomb.yaml"]),
      });
      const run = await diffRun(world, head);
      expect(run.conclusion).toBe("neutral");
      expect(run.output.title).toMatch(/alias/i);
    });

    it("never runs Helm's lookup", async () => {
      const head = await personPull(world, "helm-lookup", {
        [OVERLAY]: null,
        "overlays/staging/Chart.yaml": "apiVersion: v2\nname: shop\nversion: 1.0.0\n",
        "overlays/staging/templates/cm.yaml":
          'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: stolen }\ndata:\n  token: {{ (lookup "v1" "Secret" "kube-system" "admin").data | toJson | quote }}\n',
      });
      const run = await diffRun(world, head);
      expect(run.conclusion).toBe("neutral");
      expect(run.output.title).toMatch(/lookup/);
    });

    it("never follows a symlink out of the repository", async () => {
      const octokit = world.as.mona;
      const repo = { owner: "acme", repo: "config" };
      const main = (await octokit.rest.repos.getBranch({ ...repo, branch: "main" })).data.commit;
      const tree = await octokit.rest.git.createTree({
        ...repo,
        base_tree: main.commit.tree.sha,
        tree: [
          { path: "overlays/staging/leak.yaml", mode: "120000", type: "blob", content: "/etc/passwd" },
          {
            path: OVERLAY,
            mode: "100644",
            type: "blob",
            content: overlay(host, "1.7.0", [...RESOURCES, "leak.yaml"]),
          },
        ],
      });
      const commit = await octokit.rest.git.createCommit({
        ...repo,
        message: "leak",
        tree: tree.data.sha,
        parents: [main.sha],
      });
      await octokit.rest.git.createRef({ ...repo, ref: "refs/heads/symlink", sha: commit.data.sha });
      await actAs.openPullRequest(world.emu, "acme", "config", {
        head: "symlink",
        title: "leak",
        as: "mona",
      });
      const run = await diffRun(world, commit.data.sha);
      expect(run.conclusion).toBe("neutral");
      expect(run.output.title).toMatch(/symlink/);
      expect(`${run.output.summary}${run.output.text}`).not.toMatch(/root:x:0:0/);
    });

    it("renders nothing for a fork's PR and says why in a neutral check", async () => {
      const branch = "from-fork";
      await personPull(world, branch, { [OVERLAY]: overlay(host, "1.7.5", RESOURCES) });
      await world.settle();
      // The same PR as GitHub delivers it from a fork (head.repo is mallory's), at a head commit
      // Ferry has not seen, through the real webhook route (e2e-fork-config-check.test.ts opens a
      // PR from a fork the emulator made).
      const opened = world.emu.webhooks
        .deliveries()
        .find(
          (d) =>
            d.event === "pull_request" && d.action === "opened" && JSON.stringify(d.payload).includes(branch),
        )!;
      const head = await actAs.commit(
        world.emu,
        "acme",
        "config",
        branch,
        { [OVERLAY]: overlay(host, "1.7.6", RESOURCES) },
        "fork push",
        { as: "mona" },
      );
      const payload = structuredClone(opened.payload) as {
        pull_request: { head: { sha: string; repo: { full_name: string } } };
      };
      payload.pull_request.head.sha = head;
      payload.pull_request.head.repo.full_name = "mallory/config";
      const body = JSON.stringify(payload);
      const response = await fetch(`${world.server.url}/api/github/webhooks`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": "pull_request",
          "x-github-delivery": "fork-delivery-1",
          "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`,
        },
        body,
      });
      expect(response.status).toBeLessThan(300);
      const run = await diffRun(world, head);
      expect(run.conclusion).toBe("neutral");
      expect(run.output.title).toBe("Not rendered: the head is in a fork");
      expect(run.output.summary).toMatch(/comes from a fork: Ferry does not render it/);
    });

    it("stops a 50 MB render at the output cap", async () => {
      const big = `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: big }\ndata:\n  blob: "${"x".repeat(1024 * 1024)}"\n`;
      const changes: Record<string, string | null> = { "big/base/cm.yaml": big };
      changes["big/base/kustomization.yaml"] = "resources: [cm.yaml]\n";
      const copies: string[] = [];
      for (let index = 0; index < 50; index++) {
        changes[`overlays/staging/copy${index}/kustomization.yaml`] =
          `namePrefix: c${index}-\nresources: [../../../big/base]\n`;
        copies.push(`copy${index}`);
      }
      changes[OVERLAY] = overlay(host, "1.7.0", [...RESOURCES, ...copies]);
      const head = await personPull(world, "big-render", changes);
      const run = await diffRun(world, head);
      expect(run.conclusion).toBe("neutral");
      expect(run.output.title).toMatch(/exceeds|memory limit|too large|timed out/);
      console.info(`50 MB render: ${run.output.title}`);
    });
  });
});
