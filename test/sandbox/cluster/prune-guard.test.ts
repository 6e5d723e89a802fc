import { vi } from "vitest";
import { describePruneGuardContract } from "../../cluster/contract/prune-guard-suite.js";
import { simulatorBackend } from "../../cluster/contract/simulator-backend.js";

// Real git, kubectl and HTTP servers on a shared, busy machine: allow for slow runs.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

describePruneGuardContract("the cluster simulator", simulatorBackend);
