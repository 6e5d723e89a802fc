import { vi } from "vitest";
import { describeInventoryContract } from "../../cluster/contract/inventory-suite.js";
import { simulatorBackend } from "../../cluster/contract/simulator-backend.js";

// Real git, kubectl and HTTP servers on a shared, busy machine; one case converges 1,000 objects.
vi.setConfig({ testTimeout: 300_000 });

describeInventoryContract("the cluster simulator", simulatorBackend);
