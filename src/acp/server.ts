/**
 * `scoot acp` over the official ACP SDK (README "Editors (ACP)"). The SDK is imported here
 * only, dynamically, so no other command loads it. stdout carries the protocol alone; every
 * log line goes to stderr. Every string sent to the editor passes the secret redactor, like
 * every other output of Scoot.
 */
import { Readable, Writable } from "node:stream";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { redactDeep } from "../serve/protocol.js";
import { capAcpLines } from "./line-cap.js";
import { ACP_ERROR, AcpFailure, type AcpSessions } from "./sessions.js";

export interface AcpServerOptions {
  sessions: AcpSessions;
  version: string;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  log: (line: string) => void;
}

/** Serves until the client closes the connection (stdin ends). */
export async function serveAcp(opts: AcpServerOptions): Promise<void> {
  const acp = await import("@agentclientprotocol/sdk");
  const { sessions } = opts;
  const toRpc = (e: unknown): never => {
    if (e instanceof AcpFailure) throw new acp.RequestError(e.code, e.message, e.data);
    opts.log(`error: ${(e as Error)?.stack ?? String(e)}`);
    throw new acp.RequestError(ACP_ERROR.internal, (e as Error)?.message ?? String(e));
  };
  /** Sends updates in order; the caller awaits `flush` before answering the request. */
  const updater = (
    client: { notify: (m: "session/update", p: never) => Promise<void> },
    sessionId: string,
  ) => {
    let chain: Promise<void> = Promise.resolve();
    const send = (update: SessionUpdate) => {
      const params = { sessionId, update: redactDeep(update) as SessionUpdate };
      chain = chain
        .then(() => client.notify("session/update", params as never))
        .catch((e: unknown) => {
          opts.log(`warning: session/update not delivered: ${(e as Error)?.message ?? String(e)}`);
        });
    };
    return { send, flush: () => chain };
  };

  const app = acp
    .agent({ name: "scoot" })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentInfo: { name: "scoot", title: "Scoot", version: opts.version },
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: true },
      },
      authMethods: [],
    }))
    .onRequest(acp.methods.agent.authenticate, () => ({}))
    .onRequest(acp.methods.agent.session.new, async ({ params }) => {
      try {
        return await sessions.create(params.cwd, params.mcpServers ?? []);
      } catch (e) {
        return toRpc(e);
      }
    })
    .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
      const u = updater(client as never, params.sessionId);
      try {
        const r = await sessions.load(params.sessionId, params.cwd, params.mcpServers ?? [], u.send);
        await u.flush();
        return r;
      } catch (e) {
        await u.flush();
        return toRpc(e);
      }
    })
    .onRequest(acp.methods.agent.session.setMode, async ({ params }) => {
      try {
        await sessions.setMode(params.sessionId, params.modeId);
        return {};
      } catch (e) {
        return toRpc(e);
      }
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client, signal }) => {
      const u = updater(client as never, params.sessionId);
      // A JSON-RPC `$/cancel_request` for this request cancels like session/cancel.
      const onAbort = () => sessions.cancel(params.sessionId);
      signal.addEventListener("abort", onAbort, { once: true });
      try {
        const stopReason = await sessions.prompt(params.sessionId, params.prompt, u.send);
        await u.flush();
        return { stopReason };
      } catch (e) {
        await u.flush();
        return toRpc(e);
      } finally {
        signal.removeEventListener("abort", onAbort);
      }
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      sessions.cancel(params.sessionId);
    });

  // A line over the cap is answered and dropped here: the SDK would end the connection in silence.
  const input = capAcpLines({
    input: opts.input as Readable,
    answer: (line) => opts.output.write(line),
    log: opts.log,
  });
  const stream = acp.ndJsonStream(
    Writable.toWeb(opts.output as Writable) as WritableStream<Uint8Array>,
    Readable.toWeb(input) as ReadableStream<Uint8Array>,
  );
  const connection = app.connect(stream);
  await connection.closed;
}
