import { describePruneGuardContract } from "../../cluster/contract/prune-guard-suite.js";
import { simulatorBackend } from "../../cluster/contract/simulator-backend.js";

describePruneGuardContract("the cluster simulator", simulatorBackend);
