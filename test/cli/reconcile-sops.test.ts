import path from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import { type Setup, reconcileIo, setupPerTest } from "../support/reconciler-harness.js";
import { makeAgeKey, sopsEncrypt } from "../support/sops-keys.js";

const { temp, setup } = setupPerTest();
let env: Setup | undefined;

const PASSWORD = "pw-from-the-pod-env-0417";
const SECRET = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: ${PASSWORD}\n`;

describe("ferry reconcile and SOPS", () => {
  it("takes the key file from FERRY_RECONCILE_SOPS_AGE_KEY_FILE, as the pod does, and applies the Secret decrypted", async () => {
    env = await setup();
    const key = makeAgeKey(temp.make());
    env.repo.commit({ "env/staging/db.enc.yaml": sopsEncrypt(SECRET, "yaml", key.recipient) });
    const kubeconfig = path.join(temp.make(), "kubeconfig");
    await env.sim.writeKubeconfig(kubeconfig);
    const args = ["reconcile", "--repo", ".", "--path", "env/staging", "--namespace", "shop", "--once"];
    const io = reconcileIo(env.repo.dir);
    Object.assign(io.env, { FERRY_RECONCILE_SOPS_AGE_KEY_FILE: key.file });
    const code = await main([...args, "--kubeconfig", kubeconfig, "--work-dir", temp.make()], io);
    expect(io.err).not.toMatch(/ferry reconcile:/);
    expect(code).toBe(0);
    const live = env.sim.get("v1", "Secret", "shop", "db") as {
      data?: { password?: string };
      stringData?: unknown;
    };
    const value = live.data?.password ?? (live.stringData as { password?: string } | undefined)?.password;
    expect(value === PASSWORD || Buffer.from(value ?? "", "base64").toString() === PASSWORD).toBe(true);
    expect(io.out + io.err).not.toContain(PASSWORD);

    // --print-rbac decrypts as a cycle does (sops encrypted the manifest's kind too).
    const rbac = reconcileIo(env.repo.dir);
    const printArgs = [...args.slice(0, -1), "--print-rbac", "--work-dir", temp.make()];
    expect(await main([...printArgs, "--sops-age-key-file", key.file], rbac)).toBe(0);
    expect(rbac.out).toMatch(/resources:\n\s+- secrets\n/);
    const keyless = reconcileIo(env.repo.dir);
    expect(await main(printArgs, keyless)).toBe(1);
    expect(keyless.err).toContain("cannot decrypt env/staging/db.enc.yaml: no key can decrypt it");
  });
});
