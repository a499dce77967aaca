/**
 * README.md's "Quick tour", run as written: each command of its code block through the built CLI,
 * in a project, against the scripted model server (the only change: SCOOT_BACKEND_BASE_URL points
 * at it; the tour's base URL stays in the config setup writes). The tour's setup picks no token
 * for the local server, so an OPENAI_API_KEY left in the shell never reaches the server.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer, step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-tour-", project: "demo", model: true });

/** The tour's commands: each line of the first sh block after "## Quick tour", comment cut. */
function tourCommands(): string[] {
  const readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
  const tour = readme.slice(readme.indexOf("## Quick tour"));
  const block = /```sh\n([\s\S]*?)```/.exec(tour)![1]!;
  return block
    .split("\n")
    .map((l) => l.replace(/\s+#\s.*$/, "").trim())
    .filter((l) => l !== "");
}

/** Words of a command line as a POSIX shell splits these (plain words, '…' and "…" quotes). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

const SHELL_KEY = "sk-shellkey0123456789abcdef";

describe("README quick tour", () => {
  it("every command does what its comment says; no token is sent to the local server", async () => {
    const commands = tourCommands();
    expect(commands[0]).toMatch(/^scoot setup .*--token-source none/);
    expect(commands.every((c) => c.startsWith("scoot"))).toBe(true);
    // The server lists the tour's model, as Ollama with qwen2.5 pulled would.
    await scene.model.close();
    scene.model = await startScriptedServer([], { models: ["qwen2.5:latest"] });
    scene.model.push(
      step("final", "README summary"),
      step("final", "no TODOs"),
      step("final", "the tests pass"),
    );
    let sessionId = "";
    const said: Record<string, { code: number | null; stdout: string; stderr: string }> = {};
    for (const command of commands) {
      const argv = words(command)
        .slice(1)
        .map((w) => (w === "<session-id>" ? sessionId : w));
      const r = await runCli(argv, {
        home: scene.home,
        cwd: scene.project,
        env: { SCOOT_BACKEND_BASE_URL: scene.model.url, OPENAI_API_KEY: SHELL_KEY },
        input: argv.length === 0 ? "/exit\n" : "",
        timeoutMs: 60_000,
      });
      said[command] = r;
      if (argv.includes("--json")) sessionId = JSON.parse(r.stdout).session_id as string;
    }
    const by = (start: string) => said[commands.find((c) => c.startsWith(start))!]!;

    expect(by("scoot setup").code, by("scoot setup").stderr).toBe(0);
    expect(by("scoot setup").stdout).toContain("token: none (no Authorization header is sent)");
    expect(by("scoot doctor").stdout).toMatch(/^OK +backend .*qwen2\.5 among them/m);
    expect(by('scoot -e "summarise').stdout).toBe("README summary\n");
    expect(JSON.parse(by('scoot -e "list TODOs"').stdout)).toMatchObject({
      answer: "no TODOs",
      stop: "final",
    });
    expect(by('scoot -e "list TODOs"').stderr).toContain("thinking");
    expect(by("scoot --continue").stdout).toBe("the tests pass\n");
    expect(by("scoot --continue").stderr).toMatch(/^continuing session cli-/);
    expect(by("scoot policy check").stdout).toContain("decision=deny");
    expect(by("scoot sessions list").stdout).toMatch(/^#\s+id\s+modified\s+msgs\s+first goal$/m);
    expect(by("scoot audit show").stdout).toContain('"kind":"run"');
    expect(by("scoot undo").stderr).toContain("has no file changes to undo");
    expect(by("scoot help audit").stdout).toContain("scoot audit show <session-id>");
    // The REPL came and went.
    expect(said.scoot!.code).toBe(0);

    // No request carried a token: the local server was never sent the shell's key.
    expect(scene.model.requests.length).toBeGreaterThan(0);
    expect(scene.model.requests.filter((q) => q.headers.authorization !== undefined)).toEqual([]);
  });
});
