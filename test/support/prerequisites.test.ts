import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { missingPrerequisites } from "./prerequisites.js";

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
  it("names git, the renderer and helm, each with how to get it, on a PATH without them", () => {
    const missing = missingPrerequisites(pathWith()).join("\n");
    expect(missing).toMatch(/git is not on PATH: install git/);
    expect(missing).toMatch(/neither kubectl nor kustomize is on PATH: install kubectl/);
    expect(missing).toMatch(/helm is not on PATH: install helm v3\.22\.0/);
    expect(missing).toMatch(/htpasswd is not on PATH/);
  });

  it("accepts kustomize in place of kubectl", () => {
    const missing = missingPrerequisites(pathWith("git", "kustomize", "helm", "htpasswd")).join("\n");
    expect(missing).not.toMatch(/git|kubectl|kustomize|helm|htpasswd/);
  });
});
