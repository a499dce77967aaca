/**
 * The REPL's `/model <name>` checked against the server's model list (docs/keyboard.md "The REPL"),
 * through the built CLI with piped input against the scripted server: an unknown name is refused
 * with names the server has and the model stays; a server without a list is believed, with a
 * warning that it could not be checked.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer, step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-repl-model-", project: "scoot-repl-model-project-" });

function repl(input: string) {
  return runCli(["repl"], {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.server!.url, SCOOT_BACKEND_MODEL: "qwen2.5" },
    input,
  });
}

const modelOf = (i: number) => (scene.server!.completions()[i]!.body as { model: string }).model;

describe("/model <name>", () => {
  it("a name the server does not list is refused, naming some it does; the model stays", async () => {
    const listed = ["qwen2.5:latest", "llama3.2", ...Array.from({ length: 10 }, (_, i) => `m${i}`)];
    scene.server = await startScriptedServer([step("final", "one"), step("final", "two")], {
      models: listed,
    });
    const r = await repl("/model nope\nfirst goal\n/model llama3.2\nsecond goal\n/exit\n");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      'scoot: the server does not list a model "nope"; still qwen2.5. It lists: qwen2.5:latest, llama3.2, m0, m1, m2, m3, m4, m5 (and 4 more)\n',
    );
    expect(r.stderr).toContain("model llama3.2 for the next goals\n");
    expect(r.stderr).not.toContain("model nope for the next goals");
    expect(modelOf(0)).toBe("qwen2.5");
    expect(modelOf(1)).toBe("llama3.2");
  });

  it("a server without a model list (404): the name is taken, with a warning that it was not checked", async () => {
    scene.server = await startScriptedServer([step("final", "ok")], {
      routes: {
        "GET /v1/models": () => ({ status: 404, body: "404 page not found", contentType: "text/plain" }),
      },
    });
    const r = await repl("/model my-finetune\na goal\n/exit\n");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /scoot: warning: could not check "my-finetune" against the server's model list: the backend at \S+\/v1\/models answered 404 Not Found: 404 page not found/,
    );
    expect(r.stderr).toContain("model my-finetune for the next goals\n");
    expect(modelOf(0)).toBe("my-finetune");
  });
});
