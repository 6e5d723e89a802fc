import { describe, expect, it } from "vitest";
import { REDACTED, SecretRedactor } from "../../src/core/redact.js";

describe("SecretRedactor", () => {
  const secret = "ghs_1EtVprQpXZjWSJ+oFS/sWdyp nnCyGAbs";
  const redactor = new SecretRedactor();
  redactor.add(secret);

  it("redacts a secret as is, URL-encoded and JSON-escaped", () => {
    for (const form of [secret, encodeURIComponent(secret), JSON.stringify(secret)])
      expect(redactor.redact(`before ${form} after`)).not.toContain(secret.slice(4, 20));
    expect(redactor.redact(`a ${encodeURIComponent(secret)} b`)).toBe(`a ${REDACTED} b`);
  });

  it("redacts the base64 and base64url of any text that contains the secret, whatever precedes it", () => {
    for (const prefix of ["", "x", "xy", "x-access-token:", "ferry:"]) {
      for (const suffix of ["", "\n", "ab"]) {
        const encoded = Buffer.from(`${prefix}${secret}${suffix}`).toString("base64");
        const basic = redactor.redact(`Authorization: Basic ${encoded}`);
        expect(basic).toContain(REDACTED);
        // What is left can no longer be decoded into the secret.
        expect(Buffer.from(basic.replace(/^Authorization: Basic /, ""), "base64").toString()).not.toContain(
          secret.slice(6, 14),
        );
        const url = redactor.redact(Buffer.from(`${prefix}${secret}${suffix}`).toString("base64url"));
        expect(url).toContain(REDACTED);
      }
    }
  });

  it("leaves other text alone and ignores values too short to be credentials", () => {
    const short = new SecretRedactor();
    short.add("abc");
    expect(short.redact("abc def")).toBe("abc def");
    expect(redactor.redact("HTTP 403 (DENIED)")).toBe("HTTP 403 (DENIED)");
  });

  it("redacts each line of a PEM key and the strings inside a nested value", () => {
    const pem = "-----BEGIN KEY-----\nMIIEowIBAAKCAQEAtoken0123456789abcdef\n-----END KEY-----";
    const keys = new SecretRedactor();
    keys.add(pem);
    expect(keys.redact("line MIIEowIBAAKCAQEAtoken0123456789abcdef")).toBe(`line ${REDACTED}`);
    expect(redactor.redactDeep({ a: [`x ${secret}`], b: 1 })).toEqual({ a: [`x ${REDACTED}`], b: 1 });
  });
});
