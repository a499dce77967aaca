/**
 * `scoot acp` and a message over the line cap (docs/editors.md "Editors (ACP)"): the SDK alone ends
 * the connection and the agent exits 0 with nothing said. The built CLI must answer the
 * request with a JSON-RPC error, say so on stderr, and keep serving the next request.
 */
import { expect, it } from "vitest";
import { collect, spawnCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";

const scene = useScene({ home: "scoot-acp-cap-" });

const MIB = 1024 * 1024;

it("a 33 MiB line gets a JSON-RPC error and a stderr line; the next request is still answered", async () => {
  const child = spawnCli(["acp"], { home: scene.home });
  const big = `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"pad":"${"a".repeat(33 * MIB)}"}}\n`;
  child.stdin!.write(big);
  const next = `${JSON.stringify({ jsonrpc: "2.0", id: 8, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } })}\n`;
  const r = await collect(child, { input: next, timeoutMs: 60_000 });
  const replies = r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: number; error?: { code: number; message: string }; result?: unknown });
  const dropped = replies.find((m) => m.id === 7);
  expect(dropped?.error?.code).toBe(-32600);
  expect(dropped?.error?.message).toMatch(/over the 33554432-byte line limit/);
  expect(replies.find((m) => m.id === 8)?.result).toBeDefined();
  expect(r.stderr).toMatch(
    /a message of \d+ bytes is over the 33554432-byte line limit; dropped \(request id 7/,
  );
});

it("a 33 MiB line with no request id still gets a stderr line, never a silent exit 0", async () => {
  const child = spawnCli(["acp"], { home: scene.home });
  child.stdin!.write(`${"x".repeat(33 * MIB)}\n`);
  const r = await collect(child, { input: "", timeoutMs: 60_000 });
  expect(r.stderr).toMatch(/over the 33554432-byte line limit; dropped\. Fix: send smaller messages/);
});
