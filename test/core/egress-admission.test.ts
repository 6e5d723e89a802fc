import { describe, expect, it } from "vitest";
import {
  admittedProtocols,
  referenceHost,
  requestRefusal,
  tunnelRefusal,
} from "../../src/core/egress-admission.js";

describe("egress admission by --allow-remote-base prefix", () => {
  const prefixes = ["https://github.com/acme/", "http://charts.example.com:8080/stable"];

  it("admits a URL only under a prefix's scheme, host, port and path", () => {
    expect(requestRefusal("https://github.com/acme/bases/info/refs", prefixes)).toBeUndefined();
    expect(requestRefusal("http://charts.example.com:8080/stable/index.yaml", prefixes)).toBeUndefined();
    for (const refused of [
      "https://github.com/evil/bases",
      "http://github.com/acme/bases",
      "https://github.com:444/acme/x",
      "https://github.com@evil.example/acme/x",
      "https://github.com.evil.example/acme/x",
      "http://charts.example.com/stable/index.yaml",
      "http://127.0.0.1:8080/x.yaml",
      "ftp://github.com/acme/x",
    ])
      expect(requestRefusal(refused, prefixes), refused).toMatch(/not under|not HTTP/);
  });

  it("admits nothing with no prefix, an empty one, or one that is not HTTP", () => {
    for (const none of [[], [""], ["ssh://git@github.com/acme/"], ["git@github.com:acme/"]]) {
      expect(requestRefusal("https://github.com/acme/x", none)).toBeDefined();
      expect(tunnelRefusal("github.com", 443, none)).toBeDefined();
      expect(admittedProtocols(none)).toEqual([]);
    }
  });

  it("admits a tunnel only to the host and port of an https prefix", () => {
    expect(tunnelRefusal("github.com", 443, prefixes)).toBeUndefined();
    expect(tunnelRefusal("GitHub.com", 443, ["github.com/acme/"])).toBeUndefined();
    expect(tunnelRefusal("github.com", 22, prefixes)).toMatch(/not the host/);
    expect(tunnelRefusal("charts.example.com", 8080, prefixes)).toMatch(/not the host/);
    expect(tunnelRefusal("127.0.0.1", 443, prefixes)).toMatch(/not the host/);
    expect(admittedProtocols(prefixes)).toEqual(["https", "http"]);
  });

  it("reads the host of every remote reference form", () => {
    expect(referenceHost("https://127.0.0.1:8080/x.yaml")).toBe("127.0.0.1");
    expect(referenceHost("git::http://[::1]:9/x")).toBe("[::1]");
    expect(referenceHost("localhost:8080/acme/bases")).toBe("localhost");
    expect(referenceHost("git@10.0.0.1:acme/bases.git")).toBe("10.0.0.1");
    expect(referenceHost("github.com/acme/bases//x?ref=v1")).toBe("github.com");
  });
});
