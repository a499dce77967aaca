/**
 * `scoot acp` over the official ACP SDK (docs/editors.md "Editors (ACP)"). The SDK is imported here
 * only, dynamically, so no other command loads it. stdout carries the protocol alone; every
 * log line goes to stderr. Every string sent to the editor passes the secret redactor, like
 * every other output of Scoot.
 */
import { Readable, Writable } from "node:stream";
import type { AgentContext, SessionUpdate } from "@agentclientprotocol/sdk";
import { redactDeep } from "../serve/protocol.js";
import { availableCommands } from "./commands.js";
import type { EditorLink } from "./editor-link.js";
import { capAcpLines } from "./line-cap.js";
import { MODEL_CONFIG_ID, MODEL_LIST_WAIT_MS } from "./models.js";
import { ACP_ERROR, AcpFailure, type AcpSessions, MODE_CONFIG_ID } from "./sessions.js";

/** How much of an editor's error data is quoted. */
const CLIENT_ERROR_DATA_CHARS = 300;

/**
 * An editor's JSON-RPC error in words: its message and what its data says (the SDK answers a
 * handler's exception as "Internal error" with the exception's text in `data.details`).
 */
export function clientErrorText(e: unknown): string {
  const message = (e as Error)?.message ?? String(e);
  const data = (e as { data?: unknown })?.data;
  if (data === undefined || data === null) return message;
  const details = (data as { details?: unknown }).details;
  const said = typeof details === "string" ? details : JSON.stringify(data);
  if (said === undefined || said === "{}" || said === "") return message;
  return `${message}: ${said.length > CLIENT_ERROR_DATA_CHARS ? `${said.slice(0, CLIENT_ERROR_DATA_CHARS)}…` : said}`;
}

export interface AcpServerOptions {
  sessions: AcpSessions;
  version: string;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  log: (line: string) => void;
  /** Called after each prompt turn that ran (whatever its stop reason). */
  promptRan?: () => void;
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

  /** Whether the client offered `fs/read_text_file` / `fs/write_text_file` at `initialize`. */
  let clientReadsFiles = false;
  let clientWritesFiles = false;
  /**
   * The editor as a prompt's tools see it (src/acp/editor-link.ts). A permission request goes
   * out only once every update sent before it is written: the `tool_call` it names comes first.
   */
  const linkFor = (client: AgentContext, sessionId: string, flush: () => Promise<void>): EditorLink => ({
    ...(clientWritesFiles
      ? {
          writeTextFile: async (path: string, content: string, signal: AbortSignal) => {
            await flush();
            try {
              await client.request(
                acp.methods.client.fs.writeTextFile,
                { sessionId, path, content },
                { cancellationSignal: signal, stopWaitingOnCancel: true },
              );
            } catch (e) {
              throw new Error(clientErrorText(e));
            }
          },
        }
      : {}),
    ...(clientReadsFiles
      ? {
          readTextFile: async (path: string, signal: AbortSignal) =>
            (
              await client.request(
                acp.methods.client.fs.readTextFile,
                { sessionId, path },
                { cancellationSignal: signal, stopWaitingOnCancel: true },
              )
            ).content,
        }
      : {}),
    requestPermission: async (toolCall, options, signal) => {
      await flush();
      return (
        await client.request(
          acp.methods.client.session.requestPermission,
          { sessionId, toolCall: redactDeep(toolCall) as typeof toolCall, options },
          { cancellationSignal: signal, stopWaitingOnCancel: true },
        )
      ).outcome;
    },
  });
  /** Runs `f` once the current request's answer is on its way (the editor knows the session). */
  const afterAnswer = (f: () => void) => setImmediate(f);
  /**
   * What an editor learns about a session once it opens: the commands it can type, then the
   * options again when the server's model list (read meanwhile) changed them.
   */
  const announce = (send: (u: SessionUpdate) => void, sessionId: string, modelsChanged: Promise<boolean>) => {
    send({ sessionUpdate: "available_commands_update", availableCommands: availableCommands() });
    void modelsChanged.then((changed) => {
      if (!changed) return;
      try {
        send({ sessionUpdate: "config_option_update", configOptions: sessions.configOptions(sessionId) });
      } catch {
        // The session was closed meanwhile: nobody to tell.
      }
    });
  };
  /**
   * The model list, awaited while a session opens and at most MODEL_LIST_WAIT_MS more: a client
   * that picks its model from the session's answer (acpx --model) finds the server's list there.
   */
  const modelsRead = (models: Promise<boolean>) => {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, MODEL_LIST_WAIT_MS);
    });
    return Promise.race([models.then(() => undefined), bound]).finally(() => clearTimeout(timer));
  };
  /** Every mode change, whoever made it, is told to the editor before the request answers. */
  const modeChanged = async (client: unknown, sessionId: string) => {
    const u = updater(client as never, sessionId);
    u.send({ sessionUpdate: "current_mode_update", currentModeId: sessions.modeOf(sessionId) });
    u.send({ sessionUpdate: "config_option_update", configOptions: sessions.configOptions(sessionId) });
    await u.flush();
  };

  const app = acp
    .agent({ name: "scoot" })
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      clientReadsFiles = params.clientCapabilities?.fs?.readTextFile === true;
      clientWritesFiles = params.clientCapabilities?.fs?.writeTextFile === true;
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentInfo: { name: "scoot", title: "Scoot", version: opts.version },
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: false, audio: false, embeddedContext: true },
          mcpCapabilities: { http: true, sse: true },
          // session/delete and session/fork are not offered: a client never gets "Method not found".
          sessionCapabilities: { list: {}, close: {}, resume: {} },
        },
        authMethods: [],
      };
    })
    .onRequest(acp.methods.agent.authenticate, () => ({}))
    .onRequest(acp.methods.agent.session.new, async ({ params, client }) => {
      try {
        const models = sessions.refreshModels();
        const [r] = await Promise.all([
          sessions.create(params.cwd, params.mcpServers ?? []),
          modelsRead(models),
        ]);
        afterAnswer(() => announce(updater(client as never, r.sessionId).send, r.sessionId, models));
        return { ...r, configOptions: sessions.configOptions(r.sessionId) };
      } catch (e) {
        return toRpc(e);
      }
    })
    .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
      const u = updater(client as never, params.sessionId);
      try {
        const models = sessions.refreshModels();
        const [r] = await Promise.all([
          sessions.load(params.sessionId, params.cwd, params.mcpServers ?? [], u.send),
          modelsRead(models),
        ]);
        await u.flush();
        afterAnswer(() => announce(u.send, params.sessionId, models));
        return { ...r, configOptions: sessions.configOptions(params.sessionId) };
      } catch (e) {
        await u.flush();
        return toRpc(e);
      }
    })
    .onRequest(acp.methods.agent.session.resume, async ({ params, client }) => {
      // session/load without the replay: the client already shows the conversation.
      try {
        const models = sessions.refreshModels();
        const [r] = await Promise.all([
          sessions.load(params.sessionId, params.cwd, params.mcpServers ?? [], undefined),
          modelsRead(models),
        ]);
        afterAnswer(() =>
          announce(updater(client as never, params.sessionId).send, params.sessionId, models),
        );
        return { ...r, configOptions: sessions.configOptions(params.sessionId) };
      } catch (e) {
        return toRpc(e);
      }
    })
    .onRequest(acp.methods.agent.session.setMode, async ({ params, client }) => {
      try {
        const changed = await sessions.setMode(params.sessionId, params.modeId);
        if (changed) await modeChanged(client, params.sessionId);
        return {};
      } catch (e) {
        return toRpc(e);
      }
    })
    .onRequest(acp.methods.agent.session.setConfigOption, async ({ params, client }) => {
      try {
        const known = [MODE_CONFIG_ID, MODEL_CONFIG_ID];
        if (!known.includes(params.configId) || typeof params.value !== "string")
          throw new AcpFailure(
            ACP_ERROR.invalidParams,
            `unknown config option "${params.configId}" (Scoot offers ${known.map((k) => `"${k}"`).join(", ")}, each a value id)`,
          );
        if (params.configId === MODEL_CONFIG_ID) {
          if (sessions.setModel(params.sessionId, params.value)) {
            const u = updater(client as never, params.sessionId);
            u.send({
              sessionUpdate: "config_option_update",
              configOptions: sessions.configOptions(params.sessionId),
            });
            await u.flush();
          }
        } else if (await sessions.setMode(params.sessionId, params.value))
          await modeChanged(client, params.sessionId);
        return { configOptions: sessions.configOptions(params.sessionId) };
      } catch (e) {
        return toRpc(e);
      }
    })
    .onRequest(acp.methods.agent.session.list, ({ params }) => {
      try {
        return sessions.list(params.cwd ?? undefined, params.cursor ?? undefined);
      } catch (e) {
        return toRpc(e);
      }
    })
    .onRequest(acp.methods.agent.session.close, async ({ params }) => {
      try {
        await sessions.close(params.sessionId);
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
        const stopReason = await sessions.prompt(
          params.sessionId,
          params.prompt,
          u.send,
          linkFor(client as AgentContext, params.sessionId, u.flush),
        );
        opts.promptRan?.();
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
