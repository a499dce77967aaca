/**
 * A scripted Responses API server (`POST /v1/responses`, streamed) for a peer that speaks only
 * that API (Codex, in bench/prefix.mjs). A reply is the assistant's text or
 * `{ toolCall: { name, arguments } }`, sent as one `function_call` output item; usage is the
 * request's bytes / 4, as bench/lib/usage-server.mjs reports it. A request that is not a turn
 * of the script (a title or a summary: no tools offered) gets a short text without using the
 * script up. Every turn's request body is kept, in order.
 */
import http from "node:http";
import { listenLoopback } from "./loopback.mjs";

/** Bytes per token for the usage this server reports (bench/lib/usage-server.mjs). */
const BYTES_PER_TOKEN = 4;

function item(reply, n) {
  if (typeof reply === "string")
    return {
      type: "message",
      id: `msg_${n}`,
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: reply, annotations: [] }],
    };
  return {
    type: "function_call",
    id: `fc_${n}`,
    call_id: `call_${n}`,
    name: reply.toolCall.name,
    arguments: JSON.stringify(reply.toolCall.arguments),
    status: "completed",
  };
}

export async function startResponsesServer(replies) {
  let next = 0;
  let n = 0;
  const bodies = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url.endsWith("/responses")) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
        return;
      }
      const raw = Buffer.concat(chunks).toString("utf8");
      const body = JSON.parse(raw);
      let reply = "Summary: the agent read and listed files of the bench tree.";
      if (Array.isArray(body.tools) && body.tools.length > 0) {
        bodies.push(raw);
        reply = replies[Math.min(next, replies.length - 1)];
        next += 1;
      }
      n += 1;
      const input = Math.ceil(Buffer.byteLength(raw) / BYTES_PER_TOKEN);
      const out = item(reply, n);
      const response = { id: `resp_${n}`, object: "response", status: "in_progress", output: [] };
      const usage = {
        input_tokens: input,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 16,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: input + 16,
      };
      const event = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.end(
        event("response.created", { response }) +
          event("response.output_item.added", { output_index: 0, item: out }) +
          event("response.output_item.done", { output_index: 0, item: out }) +
          event("response.completed", {
            response: { ...response, status: "completed", output: [out], usage },
          }),
      );
    });
  });
  const loopback = await listenLoopback(server);
  return {
    ...loopback,
    bodies,
    reset(newReplies) {
      next = 0;
      bodies.length = 0;
      replies = newReplies;
    },
  };
}
