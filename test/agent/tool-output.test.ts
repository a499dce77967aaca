/**
 * A running command's newest lines reach the loop's subscribers (the live view) as `tool_output`
 * events carrying the call's record, redacted, and only while the call runs.
 */
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/events.js";
import { loopHarness } from "../helpers/loop.js";
import { useScene } from "../helpers/scene.js";
import { step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-tool-output-home-", project: "scoot-tool-output-" });

it("a running command's lines come as tool_output events, redacted, with the call's record", async () => {
  // The command goes on only once a tool_output event was seen: it ends only if one came while it ran.
  const go = path.join(scene.project, "seen");
  const h = loopHarness(
    [
      step("bash", `echo token sk-abcdefgh12345678; while [ ! -f seen ]; do sleep 0.05; done; echo after`),
      step("final", "ok"),
    ],
    {
      cwd: scene.project,
      mode: "unrestricted",
      configure: (c) => {
        c.tools.sandbox = "off";
      },
    },
  );
  const keep = h.deps.onEvent!;
  h.deps.onEvent = (e: AgentEvent) => {
    keep(e);
    if (e.type === "tool_output") fs.writeFileSync(go, "");
  };
  expect((await h.run("watch it")).stop).toBe("final");
  const kinds = h.events.map((e) => e.type);
  const outputs = h.events.filter((e) => e.type === "tool_output");
  expect(outputs.length).toBeGreaterThan(0);
  expect(outputs[0]!.lines).toEqual(["token [REDACTED]"]);
  const running = h.events.find((e) => e.type === "running");
  expect(outputs.every((e) => e.call === running?.call && e.call.action === "bash")).toBe(true);
  // Between the call's start and its observation, never after.
  expect(kinds.indexOf("running")).toBeLessThan(kinds.indexOf("tool_output"));
  expect(kinds.lastIndexOf("tool_output")).toBeLessThan(kinds.indexOf("observation"));
});
