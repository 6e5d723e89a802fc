import { defineConfig } from "vitest/config";
import { SlowestFilesFirst } from "./test/support/slowest-files-first.js";

/**
 * `npm test`: every test under test/ except the real-API-server tier (test/cluster/, its own
 * config and `npm run test:cluster`). Tiers: docs/testing.md.
 */
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/cluster/**", "test/fixtures/**", "node_modules/**", "dist/**"],
    // Stops at once, naming each missing tool (git, docker-registry, kubectl or kustomize, helm, ...).
    globalSetup: ["test/support/prerequisites.ts"],
    // A backstop for a hang, never the clock a test fails by: a wait for an effect keeps its own
    // deadline, and no file lowers these (docs/testing.md "Timeouts").
    testTimeout: 240_000,
    hookTimeout: 240_000,
    // Separate processes: tests start servers and child processes and set process-wide state
    // (the reliability ledger keys its file on the vitest parent process).
    pool: "forks",
    poolOptions: { forks: { isolate: true } },
    // Four files at once even on two cores: most of a file's time is spent waiting on git, servers
    // and child processes, not on the CPU (docs/testing.md "Test suite timing").
    maxWorkers: 4,
    minWorkers: 1,
    // Files that take far longer than their size says start first, so a clean clone's run does
    // not end on one of them alone (test/support/slowest-files-first.ts).
    sequence: { sequencer: SlowestFilesFirst },
    // A failure is a finding: never retried.
    retry: 0,
  },
});
