import * as z from "zod";
import { NAME_PATTERN } from "./names.js";

/**
 * PR grouping (docs/config.md "Grouping"): an image entry's `group` and an environment's
 * `grouping`. A promotion unit is (environment, group): each unit has its own PR, branch, labels
 * and hold, so one unit's failure never blocks another's.
 */
export const imageGroupField = z
  .string()
  .regex(NAME_PATTERN, "group names are lowercase letters, digits, - and _")
  .optional()
  .describe(
    "A named group: in every environment, the images of one group share one PR (branch ferry-group/<env>/<group>), apart from the others.",
  );

export const GROUPINGS = ["environment", "image"] as const;
export type Grouping = (typeof GROUPINGS)[number];

export const environmentGroupingField = z
  .enum(GROUPINGS)
  .optional()
  .describe(
    "The PR of an image without a group: environment: one PR for them all on ferry/<env> (default); image: one PR per image on ferry-image/<env>/<image>.",
  );
