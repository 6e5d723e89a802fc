import { describe, expect, it } from "vitest";
import {
  installationShard,
  ownerOf,
  shareOf,
  type ScanInstallation,
} from "../../../src/core/shard/rendezvous.js";

const ids = Array.from({ length: 3000 }, (_, i) => 1000 + i);
const three = ["ferry-a", "ferry-b", "ferry-c"];

describe("rendezvous sharding of the periodic scan", () => {
  it("gives every installation to exactly one live member, whatever order the members are listed in", () => {
    const shards = three.map((member) => installationShard(ids, three, member));
    const reversed = [...three].reverse();
    expect(shards.flat().sort((a, b) => a - b)).toEqual(ids);
    for (const [i, member] of three.entries())
      expect(installationShard(ids, reversed, member)).toEqual(shards[i]);
  });

  it("spreads installations about evenly: each of 3 members holds between a quarter and two fifths", () => {
    for (const member of three) {
      const size = installationShard(ids, three, member).length;
      expect(size).toBeGreaterThan(ids.length / 4);
      expect(size).toBeLessThan((ids.length * 2) / 5);
    }
  });

  it("moves only the leaving member's installations when one leaves, and only about 1/N when it comes back", () => {
    const before = new Map(ids.map((id) => [id, ownerOf(`installation/${id}`, three)]));
    const two = ["ferry-a", "ferry-b"];
    const after = new Map(ids.map((id) => [id, ownerOf(`installation/${id}`, two)]));
    const moved = ids.filter((id) => before.get(id) !== after.get(id));
    // Exactly ferry-c's installations moved: nothing held by a surviving member changed hands.
    expect(moved.every((id) => before.get(id) === "ferry-c")).toBe(true);
    expect(moved.length).toBe(ids.filter((id) => before.get(id) === "ferry-c").length);
    // ferry-c back: the same ones return to it, which is about a third.
    const back = ids.filter((id) => after.get(id) !== ownerOf(`installation/${id}`, three));
    expect(back.sort()).toEqual(moved.sort());
    expect(back.length).toBeLessThan(ids.length / 2);
  });

  it("splits a very large installation by repository across the members, and leaves a small one whole", () => {
    const repositories = Array.from({ length: 1200 }, (_, i) => `repo-${i}`);
    const large: ScanInstallation = { id: 7, repositories };
    const shares = three.map((member) =>
      shareOf(large, three, member, { largeInstallationRepositories: 500 }),
    );
    const scanned = shares.flatMap((share) => (share.scope === "repositories" ? share.repositories : []));
    expect(scanned.sort()).toEqual([...repositories].sort());
    for (const share of shares) expect(share.scope).toBe("repositories");

    const small: ScanInstallation = { id: 8, repositories: repositories.slice(0, 10) };
    const smallShares = three.map((member) => shareOf(small, three, member).scope);
    expect(smallShares.filter((scope) => scope === "all")).toHaveLength(1);
    expect(smallShares.filter((scope) => scope === "none")).toHaveLength(2);
  });

  it("gives nothing to a replica that is not among the live members (its own Lease lapsed)", () => {
    expect(installationShard(ids, ["ferry-a", "ferry-b"], "ferry-c")).toEqual([]);
    expect(shareOf({ id: 1 }, [], "ferry-a")).toEqual({ installationId: 1, scope: "none" });
    expect(ownerOf("installation/1", [])).toBeUndefined();
  });
});
