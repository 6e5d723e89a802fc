import { describe, expect, it } from "vitest";
import { boundReply, MAX_REPLY_CHARS, MAX_REPLY_MENTIONS } from "../../../src/core/pr/reply-bounds.js";

describe("boundReply", () => {
  it("keeps a short reply as it is", () => {
    expect(boundReply("@mona prod runs shop 1.8.0.")).toBe("@mona prod runs shop 1.8.0.");
  });

  it("keeps the first mentions and takes the @ from the rest, teams included, leaving e-mail addresses and code alone", () => {
    const text =
      Array.from({ length: 15 }, (_, i) => `by @user${i}`).join("\n") + "\nmail a@b.c, `@x`, @acme/ops";
    const bounded = boundReply(text);
    expect(bounded.match(/(?<![\w`@])@/g)).toHaveLength(MAX_REPLY_MENTIONS);
    expect(bounded).toContain("by @user9\nby user10");
    expect(bounded).toContain("mail a@b.c, `@x`, acme/ops");
  });

  it("cuts a long reply at a line boundary with a note, closing an open fence", () => {
    const text = "```\n" + "a line of history\n".repeat(5_000);
    const bounded = boundReply(text);
    expect(bounded.length).toBeLessThanOrEqual(MAX_REPLY_CHARS);
    expect(bounded).toMatch(
      /a line of history\n```\n\n… \(the rest of this reply was cut: at most 16,000 characters per reply\)$/,
    );
  });
});
