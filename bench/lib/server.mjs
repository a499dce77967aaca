/**
 * A zero-delay scripted chat-completions server for benchmarks. It stamps when each reply
 * was written and when each request arrived, so the gap between a reply and the next
 * request is the client's own cost for that turn.
 */
import http from "node:http";

export async function startBenchServer(replies) {
  let next = 0;
  const stamps = []; // { arrived, replied }
  const bodies = [];
  const server = http.createServer((req, res) => {
    const arrived = performance.now();
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.url.endsWith("/models")) {
        res.end(JSON.stringify({ data: [{ id: "bench" }] }));
        return;
      }
      if (req.method !== "POST") {
        // Context-window discovery (GET /props, /api/ps, ...): not a turn, and no window to report.
        res.writeHead(404, { "content-type": "application/json" });
        res.end('{"error":"not found"}');
        return;
      }
      bodies.push(Buffer.concat(chunks).toString("utf8"));
      const text = replies[Math.min(next, replies.length - 1)];
      next += 1;
      const body = JSON.stringify({
        id: "x",
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      });
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body, () => stamps.push({ arrived, replied: performance.now() }));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    stamps,
    bodies,
    reset(newReplies) {
      next = 0;
      stamps.length = 0;
      bodies.length = 0;
      if (newReplies) replies = newReplies;
    },
    /** Gaps between a reply and the following request, in ms. */
    gaps() {
      const out = [];
      for (let i = 1; i < stamps.length; i++) out.push(stamps[i].arrived - stamps[i - 1].replied);
      return out;
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  };
}
