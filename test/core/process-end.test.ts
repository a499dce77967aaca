/**
 * The one way the process ends (src/core/process-end.ts): main.ts is the only module that
 * calls process.exit; everything else registers what to settle or asks main to end.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { endProcess, onProcessEnd, settleBeforeExit } from "../../src/core/process-end.js";
import { builtFile } from "../helpers/cli.js";

const SRC = path.resolve(import.meta.dirname, "../../src");

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith(".ts") ? [p] : [];
  });
}

describe("process end", () => {
  const savedExitCode = process.exitCode;
  afterEach(() => {
    process.exitCode = savedExitCode;
  });

  it("no module but main.ts calls process.exit", () => {
    // token-command.ts holds the source of a separate child-process script as a string.
    const allowed = new Set(["main.ts", path.join("config", "token-command.ts")]);
    const callers = sourceFiles(SRC)
      .filter((f) => !allowed.has(path.relative(SRC, f)))
      .filter((f) => /process\.exit\s*\(/.test(fs.readFileSync(f, "utf8")))
      .map((f) => path.relative(SRC, f));
    expect(callers).toEqual([]);
  });

  it("every settle step runs, even after one that throws", () => {
    const ran: string[] = [];
    onProcessEnd(() => {
      ran.push("first");
      throw new Error("a log that cannot be closed");
    });
    onProcessEnd(() => ran.push("second"));
    settleBeforeExit();
    expect(ran).toEqual(["first", "second"]);
  });

  it("without main, ending the process only sets the exit code", () => {
    endProcess(130);
    expect(process.exitCode).toBe(130);
  });

  it("a second copy of the module (the entry and the app are bundled apart) shares the state", async () => {
    const copy = builtFile("core/process-end.js");
    const other = (await import(copy)) as typeof import("../../src/core/process-end.js");
    let settled = 0;
    other.onProcessEnd(() => {
      settled += 1;
    });
    settleBeforeExit();
    expect(settled).toBe(1);
  });
});
