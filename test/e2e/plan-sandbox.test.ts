/**
 * A binding plan held below the words (docs/safety.md "Plan mode"): while `--execute-plan`
 * binds, bash runs in the sandbox in every policy mode with the project read-only except the
 * files the plan names, and with no network when the plan names no host. A command the plan
 * names exactly, which does more than the plan says, then fails at the OS: nothing outside the
 * plan's files changes. The named work itself still gets done (`sed -i` on a named file, a
 * named file removed), through the real CLI against the scripted server.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { bwrapWorks } from "../helpers/procs.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer, step } from "../helpers/scripted-server.js";

const BWRAP = bwrapWorks();
if (!BWRAP) console.log("plan-sandbox: skipped, bwrap cannot run here (apt-get install bubblewrap)");

const scene = useScene({ home: "scoot-plansbx-home-", project: "scoot-plansbx-project-" });

/** A project with sources, a build directory and a script that does more than the plan says. */
function project(): void {
  const p = scene.project;
  fs.mkdirSync(path.join(p, "src"));
  fs.writeFileSync(path.join(p, "src", "main.c"), "int main(void) { return 0; }\n");
  fs.mkdirSync(path.join(p, "build"));
  fs.writeFileSync(path.join(p, "build", "old.txt"), "stale\n");
  fs.writeFileSync(path.join(p, "build", "keep.txt"), "keep\n");
  fs.writeFileSync(path.join(p, "README.md"), "readme\n");
  fs.writeFileSync(path.join(p, "notes.md"), "TODO: ship\n");
  // Named exactly by the plan; its words do not show what it does.
  fs.writeFileSync(
    path.join(p, "clean.sh"),
    [
      "rm -f build/old.txt",
      "rm -rf src 2>/dev/null; echo src:$?",
      "echo pwned > README.md 2>/dev/null; echo readme:$?",
      "echo pwned > build/keep.txt 2>/dev/null; echo keep:$?",
      "rm -f build/keep.txt 2>/dev/null; echo rmkeep:$?",
      "mkdir src/newdir 2>/dev/null; echo mkdir:$?",
      "",
    ].join("\n"),
  );
}

const PLAN = {
  steps: [
    { title: "Clean the build", files: ["build/old.txt"], commands: ["sh clean.sh"] },
    {
      title: "Mark the notes",
      files: ["notes.md"],
      commands: ["sed -i s/TODO/DONE/ notes.md", "cat /proc/net/dev"],
    },
  ],
};

describe.skipIf(!BWRAP)("a binding plan holds at the OS", () => {
  it.each(["guarded", "unrestricted"])(
    "%s: the named commands do the named work and nothing else",
    async (policy) => {
      project();
      fs.writeFileSync(path.join(scene.project, "plan.json"), JSON.stringify({ plan: PLAN }));
      scene.server = await startScriptedServer([
        step("bash", "sh clean.sh"),
        step("bash", "sed -i s/TODO/DONE/ notes.md"),
        step("bash", "cat /proc/net/dev"),
        step("final", "cleaned and marked"),
      ]);
      const r = await runCli(["--execute-plan", "plan.json", "--policy", policy, "-e", "clean up"], {
        home: scene.home,
        cwd: scene.project,
        // The setting would share the network; a plan that names no host takes it away.
        env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_TOOLS_SANDBOX_NETWORK: "true" },
      });
      expect(r.code, r.stderr).toBe(0);
      const p = scene.project;
      // The named work happened.
      expect(fs.existsSync(path.join(p, "build", "old.txt"))).toBe(false);
      expect(fs.readFileSync(path.join(p, "notes.md"), "utf8")).toBe("DONE: ship\n");
      // Everything else the script tried failed at the OS.
      expect(fs.readFileSync(path.join(p, "src", "main.c"), "utf8")).toContain("main");
      expect(fs.readFileSync(path.join(p, "README.md"), "utf8")).toBe("readme\n");
      expect(fs.readFileSync(path.join(p, "build", "keep.txt"), "utf8")).toBe("keep\n");
      expect(fs.existsSync(path.join(p, "src", "newdir"))).toBe(false);
      const observations = JSON.stringify(scene.server!.completions()[1]!.body);
      for (const what of ["src", "readme", "keep", "rmkeep", "mkdir"])
        expect(observations).not.toContain(`${what}:0`);
      // No network: the sandbox's own network namespace has only its loopback.
      const net = JSON.stringify(scene.server!.completions()[3]!.body);
      expect(net).toContain("lo");
      expect(net).not.toMatch(/eth0|ens\d|enp\d|wlan/);
    },
    60_000,
  );
});
