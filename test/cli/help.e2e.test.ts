/**
 * Per-command help and the answer to unknown command words (docs/commands.md "Help" and "Unknown
 * commands"): the tables run the CLI's routing in process (test/helpers/cli.ts runInProcess); one
 * case of each, and the neutralised and redacted echoes, run the built binary.
 */
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/app.js";
import { COMMAND_HELP } from "../../src/cli/help.js";
import { type CliResult, runCli, runInProcess, tempDir } from "../helpers/cli.js";
import { startScriptedServer, step } from "../helpers/scripted-server.js";

const home = tempDir();
const names = Object.keys(COMMAND_HELP);

function isCommandHelp(r: CliResult, name: string): void {
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(new RegExp(`^scoot ${name} — `));
  expect(r.stdout).toContain("\nUsage:\n");
  for (const usage of COMMAND_HELP[name]!.usage) expect(r.stdout).toContain(usage);
  expect(r.stdout).toContain("\nOptions:\n");
  expect(r.stdout).toContain(`\nExample:\n  ${COMMAND_HELP[name]!.example}\n`);
  expect(COMMAND_HELP[name]!.example).toMatch(/(^|\| )scoot /);
  expect(r.stdout).toContain(`More: docs/`);
}

describe("per-command help", () => {
  it("covers every command the dispatcher knows, and no other", () => {
    const dispatched = new Set(Object.keys(COMMANDS).map((key) => key.split(" ")[0]!));
    dispatched.add("help");
    expect(new Set(names)).toEqual(dispatched);
  });

  it.each(
    names.flatMap((name) => [
      [name, "--help"],
      [name, "-h"],
      ["help", name],
    ]),
  )("scoot %s %s prints usage, options and an example on stdout, exit 0", async (a, b) => {
    const name = a === "help" && b !== "--help" && b !== "-h" ? b : a;
    isCommandHelp(await runInProcess([a, b], { home }), name);
  });

  it("the built binary prints the same help", async () => {
    const child = await runCli(["policy", "--help"], { home });
    isCommandHelp(child, "policy");
    expect(child).toEqual(await runInProcess(["policy", "--help"], { home }));
  });

  it("a subcommand's --help is its command's help", async () => {
    const r = await runInProcess(["audit", "verify", "--help"], { home });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("scoot audit verify [--json] [--head H]");
  });

  it.each([["-e"], ["--eval"]])(
    "scoot %s --help is help: the overview, exit 0, and no request reaches the model",
    async (flag) => {
      const server = await startScriptedServer([step("final", "should never be asked")]);
      try {
        const env = { SCOOT_BACKEND_BASE_URL: server.url };
        const overview = await runInProcess(["--help"], { home, env });
        for (const help of ["--help", "-h"]) {
          const r = await runInProcess([flag, help], { home, env });
          expect(r).toEqual(overview);
        }
        expect(server.requests).toEqual([]);
      } finally {
        await server.close();
      }
    },
  );

  it("scoot help and scoot --help print the overview with the docs pages", async () => {
    const a = await runInProcess(["help"], { home });
    const b = await runInProcess(["--help"], { home });
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(a.stdout).toContain(
      "\nDocs (beside README.md, in the repository and in the installed package):\n",
    );
    expect(a.stdout).toContain("docs/safety.md");
  });

  it("help for a command that does not exist is a usage error", async () => {
    const r = await runInProcess(["help", "frobnicate"], { home });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(
      /^scoot help: no command "frobnicate"; the commands: repl, config, doctor, .*, help \(see scoot --help\)\n$/,
    );
  });

  it("help for a near miss of a command names the command", async () => {
    const r = await runInProcess(["help", "sesions"], { home });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('scoot help: no command "sesions"; did you mean scoot help sessions?\n');
  });
});

describe("unknown command words", () => {
  it.each([
    [["sesions"], 'scoot: unknown command "sesions"; did you mean scoot sessions? (see scoot --help)\n'],
    [["DOCTER"], 'scoot: unknown command "DOCTER"; did you mean scoot doctor? (see scoot --help)\n'],
    [["audit", "bogus"], 'scoot: unknown command "audit bogus" (see scoot audit --help)\n'],
    [["policy"], 'scoot: unknown command "policy" (see scoot policy --help)\n'],
  ])("scoot %j answers on stderr, exit 2", async (args, message) => {
    const r = await runInProcess(args, { home });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(message);
  });

  it.each([[["a goal"]], [["count", "the", "files"]], [["lsit"]], [['say "hi" to $USER']]])(
    "scoot %j without a terminal runs the words as a goal, like -e",
    async (args) => {
      const server = await startScriptedServer([step("final", "did it", "t")]);
      try {
        const r = await runCli(args, { home, env: { SCOOT_BACKEND_BASE_URL: server.url } });
        expect(r.stderr).toBe("");
        expect(r.stdout).toBe("did it\n");
        expect(r.code).toBe(0);
        const body = JSON.stringify(server.completions()[0]!.body);
        expect(body).toContain(JSON.stringify(args.join(" ")).slice(1, -1));
      } finally {
        await server.close();
      }
    },
  );

  it("the built binary answers the same", async () => {
    const child = await runCli(["sesions"], { home });
    expect(child.code).toBe(2);
    expect(child.stdout).toBe("");
    expect(child.stderr).toBe(
      'scoot: unknown command "sesions"; did you mean scoot sessions? (see scoot --help)\n',
    );
    expect(child).toEqual(await runInProcess(["sesions"], { home }));
  });

  it("unknown words with terminal controls are echoed neutralised", async () => {
    const r = await runCli(["help", "\x1b]52;c;aGk=\x07clear it"], { home });
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain("\x1b");
    expect(r.stderr).toContain("\\x1b]52;c;aGk=\\x07clear it");
  });

  it("unknown words holding a credential are echoed redacted", async () => {
    const r = await runCli(["help", "use sk-abcdefghijklmnopqrstuvwx1234 please"], { home });
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain("sk-abcdefghijklmnopqrstuvwx1234");
    expect(r.stderr).toContain("[REDACTED]");
  });
});
