/**
 * Holds and floors on the state ref, at the port: compare-and-swap updates that survive a rival
 * replica, migration from the dashboard issue's block, and a dashboard that ends up showing the
 * latest state even when the state changes while it is written.
 */
import { describe, expect, it } from "vitest";
import type { AppDeps, LoadedConfig } from "../../src/app/app-deps.js";
import { loadRepoConfig } from "../../src/app/load-repo-config.js";
import { writeDashboard } from "../../src/app/dashboard-issue.js";
import { loadState, STATE_WRITE_ATTEMPTS } from "../../src/app/state-ref.js";
import { updateState } from "../../src/app/update-state.js";
import { TransientError } from "../../src/core/errors.js";
import { DASHBOARD_TITLE, formatDashboard, parseNotices, parseState } from "../../src/core/pr/dashboard.js";
import { emptyState, parseStateFile, type FerryState } from "../../src/core/state/ferry-state.js";
import { configRepo, FakeGitHub, FakeRegistry, fakeDeps } from "../support/app-fakes.js";

/** One replica: its own deps (and so its own in-process lock) over the shared GitHub. */
function replica(github: FakeGitHub): AppDeps {
  return fakeDeps(github, new FakeRegistry());
}

async function loaded(deps: AppDeps): Promise<LoadedConfig> {
  const result = await loadRepoConfig(deps);
  if (!result.ok) throw new Error("config did not load");
  return result;
}

function hold(by: string): (state: FerryState) => void {
  return (state) => {
    state.holds[by === "mona" ? "staging" : "prod"] = { by, at: "2026-01-01T00:00:00.000Z", reason: "hold" };
  };
}

function dashboardOf(github: FakeGitHub): FerryState {
  return parseState(github.issues.find((issue) => issue.title === DASHBOARD_TITLE)?.body);
}

describe("updateState across replicas", () => {
  it("keeps both holds when a second replica writes between the first one's read and its compare-and-swap", async () => {
    const github = new FakeGitHub(configRepo());
    const first = replica(github);
    const second = replica(github);
    const config = await loaded(first);
    let rivalRan = false;
    github.beforeStateWrite = async () => {
      if (rivalRan) return;
      rivalRan = true;
      await updateState(second, config, hold("hubot"));
    };
    await updateState(first, config, hold("mona"));
    const stored = parseStateFile(github.stateFile());
    expect(Object.keys(stored.holds).sort()).toEqual(["prod", "staging"]);
    expect(stored.holds.staging?.by).toBe("mona");
    expect(stored.holds.prod?.by).toBe("hubot");
    // The first replica's first write lost the race: it re-read and wrote again.
    expect(github.calls.filter((call) => call === "writeStateCommit")).toHaveLength(3);
  });

  it("keeps both when two replicas create the state ref at once (the second creation conflicts)", async () => {
    const github = new FakeGitHub(configRepo());
    const config = await loaded(replica(github));
    let rivalRan = false;
    github.beforeStateWrite = async () => {
      if (rivalRan) return;
      rivalRan = true;
      await updateState(replica(github), config, hold("hubot"));
    };
    await updateState(replica(github), config, hold("mona"));
    expect(Object.keys(parseStateFile(github.stateFile()).holds).sort()).toEqual(["prod", "staging"]);
  });

  it("gives up with a TransientError after a bounded number of lost races", async () => {
    const github = new FakeGitHub(configRepo());
    const deps = replica(github);
    const config = await loaded(deps);
    await updateState(deps, config, () => {});
    let rivals = 0;
    github.beforeStateWrite = async () => {
      rivals++;
      github.beforeStateWrite = undefined;
      await updateState(replica(github), config, (state) => {
        (state.floors.staging ??= {}).shop = `1.${rivals}.0`;
      });
      github.beforeStateWrite = rival;
    };
    const rival = github.beforeStateWrite;
    await expect(updateState(deps, config, hold("mona"))).rejects.toBeInstanceOf(TransientError);
    expect(rivals).toBe(STATE_WRITE_ATTEMPTS);
    expect(parseStateFile(github.stateFile()).holds).toEqual({});
  });

  it("writes no commit when the change leaves the state as it was (a redelivered /hold)", async () => {
    const github = new FakeGitHub(configRepo());
    const deps = replica(github);
    const config = await loaded(deps);
    await updateState(deps, config, hold("mona"));
    const head = await github.stateHead();
    github.calls.length = 0;
    await updateState(deps, config, (state) => {
      state.holds.staging ??= { by: "hubot", at: "2026-02-01T00:00:00.000Z", reason: "hold" };
    });
    expect(github.calls).not.toContain("writeStateCommit");
    expect(await github.stateHead()).toBe(head);
  });
});

describe("loadState", () => {
  it("reads the state ref in one request once it exists", async () => {
    const github = new FakeGitHub(configRepo());
    const deps = replica(github);
    await updateState(deps, await loaded(deps), hold("mona"));
    github.calls.length = 0;
    const { state } = await loadState(deps);
    expect(Object.keys(state.holds)).toEqual(["staging"]);
    expect(github.calls).toEqual(["readFile"]);
  });

  it("starts from the dashboard issue's block when the state ref does not exist yet, and carries it over", async () => {
    const github = new FakeGitHub(configRepo());
    const before: FerryState = {
      version: 1,
      holds: { prod: { by: "mona", at: "2025-12-01T00:00:00.000Z", reason: "rollback" } },
      floors: { prod: { shop: "1.6.0" } },
      history: {},
    };
    const emptyStatus = { environments: [], images: [], running: {}, pulls: {}, holds: before.holds };
    await github.createIssue({
      title: DASHBOARD_TITLE,
      body: formatDashboard(emptyStatus, before, new Date(0)),
    });
    const deps = replica(github);
    expect((await loadState(deps)).state).toEqual(before);
    await updateState(deps, await loaded(deps), hold("mona"));
    const stored = parseStateFile(github.stateFile());
    expect(stored.holds.prod).toEqual(before.holds.prod);
    expect(stored.holds.staging?.by).toBe("mona");
    expect(stored.floors).toEqual(before.floors);
  });

  it("no longer takes the dashboard's block as the state once the ref exists (a hand edit there lifts nothing)", async () => {
    const github = new FakeGitHub(configRepo());
    const deps = replica(github);
    await updateState(deps, await loaded(deps), hold("mona"));
    const dashboard = github.issues.find((issue) => issue.title === DASHBOARD_TITLE)!;
    dashboard.body = dashboard.body.replace(/<!-- ferry:state[\s\S]*$/, "");
    expect(Object.keys((await loadState(deps)).state.holds)).toEqual(["staging"]);
  });
});

describe("the dashboard", () => {
  it("mirrors the state after an update", async () => {
    const github = new FakeGitHub(configRepo());
    const deps = replica(github);
    await updateState(deps, await loaded(deps), hold("mona"));
    expect(dashboardOf(github)).toEqual(parseStateFile(github.stateFile()));
  });

  it("is rendered again when another replica changed the state while it was being written", async () => {
    /** A GitHub where a rival replica holds prod (state and dashboard) just before our dashboard write lands. */
    class RacingGitHub extends FakeGitHub {
      rival?: () => Promise<void>;
      override async updateIssue(number: number, input: { body?: string; state?: "open" | "closed" }) {
        const rival = this.rival;
        this.rival = undefined;
        if (rival) await rival();
        return super.updateIssue(number, input);
      }
    }
    const github = new RacingGitHub(configRepo());
    const deps = replica(github);
    const config = await loaded(deps);
    await writeDashboard(deps, config, emptyState());
    const stale = (await loadState(deps)).state;
    await updateState(deps, config, hold("mona"));
    github.rival = () => updateState(replica(github), config, hold("hubot")).then(() => undefined);
    // A scan that read the state before the rival's hold writes the dashboard from it.
    await writeDashboard(deps, config, stale);
    expect(Object.keys(dashboardOf(github).holds).sort()).toEqual(["prod", "staging"]);
  });
});

describe("the dashboard's notices", () => {
  const notice = { environment: "staging", image: "shop", message: "runs 9.9.9, outside its policy" };
  const noticesOf = (github: FakeGitHub) =>
    parseNotices(github.issues.find((issue) => issue.title === DASHBOARD_TITLE)?.body);

  it("survive a later write that read the issue before the scan wrote them (docs/reliability.md row 78)", async () => {
    const github = new FakeGitHub(configRepo());
    const deps = replica(github);
    const config = await loaded(deps);
    await writeDashboard(deps, config, emptyState());
    // A merge's refresh read the issue here, before the scan wrote its notices.
    const readBefore = structuredClone(github.issues.find((issue) => issue.title === DASHBOARD_TITLE)!);
    await writeDashboard(deps, config, undefined, { notices: [notice] });
    expect(noticesOf(github)).toEqual([notice]);
    await updateState(deps, config, hold("mona"));
    await writeDashboard(deps, config, undefined, { dashboard: readBefore });
    expect(noticesOf(github)).toEqual([notice]);
    expect(Object.keys(dashboardOf(github).holds)).toEqual(["staging"]);
  });

  it("survive a refresh that was already reading when the scan began", async () => {
    /** A GitHub that starts the scan's write while the refresh is between its read and its write. */
    class InterleavingGitHub extends FakeGitHub {
      between?: () => Promise<void>;
      override async findIssue(title: string) {
        const found = await super.findIssue(title);
        const between = this.between;
        this.between = undefined;
        await between?.();
        return found;
      }
    }
    /** Many turns of the event loop: far more than the in-memory scan needs when nothing holds it. */
    const turns = async (count: number) => {
      for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setImmediate(resolve));
    };
    const github = new InterleavingGitHub(configRepo());
    const deps = replica(github);
    const config = await loaded(deps);
    await writeDashboard(deps, config, emptyState());
    let scan: Promise<void> | undefined;
    // The scan runs to its end meanwhile unless something makes it wait for the refresh.
    github.between = async () => {
      scan = writeDashboard(deps, config, undefined, { notices: [notice] });
      await Promise.race([scan, turns(500)]);
    };
    await updateState(deps, config, hold("mona"));
    await scan;
    expect(scan).toBeDefined();
    expect(noticesOf(github)).toEqual([notice]);
    expect(Object.keys(dashboardOf(github).holds)).toEqual(["staging"]);
  });

  it("are replaced by the next scan's notices, an empty list included", async () => {
    const github = new FakeGitHub(configRepo());
    const deps = replica(github);
    const config = await loaded(deps);
    await writeDashboard(deps, config, emptyState(), { notices: [notice] });
    await writeDashboard(deps, config, undefined, { notices: [] });
    await writeDashboard(deps, config, undefined, {});
    expect(noticesOf(github)).toEqual([]);
  });
});

describe("dashboard creation raced by another replica", () => {
  it("closes its own younger duplicate and writes the oldest open dashboard instead", async () => {
    const github = new FakeGitHub(configRepo());
    const deps = replica(github);
    // Another replica created the dashboard after this one looked and found none.
    const rival = await github.createIssue({ title: DASHBOARD_TITLE, body: "rival's dashboard" });
    await writeDashboard(deps, await loaded(deps), emptyState(), { dashboard: null });
    const dashboards = github.issues.filter((issue) => issue.title === DASHBOARD_TITLE);
    expect(dashboards.map((issue) => [issue.number, issue.state])).toEqual([
      [rival, "open"],
      [rival + 1, "closed"],
    ]);
    // The survivor now carries the rendered dashboard, not the rival's placeholder text.
    expect(dashboards[0]!.body).toContain("Ferry");
    expect(dashboards[0]!.body).not.toBe("rival's dashboard");
  });
});
