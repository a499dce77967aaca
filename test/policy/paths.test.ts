// biome-ignore-all lint/suspicious/noTemplateCurlyInString: rows are shell and path text, where ${VAR} is literal
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PolicyMode } from "../../src/config/schema.js";
import { checkReadPath, checkWritePath, escapesLexically, secretLikeName } from "../../src/policy/paths.js";
import { placeResolutions, resolvePhysical } from "../../src/policy/realpath.js";
import type { GateSettings } from "../../src/policy/types.js";

/**
 * A real tree in a temp dir:
 *   home/.scoot/token, home/.ssh/id_rsa      secrets outside the project
 *   outside/notes.txt, outside/deep/         ordinary files outside the project
 *   project/src/a.ts, project/README.md      the project
 *   project/linkout   -> ../outside          directory symlink pointing outside
 *   project/dangling  -> ../outside/new/f    dangling symlink (target does not exist yet)
 *   project/chain1 -> chain2 -> chain3 -> ../outside   a chain leaving the project
 *   project/inchain1 -> inchain2 -> src      a chain staying inside
 *   project/inlink    -> src                 directory symlink inside
 *   project/updir     -> ../outside/deep     `updir/../x` physically lands in outside/
 *   project/loop1 <-> project/loop2          symlink loop
 *   project/tokenlink -> ../home/.scoot/token, project/keylink -> ../home/.ssh/id_rsa
 *   project/rel-token -> tokenlink           a symlink to a symlink to the token
 *   home/.scoot/auth.dat                     a secret with an ordinary name (secret_paths only)
 *   project/authlink -> ../home/.scoot/auth.dat, project/rel-auth -> authlink
 *   rootlink -> project                      the project reached through a symlink
 */
let tmp: string;
let project: string;
let tokenFile: string;

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-")));
  project = path.join(tmp, "project");
  const home = path.join(tmp, "home");
  fs.mkdirSync(path.join(home, ".scoot"), { recursive: true });
  fs.mkdirSync(path.join(home, ".ssh"), { recursive: true });
  tokenFile = path.join(home, ".scoot", "token");
  fs.writeFileSync(tokenFile, "sk-test\n", { mode: 0o600 });
  fs.writeFileSync(path.join(home, ".ssh", "id_rsa"), "key\n");
  fs.mkdirSync(path.join(tmp, "outside", "deep"), { recursive: true });
  fs.writeFileSync(path.join(tmp, "outside", "notes.txt"), "n\n");
  fs.mkdirSync(path.join(project, "src"), { recursive: true });
  fs.writeFileSync(path.join(project, "src", "a.ts"), "export {};\n");
  fs.writeFileSync(path.join(project, "README.md"), "# r\n");
  const link = (target: string, name: string) => fs.symlinkSync(target, path.join(project, name));
  link("../outside", "linkout");
  link("../outside/new/f", "dangling");
  link("chain2", "chain1");
  link("chain3", "chain2");
  link("../outside", "chain3");
  link("inchain2", "inchain1");
  link("src", "inchain2");
  link("src", "inlink");
  link("../outside/deep", "updir");
  link("loop2", "loop1");
  link("loop1", "loop2");
  link("../home/.scoot/token", "tokenlink");
  link("../home/.ssh/id_rsa", "keylink");
  link("tokenlink", "rel-token");
  fs.writeFileSync(path.join(home, ".scoot", "auth.dat"), "x\n", { mode: 0o600 });
  link("../home/.scoot/auth.dat", "authlink");
  link("authlink", "rel-auth");
  fs.symlinkSync(project, path.join(tmp, "rootlink"));
});

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

function settings(mode: PolicyMode, over: Partial<GateSettings> = {}): GateSettings {
  return {
    mode,
    projectRoot: project,
    confineWrites: true,
    blockInternalHttp: true,
    secretPaths: [tokenFile],
    protectedPaths: [],
    readableInside: [],
    protectedIdentities: new Set(),
    mcpAllowed: {},
    realpath: resolvePhysical,
    // As a run builds them: the places kept for a stretch of reads.
    places: placeResolutions(project),
    ...over,
  };
}

/** `{tmp}` and `{project}` in table rows are replaced once the temp tree exists. */
function fill(p: string): string {
  return p.replaceAll("{tmp}", tmp).replaceAll("{project}", project);
}

describe("secret-like names (segments, case-insensitive)", () => {
  it.each([
    [".env", ".env"],
    [".env.local", ".env.local"],
    [".env.production", ".env.production"],
    [".envrc", ".envrc"],
    ["config/.env", ".env"],
    [".ENV", ".env"],
    [".Env.Local", ".env.local"],
    ["././/.env", ".env"],
    ["sub/../.env", ".env"],
    [".env/", ".env"],
    [".env.", ".env"],
    [".ssh", ".ssh"],
    [".ssh/config", ".ssh"],
    ["/home/u/.ssh/authorized_keys", ".ssh"],
    [".SSH ", ".ssh"],
    ["id_rsa", "id_rsa"],
    ["keys/id_rsa.pub", "id_rsa.pub"],
    ["id_ed25519", "id_ed25519"],
    ["id_ecdsa", "id_ecdsa"],
    ["id_dsa", "id_dsa"],
    [".netrc", ".netrc"],
    [".gnupg/pubring.kbx", ".gnupg"],
    ["credentials", "credentials"],
    [".aws/credentials", ".aws"],
    ["gcp/credentials.json", "credentials.json"],
    ["secret", "secret"],
    ["secrets", "secrets"],
    ["k8s/secrets.yaml", "secrets.yaml"],
    ["token", "token"],
    ["/home/u/.scoot/token", "token"],
    [".npmrc", ".npmrc"],
    [".pgpass", ".pgpass"],
    [".git-credentials", ".git-credentials"],
    [".docker/config.json", ".docker/config.json"],
    ["home/.kube/config", ".kube/config"],
    ["tls/server.key", "server.key"],
    ["certs/privkey.pem", "privkey.pem"],
    ["store.p12", "store.p12"],
    ["a\\.ssh\\id_rsa", ".ssh"],
    // fullwidth letters fold to ASCII under NFKC: treated as the secret (conservative)
    [".\uff45\uff4e\uff56", ".env"],
    // Secret words inside a segment (issue 10; the reference's issue #191 case first).
    ["/tmp/demo-token", "demo-token"],
    ["secret-token-file", "secret-token-file"],
    ["api_token.txt", "api_token.txt"],
    ["prod-secrets.yaml", "prod-secrets.yaml"],
    ["DB_PASSWORD", "db_password"],
    ["conf/db.passwd", "db.passwd"],
    ["aws-credential.ini", "aws-credential.ini"],
    ["private_key.pem", "private_key.pem"],
    ["api-key.txt", "api-key.txt"],
    ["GitHub.Token.JSON", "github.token.json"],
    ["docs/secret_santa.md", "secret_santa.md"],
    ["tokens/list", "tokens"],
    // Case and width folding apply to the words too; the source-code exemption never covers
    // the name rules (`.env.ts` is still `.env*`).
    ["My.Secret.Backup", "my.secret.backup"],
    ["\uff41\uff50\uff49\uff3f\uff54\uff4f\uff4b\uff45\uff4e.txt", "api_token.txt"],
    ["deploy-token.", "deploy-token"],
    [".env.ts", ".env.ts"],
    ["id_rsa.py", "id_rsa.py"],
  ])("%j is secret-like (%s)", (p, name) => {
    expect(secretLikeName(p)).toBe(name);
  });

  it.each([
    ["src/token.ts"],
    ["src/tokenizer.ts"],
    ["docs/secretariat.md"],
    ["src/lexer/tokenizer.rs"],
    ["environment.md"],
    ["env/config.ts"],
    [".docker/daemon.json"],
    ["config.json"],
    ["keys/README.md"],
    ["monkey"],
    ["src/credentials_form.tsx"],
    // Whole words only, and code about a secret is not the secret (docs/safety.md "Policy modes").
    ["src/auth/password_hash.py"],
    ["src/token.rs"],
    ["secretary.txt"],
    ["tokenomics.yaml"],
    ["passwords-policy.go"],
    ["keyboard.md"],
    ["private.txt"],
    ["%2eenv"],
    [".e\u200bnv"],
    ["ssh/config"],
  ])("%j is not secret-like", (p) => {
    expect(secretLikeName(p)).toBeUndefined();
  });
});

describe("lexical .. escapes", () => {
  it.each([
    ["..", true],
    ["../x", true],
    ["a/../../x", true],
    ["./../x", true],
    ["a/b/../../../x", true],
    ["../project/x", true],
    ["a/..", false],
    ["a/../b", false],
    ["./a/./b", false],
    ["%2e%2e/x", false],
    ["..x/y", false],
    ["x..", false],
    ["...", false],
  ])("%j escapes=%s", (p, expected) => {
    expect(escapesLexically(p)).toBe(expected);
  });
});

describe("read paths: readonly", () => {
  it.each([
    ["/etc/passwd", "absolute paths are refused in readonly mode"],
    ["{project}/README.md", "absolute paths are refused in readonly mode"],
    ["~", "~ paths are refused in readonly mode"],
    ["~/notes.txt", "~ paths are refused in readonly mode"],
    ["~root/x", "~ paths are refused in readonly mode"],
    ["$HOME/x", "$VAR paths are refused in readonly mode"],
    ["${HOME}/x", "$VAR paths are refused in readonly mode"],
    ["src/$(whoami)", "$VAR paths are refused in readonly mode"],
    ["..", "escapes the project root"],
    ["../outside/notes.txt", "escapes the project root"],
    ["a/../../x", "escapes the project root"],
    ["src/../../outside/notes.txt", "escapes the project root"],
    ["linkout/notes.txt", "leads outside the project root through a symlink"],
    ["linkout", "leads outside the project root through a symlink"],
    ["chain1/notes.txt", "leads outside the project root through a symlink"],
    ["dangling", "leads outside the project root through a symlink"],
    ["loop1", "cannot be resolved"],
    [".env", ".env is a secret-like name"],
    ["config/.ENV.local", ".env.local is a secret-like name"],
    ["sub/../.env", ".env is a secret-like name"],
    ["src/../id_rsa", "id_rsa is a secret-like name"],
    ["", "empty path"],
    ["a\0b", "NUL"],
  ])("%j is denied (%s)", (p, reason) => {
    const d = checkReadPath(fill(p), settings("readonly"));
    expect(d.allow).toBe(false);
    if (!d.allow) {
      expect(d.reason).toContain(reason);
      expect(d.reason.startsWith("read: ")).toBe(true);
    }
  });

  it.each([
    ["README.md"],
    ["src/a.ts"],
    ["./src/a.ts"],
    ["src/"],
    ["."],
    ["src/../README.md"],
    ["inlink/a.ts"],
    ["inchain1/a.ts"],
    ["missing/file.txt"],
    ["%2e%2e/x"],
    ["..\\x"],
    ["src/token.ts"],
    // Lexical first: `updir/..` is the project root, whatever updir points to.
    ["updir/../README.md"],
    ["nope/../README.md"],
  ])("%j is allowed", (p) => {
    expect(checkReadPath(p, settings("readonly"))).toEqual({ allow: true });
  });
});

describe("read paths: guarded", () => {
  it.each([
    [".env", ".env is a secret-like name"],
    [".env.local", "secret-like name"],
    ["/home/someone/.ssh/id_rsa", ".ssh is a secret-like name"],
    ["{tmp}/home/.ssh/id_rsa", "secret-like name"],
    ["{tmp}/home/.scoot/token", "secret-like name"],
    ["keylink", "leads to .ssh, a secret-like name"],
    ["tokenlink", "secret"],
    ["rel-token", "secret"],
    ["~/.ssh/id_rsa", ".ssh is a secret-like name"],
    ["~/.aws/credentials", ".aws is a secret-like name"],
    ["$HOME/.env", ".env is a secret-like name"],
  ])("%j is denied (%s)", (p, reason) => {
    const d = checkReadPath(fill(p), settings("guarded"));
    expect(d.allow).toBe(false);
    if (!d.allow) expect(d.reason).toContain(reason);
  });

  it.each([
    ["/etc/hosts"],
    ["{tmp}/outside/notes.txt"],
    ["../outside/notes.txt"],
    ["linkout/notes.txt"],
    ["README.md"],
    ["{project}/src/a.ts"],
    ["src/token.ts"],
    // The file tools expand ~ and ~/ (tools/fs-util); guarded allows ordinary home reads.
    ["~/.bashrc"],
    ["~"],
    // $VAR is not expanded by the tools: a literal (odd) name inside the project.
    ["$HOME/notes.txt"],
  ])("%j is allowed (ordinary reads, absolute included)", (p) => {
    expect(checkReadPath(fill(p), settings("guarded"))).toEqual({ allow: true });
  });

  describe("configured secret paths match by path and by resolved path", () => {
    it.each([
      ["{tmp}/home/.scoot/auth.dat"],
      ["{tmp}/home/.scoot/auth.dat/"],
      ["{tmp}/home/.scoot/./auth.dat"],
      ["{tmp}/home/x/../.scoot/auth.dat"],
      ["{tmp}/home//.scoot///auth.dat"],
      ["{tmp}/HOME/.scoot/AUTH.DAT"],
      ["../home/.scoot/auth.dat"],
      ["authlink"],
      ["rel-auth"],
      ["{tmp}/rootlink/authlink"],
    ])("%j is the configured secret", (p) => {
      const s = settings("guarded", { secretPaths: [path.join(tmp, "home", ".scoot", "auth.dat")] });
      expect(checkReadPath(fill(p), s)).toEqual({
        allow: false,
        reason:
          "read: path is a configured secret (tools.secret_paths, the token file, or a file a credential variable such as KUBECONFIG names); Scoot does not read secrets",
      });
    });

    it("the same paths are ordinary when not configured", () => {
      expect(checkReadPath("authlink", settings("guarded"))).toEqual({ allow: true });
      expect(checkReadPath(path.join(tmp, "home", ".scoot", "auth.dat"), settings("guarded"))).toEqual({
        allow: true,
      });
    });

    it("a secret path configured through a symlink still matches the file", () => {
      const s = settings("guarded", { secretPaths: [path.join(project, "rel-auth")] });
      expect(checkReadPath(path.join(tmp, "home", ".scoot", "auth.dat"), s).allow).toBe(false);
    });

    it("~ in a read path is expanded the way the file tools expand it before matching", () => {
      const vault = path.join(os.homedir(), ".scoot-policy-test-missing", "vault.dat");
      const s = settings("guarded", { secretPaths: [vault] });
      expect(checkReadPath("~/.scoot-policy-test-missing/vault.dat", s).allow).toBe(false);
      expect(checkReadPath("~/.scoot-policy-test-missing/./vault.dat", s).allow).toBe(false);
      expect(checkReadPath("~/.scoot-policy-test-missing/other.dat", s)).toEqual({ allow: true });
    });

    it("a secret with an ordinary name is caught only through secret_paths", () => {
      const plain = path.join(tmp, "outside", "notes.txt");
      expect(checkReadPath(plain, settings("guarded"))).toEqual({ allow: true });
      const d = checkReadPath(plain, settings("guarded", { secretPaths: [plain] }));
      expect(d).toEqual({
        allow: false,
        reason:
          "read: path is a configured secret (tools.secret_paths, the token file, or a file a credential variable such as KUBECONFIG names); Scoot does not read secrets",
      });
      // reached through the directory symlink linkout -> ../outside
      expect(checkReadPath("linkout/notes.txt", settings("guarded", { secretPaths: [plain] })).allow).toBe(
        false,
      );
    });

    it("a configured secret directory covers what is inside it", () => {
      const dir = path.join(tmp, "outside");
      expect(checkReadPath("linkout/deep", settings("guarded", { secretPaths: [dir] })).allow).toBe(false);
    });
  });
});

describe("read paths: unrestricted allows all but an empty path", () => {
  it.each([[".env"], ["/etc/shadow"], ["~/.ssh/id_rsa"], ["../x"], ["tokenlink"]])("%j", (p) => {
    expect(checkReadPath(p, settings("unrestricted"))).toEqual({ allow: true });
  });
});

describe("write paths: guarded + confine_writes", () => {
  it.each([
    ["", "empty path"],
    ["a\0b", "NUL"],
    ["/tmp/x", "absolute paths are refused"],
    ["{project}/out.txt", "absolute paths are refused"],
    ["~/x", "~ paths are refused"],
    ["~", "~ paths are refused"],
    ["$HOME/x", "$VAR paths are refused"],
    ["${TMPDIR}/x", "$VAR paths are refused"],
    ["..", "escapes the project root"],
    ["../x", "escapes the project root"],
    ["a/../../x", "escapes the project root"],
    ["src/../../outside/x", "escapes the project root"],
    ["linkout/x.txt", "resolves outside the project root through a symlink"],
    ["linkout/new/dir/x.txt", "resolves outside the project root through a symlink"],
    ["linkout", "resolves outside the project root through a symlink"],
    ["dangling", "resolves outside the project root through a symlink"],
    ["chain1/x", "resolves outside the project root through a symlink"],
    ["chain2/x", "resolves outside the project root through a symlink"],
    ["tokenlink", "resolves outside the project root through a symlink"],
    ["loop1/x", "cannot be resolved"],
    [".env", ".env is a secret-like name"],
    ["config/.env.production", "secret-like name"],
    [".ssh/authorized_keys", "secret-like name"],
    [".git-credentials", "secret-like name"],
  ])("%j is denied (%s)", (p, reason) => {
    const d = checkWritePath(fill(p), settings("guarded"));
    expect(d.allow).toBe(false);
    if (!d.allow) {
      expect(d.reason).toContain(reason);
      expect(d.reason.startsWith("write: ")).toBe(true);
    }
  });

  it.each([
    ["out.txt"],
    ["./out.txt"],
    ["src/new.ts"],
    ["new/dir/deep/file.txt"],
    ["src/../out.txt"],
    ["inlink/x.ts"],
    ["inchain1/x.ts"],
    ["README.md"],
    ["%2e%2e/x"],
    ["src/token.ts"],
    ["a/./b//c.txt"],
  ])("%j is allowed", (p) => {
    expect(checkWritePath(p, settings("guarded"))).toEqual({ allow: true });
  });

  it("the project root is itself resolved through realpath", () => {
    const viaLink = settings("guarded", { projectRoot: path.join(tmp, "rootlink") });
    expect(checkWritePath("out.txt", viaLink)).toEqual({ allow: true });
    expect(checkWritePath("inlink/x.ts", viaLink)).toEqual({ allow: true });
    expect(checkWritePath("linkout/x", viaLink).allow).toBe(false);
  });

  it("an unresolvable project root fails closed", () => {
    const s = settings("guarded", { realpath: () => undefined });
    const d = checkWritePath("out.txt", s);
    expect(d).toEqual({ allow: false, reason: "write: the project root cannot be resolved" });
  });
});

describe("write paths: guarded without confine_writes keeps only the secret rule", () => {
  it.each([
    ["/tmp/scoot-elsewhere/x", true],
    ["../x", true],
    ["linkout/x.txt", true],
    ["~/x", true],
    ["~/.ssh/config", false],
    [".env", false],
    ["/home/u/.ssh/authorized_keys", false],
    ["{tmp}/home/.scoot/token", false],
    ["tokenlink", false],
    ["keylink", false],
  ])("%j allowed=%s", (p, allowed) => {
    const d = checkWritePath(fill(p), settings("guarded", { confineWrites: false }));
    expect(d.allow).toBe(allowed);
  });
});

describe("write paths: readonly denies, unrestricted allows", () => {
  it.each([["out.txt"], ["src/a.ts"], [".env"]])("readonly %j", (p) => {
    expect(checkWritePath(p, settings("readonly"))).toEqual({
      allow: false,
      reason: "readonly mode denies writes; run with --policy guarded",
    });
  });
  it.each([["/etc/passwd"], ["../x"], [".env"], ["linkout/x"]])("unrestricted %j", (p) => {
    expect(checkWritePath(p, settings("unrestricted"))).toEqual({ allow: true });
  });
});

describe("resolvePhysical (the filesystem side)", () => {
  it("follows symlinks segment by segment and re-joins what does not exist", () => {
    expect(resolvePhysical(path.join(project, "src", "a.ts"))).toBe(path.join(project, "src", "a.ts"));
    expect(resolvePhysical(`${project}/linkout/new/x`)).toBe(path.join(tmp, "outside", "new", "x"));
    expect(resolvePhysical(`${project}/dangling`)).toBe(path.join(tmp, "outside", "new", "f"));
    expect(resolvePhysical(`${project}/chain1`)).toBe(path.join(tmp, "outside"));
    expect(resolvePhysical(`${project}/rel-token`)).toBe(tokenFile);
  });

  it("normalises .. lexically first, as the file tools open paths", () => {
    // updir -> ../outside/deep, but `updir/..` is the project itself: the tool opens project/x.
    expect(resolvePhysical(`${project}/updir/../x`)).toBe(path.join(project, "x"));
    // A missing segment before `..` does not stop later links from being followed.
    expect(resolvePhysical(`${project}/nope/../linkout/notes.txt`)).toBe(
      path.join(tmp, "outside", "notes.txt"),
    );
    expect(resolvePhysical(`${project}/nope/../tokenlink`)).toBe(tokenFile);
  });

  it("gives undefined for a symlink loop", () => {
    expect(resolvePhysical(`${project}/loop1`)).toBeUndefined();
  });
});
