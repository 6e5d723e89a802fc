import { describeWavesContract } from "../../cluster/contract/waves-suite.js";
import { describeHealthContract } from "../../cluster/contract/health-suite.js";
import { describeSourceDownContract } from "../../cluster/contract/source-down-suite.js";
import { describeClusterContract } from "../../cluster/contract/suite.js";
import { simulatorBackend } from "../../cluster/contract/simulator-backend.js";

describeClusterContract("the cluster simulator", simulatorBackend, { authorization: false });

describeHealthContract("the cluster simulator", simulatorBackend);
describeSourceDownContract("the cluster simulator", simulatorBackend);
describeWavesContract("the cluster simulator", simulatorBackend);
