import { describe, expect, it } from "vitest";
import { remoteTarget } from "../../../src/core/kustomize/remote-target.js";

describe("what Ferry fetches for a remote kustomize reference", () => {
  it("reads kustomize's git forms: // subfolder, .git, ?ref=, git::, a host without a scheme", () => {
    expect(remoteTarget("https://github.com/acme/base//app?ref=v1", true)).toEqual({
      kind: "git",
      repository: "https://github.com/acme/base",
      ref: "v1",
      subfolder: "app",
    });
    expect(remoteTarget("github.com/acme/base/envs/prod?version=main", true)).toEqual({
      kind: "git",
      repository: "https://github.com/acme/base",
      ref: "main",
      subfolder: "envs/prod",
    });
    expect(remoteTarget("git::https://git.example.com/x/base.git/app", true)).toEqual({
      kind: "git",
      repository: "https://git.example.com/x/base.git",
      subfolder: "app",
    });
    expect(remoteTarget("https://example.com/bases/cm.yaml", true)).toEqual({
      kind: "file",
      url: "https://example.com/bases/cm.yaml",
    });
    expect(remoteTarget("https://example.com/patch", false)).toEqual({
      kind: "file",
      url: "https://example.com/patch",
    });
  });

  it("refuses what is not HTTP(S), carries credentials or climbs out of the repository", () => {
    for (const value of [
      "ssh://git@github.com/acme/base",
      "git@github.com:acme/base.git",
      "file:///etc/",
      "gh:acme/base",
      "s3://bucket/x",
      "https://user:pass@github.com/acme/base",
      "https://github.com/acme/base//../../x",
      "https://github.com/acme/base?ref=$(id)",
    ])
      expect(remoteTarget(value, true), value).toHaveProperty("problem");
  });
});
