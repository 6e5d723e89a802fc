import { describeConnectionContract } from "../../cluster/contract/connections-suite.js";
import { simulatorBackend } from "../../cluster/contract/simulator-backend.js";

describeConnectionContract("the cluster simulator", simulatorBackend);
