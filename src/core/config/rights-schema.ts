import * as z from "zod";

/**
 * An image entry's `promoters`: who may change this image in any environment, on top of the
 * environment's own `promoters` rule (docs/config.md "Who may promote what"). Bounded lists: every
 * entry may cost a team-membership request at command time.
 */

/** At most this many teams, and this many users, in one image's `promoters`. */
export const MAX_IMAGE_PROMOTERS = 20;

/** `org/team-slug`, as GitHub spells a team (the org's login, then the team's slug). */
export const TEAM_SLUG = /^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/;
/** A GitHub login: letters, digits and single hyphens, at most 39 characters. */
export const USER_LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;

export const imagePromotersSchema = z
  .strictObject({
    teams: z
      .array(z.string().regex(TEAM_SLUG, "team must be org/team-slug"))
      .max(MAX_IMAGE_PROMOTERS, `at most ${MAX_IMAGE_PROMOTERS} teams`)
      .default([])
      .describe("Teams whose members may change this image."),
    users: z
      .array(z.string().regex(USER_LOGIN, "user must be a GitHub login, without @"))
      .max(MAX_IMAGE_PROMOTERS, `at most ${MAX_IMAGE_PROMOTERS} users`)
      .default([])
      .describe("GitHub logins who may change this image."),
    codeowners: z
      .boolean()
      .default(false)
      .describe(
        "The owners (per CODEOWNERS on the default branch) of the environment's files that reference this image may change it.",
      ),
  })
  .refine((rule) => rule.teams.length > 0 || rule.users.length > 0 || rule.codeowners, {
    message: "promoters needs teams, users or codeowners: true",
  })
  .describe(
    "Who may /promote, /rollback, /hold or /unfloor this image, besides repository admins; the environment's promoters rule applies too.",
  );

export type ImagePromoters = z.infer<typeof imagePromotersSchema>;

export const imageReviewersSchema = z
  .strictObject({
    users: z
      .array(z.string().regex(USER_LOGIN, "user must be a GitHub login, without @"))
      .max(MAX_IMAGE_PROMOTERS, `at most ${MAX_IMAGE_PROMOTERS} users`)
      .default([]),
    teams: z
      .array(z.string().regex(TEAM_SLUG, "team must be org/team-slug"))
      .max(MAX_IMAGE_PROMOTERS, `at most ${MAX_IMAGE_PROMOTERS} teams`)
      .default([]),
  })
  .describe("Reviewers requested, besides the environment's, on a merge: review PR that changes this image.");
