// The baseline client: replays request bodies (JSON lines in a file, or one trivial body)
// over node:http with keep-alive, parsing each reply, as fast as it can.
import fs from "node:fs";
import http from "node:http";

const [url, bodiesFile] = process.argv.slice(2);
const bodies = bodiesFile
  ? fs.readFileSync(bodiesFile, "utf8").trim().split("\n")
  : [JSON.stringify({ model: "bench", messages: [{ role: "user", content: "hi" }] })];
const agent = new http.Agent({ keepAlive: true });
const target = new URL(`${url}/chat/completions`);
for (const body of bodies) {
  await new Promise((resolve, reject) => {
    const req = http.request(
      target,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          JSON.parse(Buffer.concat(chunks).toString("utf8"));
          resolve();
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
agent.destroy();
