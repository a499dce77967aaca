import fs from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/schema.js";
import { resolveToken } from "../../src/config/secrets.js";
import { redact, resetSecretsForTest } from "../../src/core/redact.js";
import { useScene } from "../helpers/scene.js";

const scene = useScene({ home: "scoot-test-" });
beforeEach(() => {
  resetSecretsForTest();
});

function tokenFile(mode: number, value = "file-token-value-123"): string {
  const file = path.join(scene.home, "token");
  fs.writeFileSync(file, `${value}\n`);
  fs.chmodSync(file, mode);
  return file;
}

describe("token chain: env → 0600 file → command", () => {
  it("the environment variable comes first", () => {
    tokenFile(0o600);
    const r = resolveToken(defaultConfig(), scene.home, { OPENAI_API_KEY: "env-token-value-123" });
    expect(r).toMatchObject({ source: "env", token: "env-token-value-123" });
    expect(r.detail).not.toContain("env-token-value-123");
  });
  it("api_key_env names which variable holds the token", () => {
    const c = defaultConfig();
    c.backend.api_key_env = "MY_LLM_TOKEN";
    expect(resolveToken(c, scene.home, { MY_LLM_TOKEN: "custom-token-1234" })).toMatchObject({
      source: "env",
    });
  });
  it("then the 0600 token file", () => {
    tokenFile(0o600);
    expect(resolveToken(defaultConfig(), scene.home, {})).toMatchObject({
      source: "file",
      token: "file-token-value-123",
    });
  });
  it.each([0o644, 0o640, 0o400, 0o700, 0o666])(
    "a token file with mode %o is refused with the chmod fix",
    (mode) => {
      const file = tokenFile(mode);
      const r = resolveToken(defaultConfig(), scene.home, {});
      expect(r.token).toBeUndefined();
      expect(r.error).toContain(`chmod 600 ${file}`);
      expect(r.error).toContain("must be 0600");
    },
  );
  it("then the command, whose output is the token", () => {
    const c = defaultConfig();
    c.backend.api_key_cmd = "echo cmd-token-value-123";
    expect(resolveToken(c, scene.home, {})).toMatchObject({ source: "cmd", token: "cmd-token-value-123" });
  });
  it("a failing command is a clear error", () => {
    const c = defaultConfig();
    c.backend.api_key_cmd = "exit 3";
    expect(resolveToken(c, scene.home, {}).error).toMatch(/exited with 3/);
  });
  it("no token at all is fine", () => {
    expect(resolveToken(defaultConfig(), scene.home, {})).toMatchObject({ source: "none" });
  });
  it("a resolved token is redacted everywhere afterwards", () => {
    tokenFile(0o600, "zz-very-private-value");
    resolveToken(defaultConfig(), scene.home, {});
    expect(redact("header: zz-very-private-value!")).toBe("header: [REDACTED]!");
  });
});
