import { describe, expect, it } from "vitest";
import { classifyHost, parseIPv4, parseIPv6 } from "../../src/core/net-address.js";

describe("classifyHost", () => {
  it("sees the cloud metadata address in every spelling as link-local", () => {
    for (const host of [
      "169.254.169.254",
      "0xa9.0xfe.0xa9.0xfe",
      "0251.0376.0251.0376",
      "2852039166",
      "169.254.43518",
      "[::ffff:169.254.169.254]",
      "::ffff:a9fe:a9fe",
      "::169.254.169.254",
      "64:ff9b::a9fe:a9fe",
      "2002:a9fe:a9fe::1",
      "[fe80::1%25eth0]",
      "fd00:ec2::254",
      "metadata.google.internal.",
    ])
      expect([host, classifyHost(host)]).toEqual([host, "link-local"]);
  });

  it("refuses cloud metadata outside 169.254/16 like link-local, and IPv6 forms that carry it", () => {
    for (const host of [
      "168.63.129.16",
      "0xa83f8110",
      "[::ffff:168.63.129.16]",
      "100.100.100.200",
      "0144.0144.0144.0310",
      "::ffff:0:a9fe:a9fe",
      "[::ffff:0:169.254.169.254]",
      "::ffff:0:6464:64c8",
      "64:ff9b::a83f:8110",
      "64:ff9b:1::a9fe:a9fe",
      "64:ff9b:1:a9fe:a9:fe00::",
      "64:ff9b:1:a9:fe:a9fe::",
      "64:ff9b:1::a9:fea9:fe00:0",
      "2002:a83f:8110::1",
      "2002:6464:64c8::",
      "2001:0:4136:e378:8000:63bf:5601:5601",
    ])
      expect([host, classifyHost(host)]).toEqual([host, "link-local"]);
    // The local-use NAT64 prefix is not global even when what it carries is.
    expect(classifyHost("64:ff9b:1::8c52:7021")).toBe("private");
    expect(classifyHost("::ffff:0:8c52:7021")).toBe("public");
    expect(classifyHost("2001:0:4136:e378:8000:63bf:73ad:8fde")).toBe("public");
  });

  it("sees loopback, the unspecified address and private ranges in every spelling", () => {
    for (const host of [
      "127.1",
      "0x7f.0.0.1",
      "2130706433",
      "0.0.0.0",
      "0",
      "::",
      "::1",
      "[::ffff:127.0.0.1]",
      "localhost",
      "a.localhost",
    ])
      expect([host, classifyHost(host)]).toEqual([host, "loopback"]);
    for (const host of [
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "100.64.0.1",
      "fc00::1",
      "fd12:3456::1",
      "::ffff:10.0.0.1",
      "224.0.0.1",
    ])
      expect([host, classifyHost(host)]).toEqual([host, "private"]);
  });

  it("leaves public addresses public and names for DNS", () => {
    expect(classifyHost("140.82.112.33")).toBe("public");
    expect(classifyHost("2606:4700::1111")).toBe("public");
    expect(classifyHost("ghcr.io")).toBeUndefined();
    expect(classifyHost("1.2.3.4.example.com")).toBeUndefined();
  });

  it("parses only well-formed addresses", () => {
    expect(parseIPv4("256.1.1.1")).toBeUndefined();
    expect(parseIPv4("1.2.3.4.5")).toBeUndefined();
    expect(parseIPv4("4294967296")).toBeUndefined();
    expect(parseIPv6("1::2::3")).toBeUndefined();
    expect(parseIPv6("1:2:3:4:5:6:7:8:9")).toBeUndefined();
    expect(parseIPv6("::ffff:1.2.3.4")?.slice(10)).toEqual([255, 255, 1, 2, 3, 4]);
  });
});
