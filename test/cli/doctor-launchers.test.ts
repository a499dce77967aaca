/**
 * Which stdio server commands `scoot doctor` warns about (docs/mcp.md "MCP client"): a launcher
 * that resolves an unpinned package, a relative script; not a launcher whose packages are pinned
 * to one version (the fix the warning names) nor `node -e <code>`.
 */
import { describe, expect, it } from "vitest";
import { resolvesFromWorkingDir } from "../../src/cli/doctor-capabilities.js";
import { isPinnedSpec, nodeScript, packageLaunch } from "../../src/mcp/launcher.js";

const why = (command: string, ...args: string[]) => resolvesFromWorkingDir({ command, args });

describe("package launchers", () => {
  it("a pinned package is not warned about: npx -y pkg@1.2.3 is the documented fix", () => {
    expect(why("npx", "-y", "pkg@1.2.3")).toBeUndefined();
    expect(why("/usr/bin/npx", "--yes", "@modelcontextprotocol/server-memory@2026.8.31")).toBeUndefined();
    expect(why("npx", "-y", "--package=@scope/a@1.0.0", "-p", "b@2.0.0-rc.1", "--", "a-bin")).toBeUndefined();
    expect(why("npm", "exec", "--yes", "pkg@1.2.3")).toBeUndefined();
    expect(why("pnpm", "dlx", "pkg@1.2.3")).toBeUndefined();
    expect(why("bunx", "pkg@1.2.3")).toBeUndefined();
    expect(why("uvx", "mcp-server-fetch==2025.4.7")).toBeUndefined();
    expect(why("uvx", "--from", "mcp-server-git==1.0.0", "mcp-server-git")).toBeUndefined();
    expect(why("pipx", "run", "pkg==1.2.3")).toBeUndefined();
  });

  it("an unpinned one is, naming what is not pinned", () => {
    expect(why("npx", "-y", "pkg")).toBe(
      "npx resolves the package from its working directory and the registry (pkg is not pinned to one version)",
    );
    expect(why("npx", "-y", "pkg@latest")).toMatch(/pkg@latest is not pinned/);
    expect(why("npx", "pkg@^1.2.3")).toMatch(/pkg@\^1\.2\.3 is not pinned/);
    expect(why("npx", "@scope/pkg")).toMatch(/@scope\/pkg is not pinned/);
    expect(why("npx", "-p", "a@1.0.0", "-p", "b", "a-bin")).toMatch(/\(b is not pinned/);
    expect(why("npm", "exec", "pkg")).toMatch(/^npm exec resolves/);
    expect(why("yarn", "dlx", "pkg@1")).toMatch(/^yarn dlx resolves .*pkg@1 is not pinned/);
    expect(why("uvx", "mcp-server-fetch")).toMatch(/^uvx resolves/);
    expect(why("uvx", "pkg>=1.0")).toMatch(/^uvx resolves/);
    expect(why("npx")).toBe("npx resolves the package from its working directory and the registry");
  });

  it("reads specs as npm and pip do", () => {
    expect(isPinnedSpec("@scope/pkg@1.2.3", "npm")).toBe(true);
    expect(isPinnedSpec("@scope/pkg", "npm")).toBe(false);
    expect(isPinnedSpec("pkg@1.2", "npm")).toBe(false);
    expect(isPinnedSpec("pkg[extra]==1.2.3", "python")).toBe(true);
    expect(isPinnedSpec("pkg==1.*", "python")).toBe(false);
    expect(packageLaunch("node", ["x.js"])).toBeUndefined();
  });
});

describe("node", () => {
  it("-e, --eval, -p and --print run inline code, not a script", () => {
    expect(why("node", "-e", "setInterval(() => {}, 1000)")).toBeUndefined();
    expect(why("/usr/bin/node", "--eval", "require('./x')")).toBeUndefined();
    expect(why("node", "-p", "1 + 1")).toBeUndefined();
    expect(why("node", "--print=process.pid")).toBeUndefined();
    expect(nodeScript(["--no-warnings", "-e", "code"])).toBe("inline");
  });

  it("a relative script is still warned about, an absolute one is not, option values are no script", () => {
    expect(why("node", "server.js")).toBe("node runs the relative script server.js");
    expect(why("node", "--require", "/abs/hook.js", "dist/index.js")).toBe(
      "node runs the relative script dist/index.js",
    );
    expect(why("node", "-r", "/abs/hook.js", "/srv/mcp/index.js")).toBeUndefined();
    expect(why("node", "--import=/abs/hook.mjs", "/srv/mcp/index.js")).toBeUndefined();
    expect(why("node", "--", "rel.js")).toBe("node runs the relative script rel.js");
  });
});
