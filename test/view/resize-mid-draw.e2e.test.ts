/**
 * A resize that lands while Scoot is busy (docs/keyboard.md "The live view"): Node learns of it
 * from SIGWINCH, and its loop runs due timers before it handles the signal, so a spinner tick can
 * redraw the block first. Erased by the width Node last heard of, the block the terminal had
 * rewrapped onto more rows left one of them behind (a stale "running bash" line, seen one run in
 * four of the full suite with four workers). The Screen asks the terminal its width at each draw.
 * Driven on a real terminal (tmux) with the built Screen and a fixture that blocks across the
 * resize; the control reads the stale width and shows the stale line.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { builtFile } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { hasTmux, openTerminal, type Terminal } from "../helpers/terminal.js";

const scene = useScene({ project: "scoot-resize-mid-draw-" });
const fixture = fileURLToPath(new URL("../fixtures/view/resize-mid-draw.mjs", import.meta.url));
let term: Terminal | undefined;
afterEach(async () => {
  await term?.close();
  term = undefined;
});

/** The block's first lines on the screen once the redraw after the signal is there. */
async function statusLinesAfterResize(how: "live" | "stale"): Promise<string[]> {
  builtFile("cli/view/screen.js");
  const go = path.join(scene.project, `go-${how}`);
  term = await openTerminal([go, how], { cwd: scene.project, script: fixture, width: 120, height: 40 });
  await term.waitFor("STATUS drawn first");
  await term.resize(80, 24);
  fs.writeFileSync(go, "");
  const screen = await term.waitFor("STATUS after the signal");
  return screen.split("\n").filter((l) => l.startsWith("STATUS"));
}

describe.skipIf(!hasTmux)("a redraw before the resize's signal is handled", () => {
  it("leaves no row of the block behind: the width is asked of the terminal", async () => {
    expect(await statusLinesAfterResize("live")).toEqual(["STATUS after the signal"]);
  });

  it("the control: by the width Node last heard of, a row of the earlier block stays", async () => {
    expect(await statusLinesAfterResize("stale")).toEqual(["STATUS drawn first", "STATUS after the signal"]);
  });
});
