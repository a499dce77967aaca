// The floor for a tool turn (issue 48): a bare loop doing what a durable agent must do per
// turn and nothing else. It builds the request from its history (Scoot's first request's
// messages, then each reply and observation appended), posts it over keep-alive node:http,
// parses the reply and the step in it, does the read the step asks for (file_read: the
// lines; grep: the file, line by line; glob: the directory), and appends the record of the
// call to an audit file with one fdatasync before the read (Scoot syncs its tool_call
// record before the effect starts: one fdatasync a turn, counted with strace) and the turn
// to a transcript, unsynced as Scoot's is. Usage: floor-client.mjs URL BODIES DIR
import fs from "node:fs";
import http from "node:http";
import path from "node:path";

const [url, bodiesFile, dir] = process.argv.slice(2);
const first = JSON.parse(fs.readFileSync(bodiesFile, "utf8").split("\n", 1)[0]);
const messages = first.messages;
const audit = fs.openSync(path.join(dir, "floor-audit.jsonl"), "a");
const transcript = fs.openSync(path.join(dir, "floor-transcript.jsonl"), "a");
const agent = new http.Agent({ keepAlive: true });
const target = new URL(`${url}/chat/completions`);
const post = (body) =>
  new Promise((resolve, reject) => {
    const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(body) };
    const req = http.request(target, { method: "POST", agent, headers }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
    });
    req.on("error", reject);
    req.end(body);
  });
for (;;) {
  const reply = await post(JSON.stringify({ ...first, messages }));
  const content = reply.choices[0].message.content;
  const step = JSON.parse(content);
  if (step.action === "final") break;
  const input = JSON.parse(step.action_input);
  fs.writeSync(audit, `${JSON.stringify({ kind: "tool_call", tool: step.action, input })}\n`);
  fs.fdatasyncSync(audit);
  const glob = step.action === "glob";
  const read = glob
    ? fs.readdirSync(path.dirname(input.pattern))
    : fs.readFileSync(input.path, "utf8").split("\n");
  const match = new RegExp(glob ? "\\.ts$" : (input.pattern ?? ""));
  const lines = read.filter((l, i) => (input.limit ? i < input.limit : match.test(l)));
  const observation = `Observation from ${step.action}:\n${lines.join("\n")}`;
  messages.push({ role: "assistant", content }, { role: "user", content: observation });
  fs.writeSync(transcript, `${JSON.stringify(messages.slice(-2))}\n`);
}
agent.destroy();
