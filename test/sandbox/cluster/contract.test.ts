import { vi } from "vitest";
import { describeWavesContract } from "../../cluster/contract/waves-suite.js";
import { describeHealthContract } from "../../cluster/contract/health-suite.js";
import { describeSourceDownContract } from "../../cluster/contract/source-down-suite.js";
import { describeClusterContract } from "../../cluster/contract/suite.js";
import { simulatorBackend } from "../../cluster/contract/simulator-backend.js";

// Real git, kubectl and HTTP servers on a shared, busy machine: allow for slow runs.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

describeClusterContract("the cluster simulator", simulatorBackend, { authorization: false });

describeHealthContract("the cluster simulator", simulatorBackend);
describeSourceDownContract("the cluster simulator", simulatorBackend);
describeWavesContract("the cluster simulator", simulatorBackend);
