import { describeOutageContract } from "../../cluster/contract/outage-suite.js";
import { simulatorBackend } from "../../cluster/contract/simulator-backend.js";

describeOutageContract("the cluster simulator", simulatorBackend);
