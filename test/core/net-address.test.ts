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
