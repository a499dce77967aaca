import http from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { type ScriptedServer, startScriptedServer } from "../helpers/scripted-server.js";

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A plain request with its own connection, so the server's behaviour is seen raw. */
function post(url: string, body: unknown): Promise<{ status: number; json: unknown } | { error: string }> {
  return new Promise((resolve) => {
    const data = JSON.stringify(body);
    const req = http.request(
      url,
      {
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json", "content-length": data.length },
      },
      (res) => {
        let text = "";
        res.on("data", (c) => {
          text += c;
        });
        res.on("end", () => {
          let json: unknown = text;
          try {
            json = JSON.parse(text);
          } catch {}
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    req.end(data);
  });
}

describe("scripted server", () => {
  it("fails loudly when the script is exhausted", async () => {
    server = await startScriptedServer();
    const r = await post(`${server.url}/chat/completions`, { model: "m", messages: [] });
    expect(r).toMatchObject({
      status: 500,
      json: { error: { message: expect.stringContaining("script exhausted") } },
    });
  });

  it("answers each path in its own shape", async () => {
    server = await startScriptedServer([{ reply: "chat text" }, { reply: { a: 1 } }]);
    const chat = await post(`${server.url}/chat/completions`, { model: "m", messages: [] });
    const resp = await post(`${server.url}/responses`, { model: "m", input: [] });
    expect(chat).toMatchObject({
      status: 200,
      json: {
        model: "m",
        choices: [{ message: { content: "chat text" } }],
        usage: { total_tokens: expect.any(Number) },
      },
    });
    expect(resp).toMatchObject({
      status: 200,
      json: { object: "response", output: [{ content: [{ type: "output_text", text: '{"a":1}' }] }] },
    });
    expect(server.requests.map((r) => r.path)).toEqual(["/v1/chat/completions", "/v1/responses"]);
  });

  it("rejectFormat only rejects requests that carry a format, else passes to the next item", async () => {
    server = await startScriptedServer([{ rejectFormat: true }, { reply: "plain" }, { rejectFormat: true }]);
    const plain = await post(`${server.url}/chat/completions`, { model: "m", messages: [] });
    expect(plain).toMatchObject({ status: 200 });
    const formatted = await post(`${server.url}/responses`, {
      model: "m",
      text: { format: { type: "json_object" } },
    });
    expect(formatted).toMatchObject({
      status: 400,
      json: { error: { message: expect.stringContaining("not supported") } },
    });
  });

  it("function items see the recorded request; push adds items later", async () => {
    server = await startScriptedServer([
      (req) => ({ reply: `echo ${(req.body as { model: string }).model}` }),
    ]);
    server.push({ status: 429, retryAfter: 7 });
    const first = await post(`${server.url}/chat/completions`, { model: "m1", messages: [] });
    expect(first).toMatchObject({ json: { choices: [{ message: { content: "echo m1" } }] } });
    const second = await post(`${server.url}/chat/completions`, { model: "m1", messages: [] });
    expect(second).toMatchObject({ status: 429 });
    expect(server.remaining()).toBe(0);
  });

  it("drop destroys the socket; close() ends hanging requests", async () => {
    server = await startScriptedServer([{ drop: true }, { hang: true }]);
    expect(await post(`${server.url}/chat/completions`, {})).toEqual({ error: "ECONNRESET" });
    const hanging = post(`${server.url}/chat/completions`, {});
    while (server.requests.length < 2) await new Promise((r) => setTimeout(r, 10));
    await server.close();
    expect(await hanging).toEqual({ error: "ECONNRESET" });
    server = undefined;
  });
});
