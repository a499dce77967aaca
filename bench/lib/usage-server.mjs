/**
 * A scripted chat-completions server that reports usage as a local server would: the prompt's
 * tokens counted as its bytes / 4 (bench/prefix.mjs). Agents that compact by the usage they are
 * told (pi) see their context grow; a request without tools is a summary request (pi asks the
 * model to summarize what it compacts) and gets a short summary without using up the script.
 * Replies are the assistant's text or `{ toolCall: { name, arguments } }`; a request that asks
 * to stream gets SSE chunks, any other plain JSON. Every request body is kept, in order.
 */
import http from "node:http";
import { listenLoopback } from "./loopback.mjs";

/** Bytes per token for the usage this server reports: about what current tokenizers give for code and English. */
const BYTES_PER_TOKEN = 4;

function message(reply) {
  if (typeof reply === "string") return { role: "assistant", content: reply };
  const fn = { name: reply.toolCall.name, arguments: JSON.stringify(reply.toolCall.arguments) };
  return {
    role: "assistant",
    content: null,
    tool_calls: [{ id: `call_${Math.random().toString(36).slice(2, 10)}`, type: "function", function: fn }],
  };
}

function sse(msg, usage) {
  const chunk = (delta, finish) =>
    `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const calls = msg.tool_calls?.map((c, index) => ({ index, ...c }));
  const delta = calls ? { role: "assistant", content: null, tool_calls: calls } : msg;
  const tail = `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [], usage })}\n\ndata: [DONE]\n\n`;
  return `${chunk(delta, null)}${chunk({}, calls ? "tool_calls" : "stop")}${tail}`;
}

export async function startUsageServer(replies) {
  let next = 0;
  const bodies = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST") {
        // Context-window discovery (GET /models, /props, /api/ps, ...): nothing to report.
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
        return;
      }
      const raw = Buffer.concat(chunks).toString("utf8");
      const body = JSON.parse(raw);
      const summary = Array.isArray(body.tools) === false && replies.some((r) => typeof r !== "string");
      let reply = "Summary: the agent read and listed files of the bench tree.";
      if (!summary) {
        bodies.push(raw);
        reply = replies[Math.min(next, replies.length - 1)];
        next += 1;
      }
      const prompt = Math.ceil(Buffer.byteLength(raw) / BYTES_PER_TOKEN);
      const usage = { prompt_tokens: prompt, completion_tokens: 16, total_tokens: prompt + 16 };
      const msg = message(reply);
      if (body.stream === true) {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        res.end(sse(msg, usage));
        return;
      }
      const finish = msg.tool_calls ? "tool_calls" : "stop";
      const out = JSON.stringify({
        id: "x",
        object: "chat.completion",
        choices: [{ index: 0, message: msg, finish_reason: finish }],
        usage,
      });
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(out) });
      res.end(out);
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
