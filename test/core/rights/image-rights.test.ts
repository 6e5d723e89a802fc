import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/core/config/load-config.js";
import type { FerryConfig } from "../../../src/core/config/schema.js";
import { imageRule, refusalText, unmetRules, type Actor } from "../../../src/core/rights/image-rights.js";
import { rightsChanges, rightsTable } from "../../../src/core/rights/rights-diff.js";

function config(images: string): FerryConfig {
  const loaded = loadConfig(
    `images:\n${images}environments:\n  prod:\n    paths: [prod]\n    promoters: { permission: write }\n`,
  );
  if (!loaded.ok) throw new Error(loaded.problems.map((problem) => problem.message).join("; "));
  return loaded.config;
}

const TWO_TEAMS = `  cart:
    repository: ghcr.io/acme/cart
    promoters: { teams: [acme/team-a] }
  pay:
    repository: ghcr.io/acme/pay
    promoters: { teams: [acme/team-b], users: [mona] }
  docs:
    repository: ghcr.io/acme/docs
`;

const actor = (login: string, teams: string[], admin = false): Actor & { asked: string[] } => {
  const asked: string[] = [];
  return {
    login,
    admin,
    asked,
    isMember: async (team) => {
      asked.push(team);
      return teams.includes(team);
    },
  };
};

describe("image promoters", () => {
  it("admits a member of the image's team and refuses one of another team's, naming who may", async () => {
    const c = config(TWO_TEAMS);
    const rules = ["cart", "pay"].map((image) => imageRule(c, image)!);
    const alice = actor("alice", ["acme/team-a"]);
    const unmet = await unmetRules(rules, alice);
    expect(unmet.map((rule) => rule.image)).toEqual(["pay"]);
    expect(refusalText("promote", "prod", unmet)).toBe(
      "you may not promote pay in prod: only members of @acme/team-b, @mona or a repository admin may",
    );
  });

  it("leaves an image without promoters to the environment's rule alone", () => {
    expect(imageRule(config(TWO_TEAMS), "docs")).toBeUndefined();
  });

  it("admits a listed user whatever the case, and an admin without asking GitHub", async () => {
    const c = config(TWO_TEAMS);
    expect(await unmetRules([imageRule(c, "pay")!], actor("Mona", []))).toEqual([]);
    const admin = actor("root", [], true);
    expect(await unmetRules([imageRule(c, "cart")!, imageRule(c, "pay")!], admin)).toEqual([]);
    expect(admin.asked).toEqual([]);
  });

  it("needs every image of the command, and asks about each team once", async () => {
    const c = config(
      `${TWO_TEAMS}  cart2:\n    repository: ghcr.io/acme/cart2\n    promoters: { teams: [acme/team-a] }\n`,
    );
    const bob = actor("bob", []);
    const unmet = await unmetRules(
      ["cart", "cart2", "pay"].map((image) => imageRule(c, image)!),
      bob,
    );
    expect(unmet.map((rule) => rule.image)).toEqual(["cart", "cart2", "pay"]);
    expect(bob.asked.sort()).toEqual(["acme/team-a", "acme/team-b"]);
    expect(refusalText("hold", "prod", unmet)).toMatch(
      /^you may not hold these images in prod \(cart: only members of @acme\/team-a/,
    );
  });

  it("with codeowners: true, admits the owners of the image's files, and says when there are none", async () => {
    const c = config("  cart:\n    repository: ghcr.io/acme/cart\n    promoters: { codeowners: true }\n");
    const owned = imageRule(c, "cart", {
      users: [],
      teams: ["acme/cart-owners"],
      path: ".github/CODEOWNERS",
    })!;
    expect(await unmetRules([owned], actor("carol", ["acme/cart-owners"]))).toEqual([]);
    const none = imageRule(c, "cart", { users: [], teams: [], path: ".github/CODEOWNERS" })!;
    expect(refusalText("promote", "prod", [none])).toBe(
      "you may not promote cart in prod: only a repository admin (.github/CODEOWNERS names no owner of its files) may",
    );
    expect(refusalText("promote", "prod", [imageRule(c, "cart")!])).toContain(
      "no CODEOWNERS file on the default branch",
    );
  });

  it("refuses an empty rule and a malformed team or login in the config", () => {
    for (const rule of ["{}", "{ teams: [team-a] }", "{ users: ['@mona'] }", "{ codeowners: false }"]) {
      const loaded = loadConfig(
        `images:\n  cart:\n    repository: ghcr.io/acme/cart\n    promoters: ${rule}\nenvironments:\n  prod:\n    paths: [prod]\n`,
      );
      expect(loaded.ok, rule).toBe(false);
    }
  });
});

describe("what a config change does to who may promote", () => {
  it("lists a team granting itself rights over another team's app, and an environment's floor lowered", () => {
    const base = config(TWO_TEAMS);
    const head = config(TWO_TEAMS.replace("teams: [acme/team-b]", "teams: [acme/team-b, acme/team-a]"));
    head.environments.prod!.promoters = { permission: "triage", teams: [] };
    const changes = rightsChanges(
      rightsTable(base, () => undefined),
      rightsTable(head, () => undefined),
    );
    expect(changes).toEqual([
      "prod: least permission write → triage",
      "prod / pay: members of @acme/team-a may now promote",
    ]);
  });

  it("lists a rule added or dropped, and owners CODEOWNERS moves", () => {
    const base = config(TWO_TEAMS);
    const head = config(TWO_TEAMS.replace("    promoters: { teams: [acme/team-a] }\n", ""));
    expect(
      rightsChanges(
        rightsTable(base, () => undefined),
        rightsTable(head, () => undefined),
      ),
    ).toEqual([
      "prod / cart: now anyone prod admits (was only members of @acme/team-a or a repository admin)",
    ]);
    const owned = config("  cart:\n    repository: ghcr.io/acme/cart\n    promoters: { codeowners: true }\n");
    const before = rightsTable(owned, () => ({ users: ["mona"], teams: [], path: "CODEOWNERS" }));
    const after = rightsTable(owned, () => ({ users: [], teams: ["acme/team-a"], path: "CODEOWNERS" }));
    expect(rightsChanges(before, after)).toEqual([
      "prod / cart: members of @acme/team-a may now promote",
      "prod / cart: @mona may no longer promote",
    ]);
  });

  it("says nothing when nothing changes", () => {
    const c = config(TWO_TEAMS);
    expect(
      rightsChanges(
        rightsTable(c, () => undefined),
        rightsTable(c, () => undefined),
      ),
    ).toEqual([]);
  });
});
