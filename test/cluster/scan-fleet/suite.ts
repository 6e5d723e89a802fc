/**
 * `ferry serve` replicas sharing the periodic scan through Leases: three child processes, 300
 * installations in the GitHub emulator, each replica's GitHub traffic recorded on its own proxy
 * and its API-server traffic through its own TCP proxy. One suite for both Kubernetes backends:
 * kube-apiserver (`test/cluster/scan-fleet.test.ts`, where the replicas authenticate as the
 * `ferry` ServiceAccount bound by `deploy/app/role.yaml`) and the simulator
 * (`test/sandbox/cluster/scan-fleet.test.ts`).
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCAN_CONCURRENCY } from "../../../src/probot-app/sharded-scan.js";
import { startScanFleet, waitUntil, type ObservedRound, type ScanFleet } from "../../support/scan-fleet.js";

export interface FleetBackend {
  /** The API server's URL (the replicas reach it through their own TCP proxies). */
  apiServerUrl: string;
  /** Creates the namespace (and on a real server the ServiceAccount bound by the shipped Role). */
  prepare(namespace: string): Promise<{ kubeconfigFor(serverUrl: string): string }>;
  cleanup(namespace: string): Promise<void>;
}

export function describeScanFleet(
  name: string,
  backendFor: () => Promise<FleetBackend>,
  options: { leaseMs?: number; installations?: number } = {},
): void {
  const INSTALLATIONS = options.installations ?? 300;
  // A 10 s Lease renewed every 3.3 s, and a 4 s scan interval: at load average ~19 on 2 cores,
  // 3 s Leases and 2 s intervals had the members flapping in every measurement window (renewals and
  // listings delayed past the Lease; rounds of 100 token mints back to back).
  const LEASE_MS = options.leaseMs ?? 10_000;
  const INTERVAL_MS = 4_000;
  /** The scan's ±20 % jitter: the longest one interval can be. */
  const LONGEST_INTERVAL_MS = INTERVAL_MS * 1.2;
  const RENEW_MS = Math.floor(LEASE_MS / 3);

  const STATUS_TOKEN = randomBytes(16).toString("hex");
  const namespace = `ferry-fleet-${randomBytes(3).toString("hex")}`;
  let backend: FleetBackend;
  let fleet: ScanFleet;
  /** The longest scan round seen so far (the bound of a takeover includes the round that does it). */
  let longestRoundMs = 0;
  /** Measurement windows passed over because a replica saw the member list change (printed at the end). */
  let unsteadyWindows = 0;

  /** The first `count` complete rounds of `name` that started after `after`. */
  function completeRounds(name: string, after: number, count: number): ObservedRound[] | undefined {
    const rounds = fleet.rounds(name).filter((r) => r.startedAt > after && r.endedAt !== undefined);
    return rounds.length >= count ? rounds.slice(0, count) : undefined;
  }

  async function allReport(names: string[], members: number): Promise<boolean> {
    const values = await Promise.all(names.map((name) => fleet.metric(name, "ferry_scan_members")));
    return values.every((value) => value === members);
  }

  /** Each replica's count of scan rounds that saw the member list change (its own scan records). */
  async function viewChanges(names: string[]): Promise<(number | undefined)[]> {
    return Promise.all(names.map((name) => fleet.metric(name, "ferry_scan_view_changes")));
  }

  /**
   * `count` complete rounds per replica, all made while every replica saw the same members (the
   * invariant is about a steady fleet; a change of members moves shares by design). Steadiness is
   * judged by the replicas' own scan records, not by a clock: no replica recorded a round whose
   * member list changed, at its start or during it, between the first reading and the last. A
   * window that saw a change is counted and printed, and the next one is measured.
   */
  async function steadyRounds(names: string[], count: number): Promise<Map<string, ObservedRound[]>> {
    for (let window = 0; ; window++) {
      await waitUntil(() => allReport(names, names.length), 300_000, `${names.join(", ")} to see each other`);
      const changesBefore = await viewChanges(names);
      const after = Date.now();
      // One warm-up round each first: a round that began before the member list settled may still
      // be running on the old list.
      await waitUntil(
        () => names.every((name) => completeRounds(name, after, count + 1) !== undefined),
        300_000,
        `${count + 1} complete scan rounds of ${names.join(", ")}`,
      );
      const changesAfter = await viewChanges(names);
      const steady =
        changesBefore.every((value) => value !== undefined) &&
        changesAfter.every((value, i) => value === changesBefore[i]) &&
        (await allReport(names, names.length));
      if (!steady) {
        unsteadyWindows++;
        console.log(
          `window ${window}: the member list changed during the rounds (view changes ${changesBefore.join("/")} → ${changesAfter.join("/")}); measuring the next window`,
        );
        if (window >= 4)
          throw new Error(
            `the fleet ${names.join(", ")} did not hold its members for ${count + 1} rounds in 5 windows`,
          );
        continue;
      }
      const result = new Map<string, ObservedRound[]>();
      for (const name of names) {
        const rounds = completeRounds(name, after, count + 1)!.slice(1);
        for (const round of rounds)
          longestRoundMs = Math.max(longestRoundMs, round.endedAt! - round.startedAt);
        result.set(name, rounds);
      }
      return result;
    }
  }

  /** Duplicates (an installation read twice in one round, or by two replicas) and gaps (never read in a round). */
  function coverage(roundsByReplica: Map<string, ObservedRound[]>) {
    const owners = new Map<number, Set<string>>();
    let duplicates = 0;
    let gaps = 0;
    const shards = new Map<string, Set<number>>();
    for (const [name, rounds] of roundsByReplica) {
      // The replica's shard: everything it read in these rounds; each round must read all of it.
      const shard = new Set(rounds.flatMap((round) => round.installations));
      shards.set(name, shard);
      for (const round of rounds) {
        const seen = new Set<number>();
        for (const id of round.installations) {
          if (seen.has(id)) duplicates++;
          seen.add(id);
          owners.set(id, (owners.get(id) ?? new Set()).add(name));
        }
        // A round of this replica that missed part of its shard is a gap for those installations.
        for (const id of shard) if (!seen.has(id)) gaps++;
      }
    }
    for (const set of owners.values()) if (set.size > 1) duplicates++;
    for (const id of fleet.installationIds) if (!owners.has(id)) gaps++;
    return { duplicates, gaps, shards };
  }

  beforeAll(async () => {
    backend = await backendFor();
    const { kubeconfigFor } = await backend.prepare(namespace);
    fleet = await startScanFleet({
      installations: INSTALLATIONS,
      apiServerUrl: backend.apiServerUrl,
      kubeconfigFor,
      namespace,
      scanInterval: `${INTERVAL_MS}ms`,
      leaseDuration: `${LEASE_MS}ms`,
      env: { FERRY_STATUS_TOKEN: STATUS_TOKEN },
    });
    await Promise.all(["ferry-a", "ferry-b", "ferry-c"].map((replica) => fleet.start(replica)));
  });

  afterAll(async () => {
    console.log(`${name}: measurement windows passed over for a change of members: ${unsteadyWindows}`);
    await fleet?.close();
    await backend?.cleanup(namespace);
  });

  describe(`replicas sharing the periodic scan through Leases (${name})`, () => {
    let threeWay: Map<string, Set<number>>;
    let twoWay: Map<string, Set<number>>;

    it(`each of ${INSTALLATIONS} installations is scanned exactly once per interval, by one of 3 replicas, over 3 intervals`, async () => {
      const rounds = await steadyRounds(["ferry-a", "ferry-b", "ferry-c"], 3);
      const { duplicates, gaps, shards } = coverage(rounds);
      console.log(
        `3 replicas × 3 rounds: shards ${[...shards.values()].map((s) => s.size).join("/")}, ` +
          `duplicates ${duplicates}, gaps ${gaps}, longest round ${longestRoundMs} ms`,
      );
      expect({ duplicates, gaps }).toEqual({ duplicates: 0, gaps: 0 });
      expect([...shards.values()].reduce((sum, shard) => sum + shard.size, 0)).toBe(INSTALLATIONS);
      for (const shard of shards.values()) expect(shard.size).toBeGreaterThan(0);
      threeWay = shards;
    });

    it("SIGKILL of one replica: its share is scanned by the others within one lease duration plus one interval", async () => {
      const share = threeWay.get("ferry-c")!;
      const killedAt = Date.now();
      await fleet.kill("ferry-c");
      // One lease duration: the survivors stop counting ferry-c once its Lease has not changed for
      // that long (on their own clocks, at their next renewal).
      const dropped = await waitUntil(
        () => allReport(["ferry-a", "ferry-b"], 2),
        300_000,
        "ferry-a and ferry-b to drop ferry-c",
      );
      const droppedAt = Date.now();
      // Plus one interval, counted in rounds: the first round each survivor completes after it
      // dropped ferry-c covers ferry-c's share between them.
      await waitUntil(
        () => ["ferry-a", "ferry-b"].every((name) => completeRounds(name, droppedAt, 1) !== undefined),
        300_000,
        "one complete round of each survivor after the drop",
      );
      const read = new Set(
        ["ferry-a", "ferry-b"].flatMap((name) => {
          const first = completeRounds(name, droppedAt, 1)![0]!;
          return fleet
            .rounds(name)
            .filter((round) => round.startedAt >= killedAt && round.startedAt <= first.startedAt)
            .flatMap((round) => round.installations);
        }),
      );
      const missing = [...share].filter((id) => !read.has(id));
      const coveredAt = Math.max(
        ...["ferry-a", "ferry-b"].map((name) => completeRounds(name, droppedAt, 1)![0]!.endedAt!),
      );
      console.log(
        `takeover of ${share.size} installations: dropped after ${dropped} ms (lease ${LEASE_MS} ms + renewal ${RENEW_MS} ms), ` +
          `covered ${coveredAt - killedAt} ms after the kill (lease + interval + longest round: ${LEASE_MS + RENEW_MS + LONGEST_INTERVAL_MS + longestRoundMs} ms)`,
      );
      expect(missing).toEqual([]);
      const rounds = await steadyRounds(["ferry-a", "ferry-b"], 2);
      const { duplicates, gaps, shards } = coverage(rounds);
      expect({ duplicates, gaps }).toEqual({ duplicates: 0, gaps: 0 });
      // Nothing the survivors held changed hands.
      for (const name of ["ferry-a", "ferry-b"])
        for (const id of threeWay.get(name)!) expect(shards.get(name)!.has(id)).toBe(true);
      twoWay = shards;
    });

    it("restarting it moves only about 1/N of the installations: exactly its share, back to it", async () => {
      await fleet.start("ferry-c");
      const rounds = await steadyRounds(["ferry-a", "ferry-b", "ferry-c"], 2);
      const { duplicates, gaps, shards } = coverage(rounds);
      expect({ duplicates, gaps }).toEqual({ duplicates: 0, gaps: 0 });
      const ownerIn = (map: Map<string, Set<number>>, id: number) =>
        [...map].find(([, shard]) => shard.has(id))![0];
      const moved = fleet.installationIds.filter((id) => ownerIn(twoWay, id) !== ownerIn(shards, id));
      console.log(`restart: ${moved.length} of ${INSTALLATIONS} installations moved`);
      expect(moved.every((id) => ownerIn(shards, id) === "ferry-c")).toBe(true);
      expect(new Set(moved)).toEqual(shards.get("ferry-c"));
      expect(shards.get("ferry-c")).toEqual(threeWay.get("ferry-c"));
      expect(moved.length).toBeLessThan(INSTALLATIONS / 2);
    });

    it("a replica cut off from the API server stops scanning once its Lease cannot be renewed; the others take its share", async () => {
      const b = fleet.replicas.get("ferry-b")!;
      b.apiServer.block();
      await waitUntil(
        async () => (await fleet.metric("ferry-b", "ferry_scan_members")) === 0,
        300_000,
        "ferry-b to count itself out",
      );
      // The survivors see ferry-b's Lease stop changing and take its share.
      await waitUntil(() => allReport(["ferry-a", "ferry-c"], 2), 300_000, "the others to drop ferry-b");
      const takeover = Date.now();
      const rounds = await steadyRounds(["ferry-a", "ferry-c"], 2);
      const { duplicates, gaps } = coverage(rounds);
      expect({ duplicates, gaps }).toEqual({ duplicates: 0, gaps: 0 });
      // While cut off, ferry-b started no scan round, and sent no more reads than the listings it
      // had already let through its scan's slots when it counted itself out.
      const stale = fleet.readsSince("ferry-b", takeover);
      const staleRounds = fleet.rounds("ferry-b").filter((round) => round.startedAt >= takeover);
      console.log(
        `partition: ferry-b after the takeover: ${staleRounds.length} rounds, ${stale.length} reads (at most ${SCAN_CONCURRENCY} in flight)`,
      );
      expect(staleRounds).toEqual([]);
      expect(stale.length).toBeLessThanOrEqual(SCAN_CONCURRENCY);

      b.apiServer.unblock();
      const healed = await steadyRounds(["ferry-a", "ferry-b", "ferry-c"], 1);
      expect(coverage(healed)).toMatchObject({ duplicates: 0, gaps: 0 });
    });
  });

  describe("what a replica reports about the shared scan", () => {
    it("/metrics and /status show the members, this replica's shard size, the scan lag and budget use", async () => {
      const rounds = await steadyRounds(["ferry-a", "ferry-b", "ferry-c"], 1);
      const shard = new Set(rounds.get("ferry-a")![0]!.installations);
      expect(await fleet.metric("ferry-a", "ferry_scan_members")).toBe(3);
      expect(await fleet.metric("ferry-a", "ferry_scan_shard_installations")).toBe(shard.size);
      const lag = await fleet.metric("ferry-a", "ferry_scan_lag_seconds");
      expect(lag).toBeGreaterThanOrEqual(0);
      const url = fleet.replicas.get("ferry-a")!.url;
      // /status is served only to the bearer token (FERRY_STATUS_TOKEN) on the public listener.
      const status = (await (
        await fetch(`${url}/status`, { headers: { authorization: `Bearer ${STATUS_TOKEN}` } })
      ).json()) as Record<string, any>;
      expect(status["ferry:scan"]).toMatchObject({
        mode: "kubernetes",
        self: "ferry-a",
        members: ["ferry-a", "ferry-b", "ferry-c"],
        shardSize: shard.size,
        registryBudgets: {},
        githubWriteBudgets: {},
      });
      expect(status["ferry:scan"].lagSeconds).toEqual(expect.any(Number));
    });
  });
}
