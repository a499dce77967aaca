/** The connect-time lookup on its own: both callback shapes Node's net uses, and the refusal. */
import { describe, expect, it } from "vitest";
import { checkedLookup, INTERNAL_ADDRESS_CODE } from "../../src/net/checked-lookup.js";

type Answer = { err: NodeJS.ErrnoException | null; address?: unknown; family?: unknown };

function ask(host: string, all: boolean): Promise<Answer> {
  return new Promise((resolve) => {
    const lookup = checkedLookup() as unknown as (
      h: string,
      o: { all?: boolean; family?: number },
      cb: (err: NodeJS.ErrnoException | null, address?: unknown, family?: unknown) => void,
    ) => void;
    lookup(host, { all, family: 0 }, (err, address, family) => resolve({ err, address, family }));
  });
}

describe("checkedLookup", () => {
  it.each([false, true])("refuses a name that resolves to loopback (all=%s)", async (all) => {
    const r = await ask("localhost", all);
    expect(r.err?.code).toBe(INTERNAL_ADDRESS_CODE);
    expect(r.err?.message).toMatch(/^host localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
  });
  it("hands back exactly the checked address (single form)", async () => {
    const r = await ask("198.51.100.5", false);
    expect(r).toEqual({ err: null, address: "198.51.100.5", family: 4 });
  });
  it("hands back exactly the checked addresses (list form, used with autoSelectFamily)", async () => {
    const r = await ask("198.51.100.5", true);
    expect(r.err).toBeNull();
    expect(r.address).toEqual([{ address: "198.51.100.5", family: 4 }]);
  });
  it("passes resolver errors through unchanged", async () => {
    const r = await ask("no-such-host.invalid", false);
    expect(r.err?.code).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });
});
