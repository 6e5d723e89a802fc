import { vi } from "vitest";
import { describeConnectionContract } from "../../cluster/contract/connections-suite.js";
import { simulatorBackend } from "../../cluster/contract/simulator-backend.js";

// Real git and HTTP servers on a shared, busy machine: allow for slow runs.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

describeConnectionContract("the cluster simulator", simulatorBackend);
