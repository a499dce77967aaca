/** The one stop controller (src/core/stop.ts): first request stops, the second aborts again. */
import { describe, expect, it } from "vitest";
import { createStopControl } from "../../src/core/stop.js";

describe("createStopControl", () => {
  it("the first request aborts stop, the second again; hooks run before each abort", () => {
    const seen: string[] = [];
    const control = createStopControl({
      signals: [],
      onFirst: (why) => seen.push(`first ${why} ${control.stop.aborted}`),
      onAgain: (why) => seen.push(`again ${why} ${control.again.aborted}`),
    });
    expect(control.reason()).toBeUndefined();
    control.request("SIGTERM");
    expect(control.stop.aborted).toBe(true);
    expect(control.again.aborted).toBe(false);
    expect((control.stop.reason as Error).message).toBe("SIGTERM");
    control.request("SIGINT");
    control.request("SIGINT");
    expect(control.again.aborted).toBe(true);
    expect(control.reason()).toBe("SIGTERM");
    expect(seen).toEqual(["first SIGTERM false", "again SIGINT false", "again SIGINT true"]);
  });

  it("carries the abort reason the command names", () => {
    const control = createStopControl({ signals: [], error: () => new Error("interrupted") });
    control.request("SIGINT");
    expect((control.stop.reason as Error).message).toBe("interrupted");
  });

  it("a process signal is a request, until disposed", () => {
    const before = process.listenerCount("SIGUSR2");
    const control = createStopControl({ signals: ["SIGUSR2"] });
    expect(process.listenerCount("SIGUSR2")).toBe(before + 1);
    process.emit("SIGUSR2", "SIGUSR2");
    expect(control.reason()).toBe("SIGUSR2");
    control.dispose();
    expect(process.listenerCount("SIGUSR2")).toBe(before);
  });
});
