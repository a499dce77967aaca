import { beforeEach, describe, expect, it } from "vitest";
import {
  REDACTED,
  redact,
  registerSecret,
  registerSecretEnv,
  resetSecretsForTest,
} from "../../src/core/redact.js";

beforeEach(() => resetSecretsForTest());

describe("credential shapes are redacted", () => {
  it.each([
    ["key sk-abcdefghijklmnop1234 here", "key [REDACTED] here"],
    ["sk-proj-AbC_dEf-0123456789xyz", REDACTED],
    ["token ghp_0123456789abcdefghijABCDEFGHIJ", `token ${REDACTED}`],
    ["github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", REDACTED],
    ["aws AKIAIOSFODNN7EXAMPLE", `aws ${REDACTED}`],
    ["Authorization: Bearer abc.def-ghi_jkl", `Authorization: ${REDACTED}`],
    ["authorization: bearer 0123456789abcdef", `authorization: ${REDACTED}`],
    [
      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\nafter",
      `${REDACTED}\nafter`,
    ],
    ["-----BEGIN RSA PRIVATE KEY-----\ntruncated", REDACTED],
  ])("%j", (input, expected) => {
    expect(redact(input)).toBe(expected);
  });
  it.each(["sk-short", "task-12345", "the Bearer of news", "ghp_short", "ordinary text"])(
    "leaves ordinary text alone: %j",
    (input) => {
      expect(redact(input)).toBe(input);
    },
  );
});

describe("known values are redacted", () => {
  it("a registered token, wherever it appears", () => {
    registerSecret("hunter2hunter2");
    expect(redact("a hunter2hunter2 b hunter2hunter2")).toBe(`a ${REDACTED} b ${REDACTED}`);
  });
  it("values of secret-named variables", () => {
    registerSecretEnv({
      DB_PASSWORD: "p4ssw0rd-value",
      MY_API_KEY: "key-value-9999",
      SESSION_TOKEN: "tok-value-8888",
      APP_SECRET: "sec-value-7777",
      HOME: "/root-not-secret",
    });
    expect(redact("p4ssw0rd-value key-value-9999 tok-value-8888 sec-value-7777 /root-not-secret")).toBe(
      `${REDACTED} ${REDACTED} ${REDACTED} ${REDACTED} /root-not-secret`,
    );
  });
  it("very short values are not treated as secrets (they would redact ordinary words)", () => {
    registerSecretEnv({ X_KEY: "1" });
    expect(redact("version 1")).toBe("version 1");
  });
  it("a longer secret containing a shorter one is replaced whole", () => {
    registerSecret("abcdef");
    registerSecret("abcdefghijkl");
    expect(redact("abcdefghijkl")).toBe(REDACTED);
  });
});
