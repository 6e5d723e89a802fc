import { inject, vi } from "vitest";
import { describeInventoryContract } from "./contract/inventory-suite.js";
import { realBackend } from "./contract/real-backend.js";

// A real API server and etcd on a shared 2-core machine; one case converges 1,000 objects.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 120_000 });

describeInventoryContract("kube-apiserver", async () => realBackend(inject("controlPlane")));
