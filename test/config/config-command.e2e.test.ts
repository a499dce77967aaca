/**
 * `scoot config` through the built CLI (docs/configuration.md "Configuration"): every key of every
 * section in declaration order, an unset optional key shown as unset with what its absence means.
 */
import { describe, expect, it } from "vitest";
import { SCHEMA } from "../../src/config/schema.js";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";

const scene = useScene({ home: "scoot-config-cmd-" });

/** The lines of one `[section]` of the output. */
function section(stdout: string, name: string): string[] {
  const lines = stdout.split("\n");
  const start = lines.indexOf(`[${name}]`);
  const end = lines.indexOf("", start);
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

describe("scoot config", () => {
  it("shows tools.approval when unset, saying what unset means, like the other keys", async () => {
    const r = await runCli(["config"], { home: scene.home });
    expect(r.code, r.stderr).toBe(0);
    const tools = section(r.stdout, "tools");
    expect(tools).toContain("# approval = (unset: ask in a REPL on a terminal and in ACP, never elsewhere)");
    expect(tools).toContain('policy = "guarded"');
    // Every declared key of the section has its line, in declaration order.
    const keys = tools.map((l) => /^(?:# )?([a-z_]+) = /.exec(l)?.[1]);
    expect(keys).toEqual(Object.keys(SCHEMA.tools));
    expect(section(r.stdout, "backend")).toContain("# api_key_file = (unset: <home>/token)");

    const set = await runCli(["config"], { home: scene.home, env: { SCOOT_TOOLS_APPROVAL: "never" } });
    expect(section(set.stdout, "tools")).toContain('approval = "never"');
    expect(set.stdout).not.toContain("# approval =");
  });
});
