// The floor of a trivial run (bench/startup.mjs): what any durable agent must do for one request
// whose reply is the final answer, and nothing else. It loads node:http and node:crypto, appends
// a synced record of the request (with its SHA-256, as an audit chain would), posts the request,
// parses the reply and the step in it, appends a synced record of the answer and prints it.
// CommonJS, as Scoot's entry: on Node 24 an ES import of node:http also loads the fetch and
// WebSocket stack (docs/benchmarks.md), which would make the floor 1.4x `node -e 0`'s RSS.
// Usage: bare-trivial.cjs URL LOG
const { createHash } = require("node:crypto");
const fs = require("node:fs");
const http = require("node:http");

const [url, log] = process.argv.slice(2);
const body = JSON.stringify({
  model: "bench",
  messages: [
    { role: "system", content: "You are an agent. ".repeat(250) },
    { role: "user", content: "trivial goal" },
  ],
});
const fd = fs.openSync(log, "a");
const record = (entry) => {
  fs.writeSync(fd, `${JSON.stringify(entry)}\n`);
  fs.fdatasyncSync(fd);
};
record({ kind: "request", sha256: createHash("sha256").update(body).digest("hex") });
const req = http.request(
  new URL(`${url}/chat/completions`),
  {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
  },
  (res) => {
    const chunks = [];
    res.on("data", (c) => chunks.push(c));
    res.on("end", () => {
      const reply = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const step = JSON.parse(reply.choices[0].message.content);
      record({ kind: "final", answer: step.action_input });
      process.stdout.write(`${step.action_input}\n`);
    });
  },
);
req.on("error", (e) => {
  console.error(e.message);
  process.exitCode = 1;
});
req.end(body);
