/**
 * SOPS decrypted in the cluster, against kube-apiserver + etcd: a SOPS-encrypted Secret (and an
 * encrypted env file a secretGenerator reads) is applied decrypted, the value checked in the API
 * server, while the config repo, the checkout, the reconciler's logs, its cycle results and
 * status, the inventory and the dry-run output carry no plaintext; a hand edit of the Secret is
 * undone and recorded with its key name only. Real sops, real age keys (test/support/sops-keys.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { main } from "../../src/cli.js";
import { readInventory } from "../../src/reconciler/inventory.js";
import { formatSyncPlan } from "../../src/reconciler/plan.js";
import { captureIo } from "../support/cli-io.js";
import { configMapYaml, GIT_ENV } from "../support/reconciler-harness.js";
import { makeAgeKey, sopsEncrypt } from "../support/sops-keys.js";
import { readObject } from "./contract/backend.js";
import { realBackend } from "./contract/real-backend.js";
import { createWorld, type World } from "./contract/world.js";

vi.setConfig({ testTimeout: 180_000 });

const backend = realBackend(inject("controlPlane"));
let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const PASSWORD = "s3cr3t-pw-for-the-cluster-tier-4921";
const TOKEN = "tok_cluster_9c81e0a7";
const INTRUDER = "hand-edited-value-5577";
/** Each plaintext as written and as base64 (a Secret's `data`): none may appear anywhere but the API server. */
const FORBIDDEN = [PASSWORD, TOKEN, INTRUDER].flatMap((text) => [text, Buffer.from(text).toString("base64")]);

function expectNoPlaintext(text: string, where: string): void {
  for (const value of FORBIDDEN) expect(text.includes(value), `${where} holds ${value}`).toBe(false);
}

/** Every regular file's text under `dir` (a checkout, a work dir). */
function treeText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(path.join(entry.parentPath, entry.name), "latin1"))
    .join("\n");
}

function secretValue(object: unknown, key: string): string | undefined {
  const data = (object as { data?: Record<string, string> } | undefined)?.data;
  return data?.[key] !== undefined ? Buffer.from(data[key], "base64").toString("utf8") : undefined;
}

describe("SOPS-encrypted Secrets applied by the reconciler", () => {
  it("applies them decrypted while the repo, logs, statuses, inventory and dry-run output hold no plaintext", async () => {
    const w = (world = await createWorld(backend));
    const keys = w.temp.make("ferry-sops-keys-");
    const key = makeAgeKey(keys);
    const secret = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\nstringData:\n  password: ${PASSWORD}\n`;
    w.repo.commit({
      "env/secret.enc.yaml": sopsEncrypt(secret, "yaml", key.recipient),
      "env/api.enc.env": sopsEncrypt(`TOKEN=${TOKEN}\n`, "dotenv", key.recipient),
      "env/config.yaml": configMapYaml("web-config"),
      "env/kustomization.yaml":
        "resources: [secret.enc.yaml, config.yaml]\ngeneratorOptions:\n  disableNameSuffixHash: true\nsecretGenerator:\n  - name: api\n    envs: [api.enc.env]\n",
    });
    expectNoPlaintext(treeText(w.repo.dir), "the config repo");

    // The dry-run (the CLI) without the key: one line naming the file, nothing applied.
    const work = w.temp.make("ferry-cli-work-");
    const tmp = w.temp.make("ferry-sops-tmp-");
    const args = (...extra: string[]) => [
      "reconcile",
      ...["--repo", w.repo.dir, "--path", "env", "--namespace", w.ns, "--environment", w.instance],
      ...["--kubeconfig", w.kubectl.kubeconfigFile, "--work-dir", work, ...extra],
    ];
    const io = () => captureIo(w.repo.dir, { env: { ...GIT_ENV, TMPDIR: tmp } });
    const keyless = io();
    expect(
      await main(args("--dry-run", "--sops-age-key-file", path.join(keys, "absent.agekey")), keyless),
    ).toBe(1);
    // The log line of the failed cycle, then the error: one line each.
    expect(keyless.err).toMatch(
      /^ferry reconcile: render: cannot decrypt env\/api\.enc\.env: the SOPS age key file \S+absent\.agekey \(--sops-age-key-file\) cannot be read \(ENOENT\)$/m,
    );
    expect(keyless.err).toMatch(/"message":"reconcile cycle failed".*"phase":"render"/);
    expect(await readObject(w.admin, "v1", "Secret", w.ns, "db")).toBeUndefined();

    // With the key: the plan names the Secrets, never their values.
    const dry = io();
    expect(await main(args("--dry-run", "--sops-age-key-file", key.file), dry)).toBe(0);
    expect(dry.out).toContain(`create Secret ${w.ns}/db\n`);
    expect(dry.out).toContain(`create Secret ${w.ns}/api\n`);
    expectNoPlaintext(dry.out + dry.err, "the dry-run output");

    // The long-running reconciler, with its logs captured and the plaintext-Secret refusal on.
    const logs: string[] = [];
    const reconciler = w.reconciler(
      {
        render: { env: { PATH: process.env.PATH, HOME: keys, TMPDIR: tmp }, sops: { ageKeyFile: key.file } },
        confinement: { namespace: w.ns, allowNamespaces: [], allowClusterKinds: [], createNamespace: false },
      },
      { log: (message, fields) => logs.push(`${message} ${JSON.stringify(fields)}`) },
    );
    const first = await reconciler.cycle();
    expect(first.errors).toEqual([]);
    expect(first.sync).toBe("Synced");
    // Decrypted in the API server.
    expect(secretValue(await readObject(w.admin, "v1", "Secret", w.ns, "db"), "password")).toBe(PASSWORD);
    expect(secretValue(await readObject(w.admin, "v1", "Secret", w.ns, "api"), "TOKEN")).toBe(TOKEN);

    // A hand edit of the Secret: undone, and recorded by key name, values hidden.
    await w.kubectl.ok([
      ...["patch", "secret", "db", "-n", w.ns, "--type=merge"],
      ...["-p", JSON.stringify({ data: { password: Buffer.from(INTRUDER).toString("base64") } })],
    ]);
    const drifted = io();
    expect(await main(args("--dry-run", "--sops-age-key-file", key.file), drifted)).toBe(0);
    expect(drifted.out).toContain(`update Secret ${w.ns}/db (data.password)\n`);
    expectNoPlaintext(drifted.out + drifted.err, "the dry-run output after the hand edit");
    const healed = await reconciler.cycle();
    expect(healed.errors).toEqual([]);
    expect(healed.drift?.undone).toEqual([
      expect.objectContaining({
        object: `Secret ${w.ns}/db`,
        field: "data.password",
        live: "(hidden)",
        git: "(hidden)",
      }),
    ]);
    expect(secretValue(await readObject(w.admin, "v1", "Secret", w.ns, "db"), "password")).toBe(PASSWORD);

    // A cycle's result carries its plan, the desired objects themselves, in memory for the caller
    // (what is applied); everything it reports beside them, and the plan as printed, hold no values.
    for (const result of [first, healed]) {
      expectNoPlaintext(JSON.stringify({ ...result, plan: undefined }), "a cycle result");
      expectNoPlaintext(formatSyncPlan(result.plan!), "a printed plan");
    }
    expectNoPlaintext(JSON.stringify(reconciler.status()), "the reconciler's status");
    expectNoPlaintext(logs.join("\n"), "the reconciler's logs");
    const inventory = await readInventory(w.admin, w.ns, w.instance);
    expectNoPlaintext(JSON.stringify(inventory), "the inventory");
    expect(Object.keys(inventory.record.inSync).some((entry) => entry.startsWith("_Secret_"))).toBe(false);
    expect(Object.keys(inventory.record.inSync)).toContain(`_ConfigMap_${w.ns}_web-config`);
    // The checkouts hold the ciphertext only, and no decrypted copy is left behind.
    expectNoPlaintext(treeText(work), "the CLI's work dir");
    expect(readdirSync(tmp)).toEqual([]);
  });
});
