import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PINNED_AGE, PINNED_HELM, PINNED_SOPS } from "../../src/adapters/render/render-tools.js";
import { missingPrerequisites, withProvisionedTools } from "./prerequisites.js";

const PROVISION = path.join(import.meta.dirname, "provision.sh");

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function pathWith(...tools: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), "ferry-prereq-"));
  dirs.push(dir);
  for (const tool of tools) {
    writeFileSync(path.join(dir, tool), "#!/bin/sh\n");
    chmodSync(path.join(dir, tool), 0o755);
  }
  return dir;
}

describe("the test suite's prerequisites check", () => {
  it("names git, the renderer, helm, sops and age-keygen, each with how to get it, on a PATH without them", () => {
    const missing = missingPrerequisites(pathWith()).join("\n");
    expect(missing).toMatch(/git is not on PATH: install git/);
    expect(missing).toMatch(/neither kubectl nor kustomize is on PATH: install kubectl/);
    expect(missing).toMatch(/helm is not on PATH: install helm v3\.22\.0/);
    expect(missing).toMatch(/htpasswd is not on PATH/);
    expect(missing).toContain(`sops is not on PATH: install sops ${PINNED_SOPS}`);
    expect(missing).toContain(`go install filippo.io/age/cmd/age-keygen@${PINNED_AGE}`);
  });

  it("accepts kustomize in place of kubectl", () => {
    const missing = missingPrerequisites(
      pathWith("git", "kustomize", "helm", "htpasswd", "sops", "age-keygen"),
    ).join("\n");
    expect(missing).not.toMatch(/git|kubectl|kustomize|helm|htpasswd|sops|age-keygen/);
  });

  it("finds helm and kustomize where provision.sh builds them", () => {
    const cache = mkdtempSync(path.join(tmpdir(), "ferry-prereq-cache-"));
    dirs.push(cache);
    const helmBin = path.join(cache, "ferry", `helm-${PINNED_HELM}`, "bin");
    mkdirSync(helmBin, { recursive: true });
    writeFileSync(path.join(helmBin, "helm"), "#!/bin/sh\n", { mode: 0o755 });
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = cache;
    try {
      const searchPath = withProvisionedTools(pathWith("git", "kubectl", "htpasswd"));
      expect(searchPath.split(path.delimiter)[0]).toBe(helmBin);
      expect(missingPrerequisites(searchPath).join("\n")).not.toMatch(/helm/);
    } finally {
      if (saved === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = saved;
    }
  });
});

describe("provision.sh, as `npm test` runs it on a new machine", () => {
  /** A PATH of real git, bash and coreutils plus the named stand-ins; `go` records its calls and "builds" the tool. */
  function freshMachine(...tools: string[]) {
    const bin = pathWith(...tools);
    for (const real of [
      "bash",
      "sed",
      "id",
      "git",
      "env",
      "mkdir",
      "chmod",
      "cat",
      "printf",
      "dirname",
      "node",
      "uname",
    ]) {
      const found = execFileSync("bash", ["-c", `command -v ${real}`], { encoding: "utf8" }).trim();
      writeFileSync(path.join(bin, real), `#!/bin/sh\nexec ${found} "$@"\n`, { mode: 0o755 });
    }
    const log = path.join(bin, "go.log");
    writeFileSync(
      path.join(bin, "go"),
      `#!/bin/sh\necho "$GOBIN $*" >> ${log}\nmkdir -p "$GOBIN"\nname=$(echo "$2" | sed 's#.*/##; s#@.*##')\nprintf '#!/bin/sh\\necho built\\n' > "$GOBIN/$name"\nchmod +x "$GOBIN/$name"\n`,
      { mode: 0o755 },
    );
    const cache = mkdtempSync(path.join(tmpdir(), "ferry-provision-cache-"));
    dirs.push(cache);
    const env = {
      PATH: bin,
      HOME: cache,
      XDG_CACHE_HOME: cache,
      FERRY_DISTRIBUTION_BINARY: "/bin/sh",
      FERRY_CHROMIUM_BINARY: "/bin/sh",
      FERRY_GNU_TIME: "/bin/sh",
    };
    const run = (...args: string[]) => spawnSync("bash", [PROVISION, ...args], { env, encoding: "utf8" });
    return { bin, cache, log, run };
  }

  it("builds helm into the cache once and runs the command with it on PATH", () => {
    const machine = freshMachine("kubectl", "htpasswd", "sops", "age-keygen");
    const first = machine.run("helm", "version");
    expect(first.stderr).toMatch(new RegExp(`building helm ${PINNED_HELM.replaceAll(".", "\\.")}`));
    expect(first.status).toBe(0);
    expect(first.stdout.trim()).toBe("built");
    expect(existsSync(path.join(machine.cache, "ferry", `helm-${PINNED_HELM}`, "bin", "helm"))).toBe(true);
    const second = machine.run("helm", "version");
    expect(second.status).toBe(0);
    expect(readFileSync(machine.log, "utf8").trim().split("\n")).toHaveLength(1);
  });

  it("builds sops and age-keygen from their Go modules at the pinned versions, and puts them on PATH", () => {
    const machine = freshMachine("kubectl", "htpasswd", "helm");
    const result = machine.run("--env");
    expect(result.status).toBe(0);
    const log = readFileSync(machine.log, "utf8");
    expect(log).toContain(`github.com/getsops/sops/v3/cmd/sops@${PINNED_SOPS}`);
    expect(log).toContain(`filippo.io/age/cmd/age-keygen@${PINNED_AGE}`);
    expect(result.stdout).toContain(`sops-${PINNED_SOPS}/bin`);
    expect(result.stdout).toContain(`age-keygen-${PINNED_AGE}/bin`);
  });

  it("builds kustomize only when neither kubectl nor kustomize is there", () => {
    const machine = freshMachine("htpasswd", "helm");
    const result = machine.run("--env");
    expect(result.status).toBe(0);
    expect(readFileSync(machine.log, "utf8")).toMatch(/sigs\.k8s\.io\/kustomize\/kustomize\/v5@v/);
    expect(result.stdout).toMatch(/^export PATH=.*kustomize-v/);
  });

  /** Replaces the machine's `id` with one that says `uid`, and adds an apt-get that records its calls. */
  function asUser(machine: ReturnType<typeof freshMachine>, uid: number) {
    writeFileSync(path.join(machine.bin, "id"), `#!/bin/sh\necho ${uid}\n`, { mode: 0o755 });
    const apt = path.join(machine.bin, "apt.log");
    writeFileSync(path.join(machine.bin, "apt-get"), `#!/bin/sh\necho "$*" >> ${apt}\n`, { mode: 0o755 });
    return apt;
  }

  it("names the Debian packages it cannot install without root, and stops", () => {
    const machine = freshMachine("kubectl", "helm");
    const apt = asUser(machine, 1000);
    const result = machine.run("git", "--version");
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/as root: apt-get install apache2-utils/);
    expect(existsSync(apt)).toBe(false);
  });

  it("as root, installs the missing Debian packages with apt-get, saying so", () => {
    const machine = freshMachine("kubectl", "helm");
    const apt = asUser(machine, 0);
    const result = machine.run("git", "--version");
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/installing apache2-utils with apt-get/);
    expect(readFileSync(apt, "utf8")).toMatch(/install -y -qq apache2-utils/);
  });
});
