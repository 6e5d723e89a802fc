import { describe, expect, it } from "vitest";
import { parsePolicy } from "../../../src/core/policy/parse-policy.js";
import {
  isNewer,
  metadataNeeds,
  rankTags,
  selectTag,
  type TagCandidate,
} from "../../../src/core/policy/select-tag.js";
import type { PolicyInput } from "../../../src/core/policy/schema.js";

const NOW = new Date("2024-06-01T12:00:00Z");
const DIGEST_A = `sha256:${"a".repeat(64)}`;
const DIGEST_B = `sha256:${"b".repeat(64)}`;

function choose(
  policy: PolicyInput,
  candidates: TagCandidate[] | string[],
  current?: string,
  currentDigest?: string,
) {
  const list = candidates.map((entry) => (typeof entry === "string" ? { tag: entry } : entry));
  const options: Parameters<typeof selectTag>[1] = { policy: parsePolicy(policy), now: NOW };
  if (current !== undefined) options.current = current;
  if (currentDigest !== undefined) options.currentDigest = currentDigest;
  return selectTag(list, options);
}

function chosenTag(
  policy: PolicyInput,
  candidates: TagCandidate[] | string[],
  current?: string,
): string | undefined {
  const selection = choose(policy, candidates, current);
  return selection.kind === "selected" ? selection.tag : undefined;
}

function hoursAgo(hours: number): Date {
  return new Date(NOW.getTime() - hours * 3_600_000);
}

describe("semver strategy", () => {
  it("chooses the highest version the range admits and explains it in one line", () => {
    const selection = choose({ range: "^1.0.0" }, ["1.0.0", "1.7.3", "1.8.0", "2.0.0", "latest"]);
    expect(selection).toEqual({
      kind: "selected",
      tag: "1.8.0",
      reason: "semver ^1.0.0 admits 1.8.0, the highest of 3 admitted tags",
    });
  });

  it("is the default strategy, and without a range admits every release (Argo CD Image Updater: no constraint picks the highest version)", () => {
    expect(chosenTag({}, ["0.9.0", "3.1.4", "2.0.0", "main"])).toBe("3.1.4");
  });

  it("compares numerically, not as text: 1.10.0 is above 1.9.0", () => {
    expect(chosenTag({ range: "^1.0.0" }, ["1.9.0", "1.10.0", "1.2.0"])).toBe("1.10.0");
  });

  it("accepts a v prefix on tags and treats v1.2.0 and 1.2.0 as the same version (Argo CD Image Updater update-strategies.md)", () => {
    expect(chosenTag({ range: "1.x" }, ["v1.0.0", "v1.2.0", "1.1.0"])).toBe("v1.2.0");
    expect(isNewer("v1.2.0", "1.2.0", parsePolicy({}))).toBe(false);
  });

  it("accepts a v prefix in the range (Argo: a constraint of v1.x matches 1.0)", () => {
    expect(chosenTag({ range: "v1.x" }, ["1.0.0", "1.4.0", "2.0.0"])).toBe("1.4.0");
  });

  it("follows the patch branch of a tilde range (Argo images.md: nginx:~1.19 stays on 1.19)", () => {
    expect(chosenTag({ range: "~1.19" }, ["1.19.1", "1.19.10", "1.20.0", "1.18.9"])).toBe("1.19.10");
  });

  it("skips prereleases unless the policy opts in (Argo: pre-release versions must be explicitly allowed)", () => {
    const list = ["1.0.0", "1.1.0-rc.1", "1.1.0-rc.2"];
    expect(chosenTag({ range: ">=1.0.0" }, list)).toBe("1.0.0");
    expect(chosenTag({ range: ">=1.0.0", prerelease: true }, list)).toBe("1.1.0-rc.2");
  });

  it("admits every prerelease within the bounds once the range names one, as Masterminds/semver does (npm would admit only 2.0.0-rc.*)", () => {
    expect(chosenTag({ range: ">=2.0.0-rc.1 <3.0.0" }, ["1.9.0", "2.0.0-rc.1", "2.0.0-rc.3"])).toBe(
      "2.0.0-rc.3",
    );
    expect(chosenTag({ range: ">=2.0.0-rc.1 <3.0.0" }, ["2.0.0-rc.3", "2.1.0-beta.1"])).toBe("2.1.0-beta.1");
  });

  it("admits neither latest, main nor v1.0.0-rc1 under >=1.0.0 (Kargo in Action §3.6.1)", () => {
    expect(choose({ range: ">=1.0.0" }, ["latest", "main", "v1.0.0-rc1"]).kind).toBe("none");
    expect(chosenTag({ range: ">=1.0.0" }, ["latest", "main", "v1.0.0-rc1", "1.1.0"])).toBe("1.1.0");
  });

  it("ranks a release above its own prereleases", () => {
    expect(chosenTag({ prerelease: true }, ["2.0.0-rc.9", "2.0.0", "2.0.0-beta"])).toBe("2.0.0");
  });

  it("ignores tags that are not strict X.Y.Z versions, so a numeric git SHA never outranks releases (https://github.com/fluxcd/flux/issues/2729)", () => {
    expect(chosenTag({}, ["1.2.3", "12345678", "1.3", "20240101", "v2"])).toBe("1.2.3");
  });

  it("ignores a tag with _ under ^17, as Flux, Argo CD and Kargo do, instead of reading 17.0.10_7-jre as 17.0.10+7-jre", () => {
    // Eclipse Temurin's layout: the _7 build suffix sits on the -jre flavour only.
    const tags = ["17.0.9-jdk", "17.0.10_7-jre", "17.0.8-jdk", "21.0.1-jdk"];
    expect(chosenTag({ range: "^17" }, tags)).toBeUndefined();
    expect(chosenTag({ range: "^17", prerelease: true }, tags)).toBe("17.0.9-jdk");
    expect(isNewer("1.0.1_b1", "1.0.0", parsePolicy({}))).toBe(false);
  });

  it("reads _ as + (build metadata, Helm's OCI convention) when the policy sets underscoreIsBuildMetadata", () => {
    const helm = { range: "^1.0.0", underscoreIsBuildMetadata: true };
    expect(chosenTag(helm, ["1.0.0_build.7", "0.9.0"])).toBe("1.0.0_build.7");
    expect(chosenTag({ range: "^1.0.0" }, ["1.0.0_build.7", "0.9.0"])).toBeUndefined();
    expect(isNewer("1.0.1_b1", "1.0.0_b9", parsePolicy(helm))).toBe(true);
  });

  it("orders build metadata deterministically although semver precedence ignores it: the higher build wins in any input order", () => {
    const helm = { underscoreIsBuildMetadata: true };
    expect(chosenTag(helm, ["1.0.0_build.1", "1.0.0_build.2"])).toBe("1.0.0_build.2");
    expect(chosenTag(helm, ["1.0.0_build.2", "1.0.0_build.1"])).toBe("1.0.0_build.2");
    expect(chosenTag(helm, ["1.0.0_build.10", "1.0.0_build.9"])).toBe("1.0.0_build.10");
  });

  it("never sees 1.0.0+build.1 as a tag: + is outside the OCI tag grammar", () => {
    expect(choose({}, ["1.0.0+build.1"]).kind).toBe("none");
  });

  it("does not treat another build of the current version as newer, so it never flip-flops between builds", () => {
    const helm = { underscoreIsBuildMetadata: true };
    const selection = choose(helm, ["1.0.0_build.1", "1.0.0_build.2"], "1.0.0_build.1");
    expect(selection.kind).toBe("none");
    expect(isNewer("1.0.0_build.2", "1.0.0_build.1", parsePolicy(helm))).toBe(false);
  });

  it("picks the same tag whichever of v1.0.0 and 1.0.0 is listed first", () => {
    expect(chosenTag({}, ["v1.0.0", "1.0.0"])).toBe(chosenTag({}, ["1.0.0", "v1.0.0"]));
  });

  it("compares the extracted version when allow and extract are set (Flux filterTags.extract works for every policy)", () => {
    const policy = {
      allow: "^release-(?<version>\\d+\\.\\d+\\.\\d+)-alpine$",
      extract: "$version",
      range: "^1.0.0",
    };
    expect(
      chosenTag(policy, ["release-1.2.0-alpine", "release-1.10.0-alpine", "release-1.11.0", "1.12.0"]),
    ).toBe("release-1.10.0-alpine");
  });
});

describe("policies copied from the peers' documentation choose what the peer chooses", () => {
  // Flux, Argo CD Image Updater and Kargo all read ranges with Masterminds/semver v3.
  it("Flux imagepolicies.md: pattern '.*-rc.*' with range '^1.x-0' chooses the latest 1.x release candidate", () => {
    // fluxcd/image-reflector-controller docs/spec/v1/imagepolicies.md, "Filter Tags".
    const tags = ["1.0.0", "1.1.0-rc.1", "1.2.0-rc.2", "1.2.0", "2.0.0-rc.1", "1.3.0-beta.1"];
    expect(chosenTag({ allow: ".*-rc.*", range: "^1.x-0" }, tags)).toBe("1.2.0-rc.2");
  });

  it("Flux imagepolicies.md: range 5.1.x chooses 5.1.4, not 5.2.0", () => {
    expect(chosenTag({ range: "5.1.x" }, ["5.0.3", "5.1.2", "5.1.4", "5.2.0", "6.0.0"])).toBe("5.1.4");
  });

  it("Flux imagepolicies.md: the minio RELEASE.<timestamp> example with (?P<timestamp>…) and $timestamp", () => {
    const policy = {
      strategy: "alphabetical" as const,
      allow: "^RELEASE\\.(?P<timestamp>.*)Z$",
      extract: "$timestamp",
    };
    const tags = [
      "RELEASE.2023-01-31T02-24-19Z",
      "RELEASE.2023-02-09T05-16-53Z",
      "latest",
      "RELEASE.2022-12-12T19-27-27Z",
    ];
    expect(chosenTag(policy, tags)).toBe("RELEASE.2023-02-09T05-16-53Z");
  });

  it("Flux semver_test.go: 1.0.x skips 1.0.0.1 and 1.0.0p and chooses 1.0.1; v-prefixed tags keep their prefix", () => {
    // fluxcd/image-reflector-controller internal/policy/semver_test.go, TestSemVer_Latest.
    expect(chosenTag({ range: "1.0.x" }, ["1.0.0", "1.0.0.1", "1.0.0p", "1.0.1", "1.2.0", "0.1.0"])).toBe(
      "1.0.1",
    );
    expect(chosenTag({ range: "1.0.x" }, ["v1.2.3", "v1.0.0", "v0.1.0"])).toBe("v1.0.0");
    expect(choose({ range: "1.0.x" }, ["b1.2.3", "b1.0.0", "b0.1.0"]).kind).toBe("none");
  });

  it("Flux filter_test.go: allow ver(\\d+) with extract $1 compares the numbered group", () => {
    // fluxcd/image-reflector-controller internal/policy/filter_test.go, "valid pattern with capture group".
    const policy = { strategy: "numerical" as const, allow: "ver(\\d+)", extract: "$1" };
    expect(chosenTag(policy, ["ver1", "ver2", "ver3", "rel1", "ver10"])).toBe("ver10");
  });

  it("Argo CD Image Updater update-strategies.md: 2.x-0 admits the 2.x prereleases, 2.x does not", () => {
    const tags = ["1.9.0", "2.0.0-rc1", "2.0.0", "2.1.0-rc.1", "3.0.0-rc.1"];
    expect(chosenTag({ range: "2.x-0" }, tags)).toBe("2.1.0-rc.1");
    expect(chosenTag({ range: "2.x" }, tags)).toBe("2.0.0");
  });

  it("Argo CD Image Updater update-strategies.md: 1.2.x stays on the 1.2 patch branch, 1.x on major 1", () => {
    const tags = ["1.2.5", "1.2.12", "1.3.0", "1.15.2", "2.0.0"];
    expect(chosenTag({ range: "1.2.x" }, tags)).toBe("1.2.12");
    expect(chosenTag({ range: "1.x" }, tags)).toBe("1.15.2");
  });

  it("Kargo working-with-warehouses.md: constraint ^1.26.0 chooses the highest 1.x at or above 1.26.0", () => {
    expect(chosenTag({ range: "^1.26.0" }, ["1.25.9", "1.26.0", "1.27.3", "2.0.0", "1.27.4-alpine"])).toBe(
      "1.27.3",
    );
  });

  it("Masterminds README: comma AND, || OR and != (>= 1.2, < 3.0.0 || >= 4.2.3; >=1.0, !=1.5.0)", () => {
    const tags = ["1.1.0", "2.9.0", "3.5.0", "4.2.3", "4.0.0"];
    expect(chosenTag({ range: ">= 1.2, < 3.0.0 || >= 4.2.3" }, tags)).toBe("4.2.3");
    expect(chosenTag({ range: ">= 1.2, < 3.0.0" }, tags)).toBe("2.9.0");
    expect(chosenTag({ range: ">=1.0, !=1.5.0" }, ["1.4.2", "1.5.0"])).toBe("1.4.2");
    expect(chosenTag({ range: "~1.2" }, ["1.2.9", "1.3.0"])).toBe("1.2.9");
  });

  it("ignores v2.0-rc1 and 1.0, which Argo and Flux read leniently: Ferry reads only X.Y.Z tags (Kargo's strictSemvers default)", () => {
    expect(choose({ range: "2.x-0" }, ["v2.0-rc1", "1.0"]).kind).toBe("none");
  });
});

describe("ties between tags of the same value", () => {
  it("chooses the tag the pattern matches most exactly (the shortest), not its -debug variant, in any order", () => {
    const policy = { allow: "^(?P<v>\\d+\\.\\d+\\.\\d+)(-debug|-slim)?$", extract: "$v" };
    const tags = ["1.2.3-debug", "1.2.3", "1.2.3-slim", "1.1.0"];
    expect(chosenTag(policy, tags)).toBe("1.2.3");
    expect(chosenTag(policy, [...tags].reverse())).toBe("1.2.3");
  });

  it("between tags of the same length, chooses the byte-wise highest, in any order", () => {
    const policy = {
      strategy: "numerical" as const,
      allow: "^main-[a-f0-9]+-(?P<ts>[0-9]+)$",
      extract: "$ts",
    };
    expect(chosenTag(policy, ["main-abc-17", "main-fed-17", "main-aaa-9"])).toBe("main-fed-17");
    expect(chosenTag(policy, ["main-fed-17", "main-abc-17"])).toBe("main-fed-17");
  });

  it("prefers 1.0.0 to v1.0.0 and 7 to 007", () => {
    expect(chosenTag({}, ["v1.0.0", "1.0.0"])).toBe("1.0.0");
    expect(chosenTag({ strategy: "numerical" }, ["007", "7"])).toBe("7");
  });
});

describe("moving back on purpose when the running tag is outside the policy (Argo CD Image Updater: the current tag need not match the constraint)", () => {
  const tags = ["1.8.0", "1.9.0", "2.0.0", "2.1.0"];

  it("keeps 2.0.0 under a range narrowed to 1.x and says the running version is outside the policy", () => {
    const selection = choose({ range: "1.x" }, tags, "2.0.0");
    expect(selection.kind).toBe("none");
    expect(selection.notice).toBe(
      "running 2.0.0 is outside the policy (semver 1.x): Ferry does not move backwards on its own (the policy's best tag is 1.9.0); set allowDowngrade: true in the policy, or /promote a version, to move back",
    );
  });

  it("moves back to the best tag the narrowed range admits with allowDowngrade, as Argo CD Image Updater does", () => {
    const selection = choose({ range: "1.x", allowDowngrade: true }, tags, "2.0.0");
    expect(selection).toMatchObject({
      kind: "selected",
      tag: "1.9.0",
      notice: "running 2.0.0 is outside the policy (semver 1.x): allowDowngrade moves it back to 1.9.0",
    });
    expect(selection.reason).toContain("moving from 2.0.0, outside the policy (allowDowngrade)");
    expect(rankTags(tags, parsePolicy({ range: "1.x", allowDowngrade: true }), "2.0.0")).toEqual([
      "1.9.0",
      "1.8.0",
    ]);
  });

  it("still never moves backwards with allowDowngrade while the running tag is inside the policy", () => {
    const selection = choose({ range: "1.x", allowDowngrade: true }, ["1.2.0", "1.5.0"], "1.8.0");
    expect(selection.kind).toBe("none");
    expect(selection.notice).toBeUndefined();
  });

  it("moves back from a tag a new ignore names, and not from a tag the policy cannot read at all", () => {
    expect(chosenTag({ ignore: ["2.0.0"], allowDowngrade: true }, tags, "2.0.0")).toBe("2.1.0");
    expect(chosenTag({ range: "<2", ignore: ["1.9.0"], allowDowngrade: true }, tags, "1.9.0")).toBe("1.8.0");
    expect(choose({ range: "1.x", allowDowngrade: true }, tags, "latest")).toMatchObject({ tag: "1.9.0" });
    expect(choose({ range: "1.x", allowDowngrade: true }, tags, "latest").notice).toBeUndefined();
  });
});

describe("never moving backwards", () => {
  it("chooses nothing when current is already the highest admitted version, and says so", () => {
    expect(choose({ range: "^1.0.0" }, ["1.0.0", "1.8.0"], "1.8.0")).toEqual({
      kind: "none",
      reason: "current 1.8.0 is the newest tag semver ^1.0.0 admits",
    });
  });

  it("chooses nothing older when current is above every admitted tag, naming the highest one", () => {
    const selection = choose({ range: "^1.0.0" }, ["1.0.0", "1.8.0"], "2.0.0");
    expect(selection).toEqual({
      kind: "none",
      reason: "no tag semver ^1.0.0 admits is newer than current 2.0.0 (the highest is 1.8.0)",
      notice: expect.stringMatching(/^running 2\.0\.0 is outside the policy \(semver \^1\.0\.0\)/),
    });
  });

  it("moves up from a current tag outside the range, since the current tag need not be admitted", () => {
    expect(chosenTag({ range: "^1.0.0" }, ["1.0.0", "1.8.0"], "0.9.0")).toBe("1.8.0");
  });

  it("is not blocked by a current tag the policy cannot read, like latest under semver (Argo: the current tag need not follow semver)", () => {
    const selection = choose({ range: "1.x" }, ["1.0.0", "1.2.0"], "latest");
    expect(selection.kind).toBe("selected");
    if (selection.kind === "selected") {
      expect(selection.tag).toBe("1.2.0");
      expect(selection.reason).toContain("current latest is not a tag");
    }
  });

  it("under numerical desc, newer means lower", () => {
    expect(chosenTag({ strategy: "numerical", order: "desc" }, ["5", "3", "9"], "4")).toBe("3");
    expect(choose({ strategy: "numerical", order: "desc" }, ["5", "3", "9"], "3").kind).toBe("none");
  });
});

describe("numerical strategy (Flux ImagePolicy policy.numerical)", () => {
  it("chooses the highest number, whatever the text order (Flux: numerical compares values, 10 > 9)", () => {
    expect(chosenTag({ strategy: "numerical" }, ["9", "10", "100", "11"])).toBe("100");
  });

  it("with order desc chooses the lowest (Flux: descending order selects the smallest)", () => {
    expect(chosenTag({ strategy: "numerical", order: "desc" }, ["9", "10", "100", "11"])).toBe("9");
  });

  it("reads decimals exactly", () => {
    expect(chosenTag({ strategy: "numerical" }, ["1.5", "1.45", "1.50001"])).toBe("1.50001");
  });

  it("compares numbers beyond 2^53 exactly, where a float would call them equal", () => {
    expect(chosenTag({ strategy: "numerical" }, ["9007199254740993", "9007199254740992"])).toBe(
      "9007199254740993",
    );
  });

  it("skips tags that are not numbers instead of failing the whole policy as Flux does", () => {
    expect(chosenTag({ strategy: "numerical" }, ["latest", "12", "1e9", "0x20", "7"])).toBe("12");
  });

  it("breaks the tie between 007 and 7 the same way in any input order", () => {
    const first = chosenTag({ strategy: "numerical" }, ["007", "7"]);
    expect(chosenTag({ strategy: "numerical" }, ["7", "007"])).toBe(first);
    expect(["7", "007"]).toContain(first);
  });

  it("treats 007 as equal to a current 7, so it is not an update", () => {
    expect(choose({ strategy: "numerical" }, ["007"], "7").kind).toBe("none");
  });

  it("orders builds by the extracted timestamp, as the Flux docs' main-<sha>-<ts> example does", () => {
    const policy = {
      strategy: "numerical" as const,
      allow: "^main-[a-f0-9]+-(?P<ts>[0-9]+)",
      extract: "$ts",
    };
    const list = [
      "main-f3bacd1-1700000100",
      "main-0a1b2c3-1700000300",
      "main-99aa11b-1700000200",
      "feature-x-1800000000",
    ];
    expect(chosenTag(policy, list)).toBe("main-0a1b2c3-1700000300");
  });

  it("reads the current tag through the same extract", () => {
    const policy = {
      strategy: "numerical" as const,
      allow: "^main-[a-f0-9]+-(?P<ts>[0-9]+)",
      extract: "${ts}",
    };
    expect(choose(policy, ["main-aaa-5", "main-bbb-9"], "main-ccc-9").kind).toBe("none");
    expect(chosenTag(policy, ["main-aaa-5", "main-bbb-9"], "main-ccc-6")).toBe("main-bbb-9");
  });
});

describe("alphabetical strategy (Flux policy.alphabetical, Argo alphabetical)", () => {
  it("chooses the lexically highest tag, fit for calver YYYY-MM-DD tags (Argo update-strategies.md)", () => {
    const policy = { strategy: "alphabetical" as const, allow: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$" };
    expect(chosenTag(policy, ["2024-01-31", "2024-02-01", "2023-12-31", "latest"])).toBe("2024-02-01");
  });

  it("with order desc selects the first letter (Flux API: ascending would select Z, descending A)", () => {
    expect(chosenTag({ strategy: "alphabetical", order: "desc" }, ["b", "Z", "a"])).toBe("Z");
    expect(chosenTag({ strategy: "alphabetical" }, ["b", "Z", "a"])).toBe("b");
  });

  it("compares bytes, not the locale: uppercase sorts before lowercase", () => {
    expect(chosenTag({ strategy: "alphabetical" }, ["Alpha", "alpha", "Beta"])).toBe("alpha");
  });

  it("sorts 1.10 below 1.2, as lexical order does (updatecli lex example)", () => {
    expect(chosenTag({ strategy: "alphabetical" }, ["1.10", "1.2"])).toBe("1.2");
  });
});

describe("newest-build strategy (Argo newest-build)", () => {
  it("chooses the tag with the most recent created date, whatever its name", () => {
    const list = [
      { tag: "a5fb3d3", created: hoursAgo(5) },
      { tag: "f7bb2e3", created: hoursAgo(1) },
      { tag: "0000000", created: hoursAgo(3) },
    ];
    expect(chosenTag({ strategy: "newest-build" }, list)).toBe("f7bb2e3");
  });

  it("breaks a tie of equal build dates by the lexically highest name, like Argo's f33bacd/dev/latest example", () => {
    const built = hoursAgo(2);
    const list = [
      { tag: "f33bacd", created: built },
      { tag: "dev", created: built },
      { tag: "latest", created: built },
    ];
    expect(chosenTag({ strategy: "newest-build" }, list)).toBe("latest");
    expect(chosenTag({ strategy: "newest-build", allow: "^[0-9a-f]{7}$" }, list)).toBe("f33bacd");
  });

  it("ignores tags listed in ignore (Argo ignore-tags: latest, master)", () => {
    const list = [
      { tag: "latest", created: hoursAgo(1) },
      { tag: "master", created: hoursAgo(1) },
      { tag: "c0ffee1", created: hoursAgo(2) },
    ];
    expect(chosenTag({ strategy: "newest-build", ignore: ["latest", "master"] }, list)).toBe("c0ffee1");
  });

  it("does not choose a build older than or as old as the current one", () => {
    const list = [
      { tag: "aaaaaaa", created: hoursAgo(3) },
      { tag: "bbbbbbb", created: hoursAgo(2) },
    ];
    expect(choose({ strategy: "newest-build" }, list, "bbbbbbb")).toEqual({
      kind: "none",
      reason: "current bbbbbbb is the newest tag newest-build admits",
    });
    expect(
      choose({ strategy: "newest-build" }, [...list, { tag: "ccccccc", created: hoursAgo(2) }], "bbbbbbb")
        .kind,
    ).toBe("none");
  });

  it("cannot use a tag without a created date and says so", () => {
    const selection = choose({ strategy: "newest-build" }, ["abc1234"]);
    expect(selection).toEqual({
      kind: "none",
      reason: "newest-build admits 1 tag but none is usable: 1 without a created date",
    });
  });
});

describe("digest strategy (Argo digest: follow a mutable tag)", () => {
  const policy = { strategy: "digest" as const, tag: "latest" };

  it("chooses the moving tag with its digest when the digest differs from the running one", () => {
    const selection = choose(
      policy,
      [
        { tag: "latest", digest: DIGEST_B },
        { tag: "1.0.0", digest: DIGEST_A },
      ],
      "latest",
      DIGEST_A,
    );
    expect(selection).toMatchObject({ kind: "selected", tag: "latest", digest: DIGEST_B });
  });

  it("chooses nothing while the tag still points to the running digest", () => {
    const selection = choose(policy, [{ tag: "latest", digest: DIGEST_A }], "latest", DIGEST_A);
    expect(selection.kind).toBe("none");
    expect(selection.reason).toContain("still points to the current digest");
  });

  it("updates a running image that has no digest yet (Argo: the running image uses a tag)", () => {
    expect(choose(policy, [{ tag: "latest", digest: DIGEST_A }], "latest")).toMatchObject({
      kind: "selected",
      digest: DIGEST_A,
    });
  });

  it("chooses nothing when the moving tag is missing or has no digest", () => {
    expect(choose(policy, [{ tag: "1.0.0", digest: DIGEST_A }]).kind).toBe("none");
    expect(choose(policy, ["latest"]).reason).toContain("no digest");
  });
});

describe("allow, ignore and invalid tags", () => {
  it("searches with allow like Argo's regexp: and Flux's pattern: unanchored unless ^ and $ are written", () => {
    expect(chosenTag({ strategy: "alphabetical", allow: "abc" }, ["xabcx", "abd"])).toBe("xabcx");
    expect(chosenTag({ strategy: "alphabetical", allow: "^abc$" }, ["xabcx", "abc"])).toBe("abc");
  });

  it("admits only 7-hex-digit SHAs with Argo's documented ^[0-9a-f]{7}$", () => {
    const policy = { strategy: "alphabetical" as const, allow: "^[0-9a-f]{7}$" };
    expect(chosenTag(policy, ["a5fb3d3", "f7bb2e3", "latest", "master", "f7bb2e31"])).toBe("f7bb2e3");
  });

  it("never chooses a tag matching an ignore glob", () => {
    expect(chosenTag({ ignore: ["1.9.*", "*-debug"] }, ["1.8.0", "1.9.0", "1.9.1", "2.0.0-debug"])).toBe(
      "1.8.0",
    );
  });

  it("ignores everything with ignore '*' (Argo: disable updates by ignoring all tags)", () => {
    expect(choose({ ignore: ["*"] }, ["1.0.0", "2.0.0"])).toEqual({
      kind: "none",
      reason: "semver * admits none of 2 tags",
    });
  });

  it("ignores names that are not valid OCI tags, such as injection attempts (docs/reliability.md row 14)", () => {
    const list = [
      "1.0.0",
      "9.9.9\n---\nkind: ClusterRoleBinding",
      `9.${"9".repeat(130)}.0`,
      ".9.9.9",
      "9.9.9 ",
    ];
    expect(chosenTag({}, list)).toBe("1.0.0");
  });

  it("counts a tag listed twice once", () => {
    expect(choose({}, ["1.0.0", "1.0.0", "2.0.0"]).reason).toContain("the highest of 2 admitted tags");
  });
});

describe("minAge, platforms and pin", () => {
  it("skips tags younger than minAge and chooses the newest old-enough one", () => {
    const list = [
      { tag: "1.2.0", created: hoursAgo(0.5) },
      { tag: "1.1.0", created: hoursAgo(3) },
      { tag: "1.0.0", created: hoursAgo(30) },
    ];
    expect(chosenTag({ minAge: "1h" }, list)).toBe("1.1.0");
  });

  it("explains when every newer tag is too young", () => {
    const list = [{ tag: "1.2.0", created: hoursAgo(0.5) }];
    expect(choose({ minAge: "1h" }, list, "1.1.0")).toEqual({
      kind: "none",
      reason: "semver * admits 1 tag newer than current 1.1.0 but none is usable: 1 younger than minAge 1h",
    });
  });

  it("treats a created date in the future as too young, never as old enough", () => {
    expect(choose({ minAge: "1m" }, [{ tag: "1.0.0", created: hoursAgo(-5) }]).kind).toBe("none");
  });

  it("cannot prove the age of a tag without a created date", () => {
    expect(choose({ minAge: "1h" }, ["1.0.0"]).reason).toContain("without a created date");
  });

  it("requires every listed platform in the index (Argo platforms)", () => {
    const list = [
      { tag: "1.1.0", platforms: ["linux/amd64"] },
      { tag: "1.0.0", platforms: ["linux/amd64", "linux/arm64/v8"] },
    ];
    expect(chosenTag({ platforms: ["linux/amd64", "linux/arm64"] }, list)).toBe("1.0.0");
  });

  it("matches a required variant exactly", () => {
    const list = [{ tag: "1.0.0", platforms: ["linux/arm/v6"] }];
    expect(choose({ platforms: ["linux/arm/v7"] }, list).kind).toBe("none");
    expect(chosenTag({ platforms: ["linux/arm/v6"] }, list)).toBe("1.0.0");
  });

  it("needs a digest to pin one, and returns it with the tag", () => {
    expect(choose({ pin: "digest" }, [{ tag: "1.0.0", digest: DIGEST_A }])).toMatchObject({
      kind: "selected",
      tag: "1.0.0",
      digest: DIGEST_A,
    });
    expect(choose({ pin: "digest-only" }, ["1.0.0"]).reason).toContain(
      "without a digest (pin digest-only needs one)",
    );
  });
});

describe("rankTags", () => {
  it("lists admitted tags newer than current, best first", () => {
    const policy = parsePolicy({ range: "^1.0.0" });
    expect(rankTags(["1.0.0", "1.9.0", "latest", "1.10.0", "2.0.0", "1.2.0"], policy, "1.2.0")).toEqual([
      "1.10.0",
      "1.9.0",
    ]);
  });

  it("keeps input order for newest-build, which needs created dates to order", () => {
    expect(
      rankTags(["b", "a", "latest"], parsePolicy({ strategy: "newest-build", ignore: ["latest"] })),
    ).toEqual(["b", "a"]);
  });

  it("lists the current tag first under newest-build so that its build date gets fetched", () => {
    expect(rankTags(["b", "cur", "a"], parsePolicy({ strategy: "newest-build" }), "cur")).toEqual([
      "cur",
      "b",
      "a",
    ]);
    expect(rankTags(["b", "a"], parsePolicy({ strategy: "newest-build" }), "cur")).toEqual(["b", "a"]);
  });

  it("never moves newest-build back when the adapter describes only the ranked tags", () => {
    const policy = parsePolicy({ strategy: "newest-build" });
    const created: Record<string, Date> = { old1: hoursAgo(9), cur: hoursAgo(2), old2: hoursAgo(5) };
    const described = rankTags(Object.keys(created), policy, "cur").map((tag) => ({
      tag,
      created: created[tag]!,
    }));
    expect(selectTag(described, { policy, now: NOW, current: "cur" }).kind).toBe("none");
  });

  it("lists only the moving tag for digest", () => {
    expect(rankTags(["1.0.0", "latest"], parsePolicy({ strategy: "digest", tag: "latest" }))).toEqual([
      "latest",
    ]);
  });
});

describe("metadataNeeds", () => {
  it("asks for nothing beyond names for a plain semver policy", () => {
    expect(metadataNeeds(parsePolicy({}))).toEqual({
      created: false,
      platforms: false,
      digest: false,
      signature: false,
    });
  });

  it("asks for created dates, platforms and digests only when the policy uses them", () => {
    expect(metadataNeeds(parsePolicy({ strategy: "newest-build" }))).toMatchObject({ created: true });
    expect(metadataNeeds(parsePolicy({ minAge: "1h", platforms: ["linux/arm64"], pin: "digest" }))).toEqual({
      created: true,
      platforms: true,
      digest: true,
      signature: false,
    });
    expect(metadataNeeds(parsePolicy({ strategy: "digest", tag: "latest" }))).toMatchObject({ digest: true });
  });
});

describe("isNewer", () => {
  it("answers under the policy's order and undefined when current is unreadable", () => {
    const policy = parsePolicy({ range: "^1.0.0" });
    expect(isNewer("1.2.0", "1.1.0", policy)).toBe(true);
    expect(isNewer("1.1.0", "1.2.0", policy)).toBe(false);
    expect(isNewer("2.5.0", "1.2.0", policy)).toBe(true);
    expect(isNewer("1.2.0", "latest", policy)).toBeUndefined();
    expect(isNewer("latest", "1.2.0", policy)).toBe(false);
  });

  it("is undefined for strategies that need metadata to order", () => {
    expect(isNewer("b", "a", parsePolicy({ strategy: "newest-build" }))).toBeUndefined();
  });
});
