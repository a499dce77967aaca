/** The ACP side of a test editor: the built `scoot acp` child's stdio as the SDK's stream, and its shutdown. */
import type { ChildProcess } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

/** The agent's stdin and stdout as the SDK's newline-delimited JSON stream. */
export function agentStream(child: ChildProcess): acp.Stream {
  return acp.ndJsonStream(
    Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
  );
}

/** Closes the client, then ends the agent's stdin (how an editor leaves) and waits for it to exit. */
export async function closeAgent(
  connection: acp.ClientConnection | undefined,
  child: ChildProcess | undefined,
): Promise<void> {
  connection?.close();
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((r) => child.on("close", r));
  child.stdin!.end();
  await closed;
}
