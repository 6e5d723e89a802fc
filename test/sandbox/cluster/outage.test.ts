import { vi } from "vitest";
import { describeOutageContract } from "../../cluster/contract/outage-suite.js";
import { simulatorBackend } from "../../cluster/contract/simulator-backend.js";

// Real git, kubectl and HTTP servers on a shared, busy machine: allow for slow runs.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

describeOutageContract("the cluster simulator", simulatorBackend);
