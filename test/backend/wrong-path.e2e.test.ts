/**
 * A base URL where no OpenAI-compatible server answers (docs/reliability.md "Backend errors"),
 * through the built CLI: a web server's 404 page or a 501 is not retried; the one line names the
 * URL, the status, a short excerpt of the page and where OpenAI-compatible servers answer.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-wrong-path-", project: "scoot-wrong-path-project-" });

const PAGE =
  "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n" +
  `<hr><center>nginx</center>\r\n${"<!-- a padding comment to make the page long -->\r\n".repeat(50)}</body>\r\n</html>\r\n`;

describe("a server that is not OpenAI-compatible at the URL", () => {
  it("404 from a base URL without /v1: one request, exit 1, the excerpt and the URL to use", async () => {
    scene.server = await startScriptedServer([], {
      routes: { "POST /chat/completions": () => ({ status: 404, body: PAGE, contentType: "text/html" }) },
    });
    const root = scene.server.url.replace(/\/v1$/, "");
    const r = await runCli(["-e", "hello", "--retries", "3"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: root },
    });
    expect(r.code, r.stderr).toBe(1);
    expect(scene.server.completions()).toHaveLength(0);
    expect(scene.server.requests.filter((q) => q.method === "POST")).toHaveLength(1);
    expect(r.stderr).toContain(
      `the backend at ${root}/chat/completions answered 404 Not Found: 404 Not Found 404 Not Found nginx — is backend.base_url right? OpenAI-compatible servers answer at ${root}/v1/chat/completions: add /v1 (base_url = "${root}/v1")`,
    );
    expect(r.stderr).not.toContain("<");
    expect(r.stderr).not.toContain("attempts");
  });

  it("501 at /v1/chat/completions is not retried as a server failure", async () => {
    scene.server = await startScriptedServer([], {
      routes: {
        "POST /v1/chat/completions": () => ({
          status: 501,
          body: "Not Implemented\n",
          contentType: "text/plain",
        }),
      },
    });
    const r = await runCli(["-e", "hello", "--retries", "3"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(r.code, r.stderr).toBe(1);
    expect(scene.server.requests.filter((q) => q.method === "POST")).toHaveLength(1);
    expect(r.stderr).toContain(
      `answered 501 Not Implemented: Not Implemented — is backend.base_url right? OpenAI-compatible servers answer at …/v1/chat/completions (check backend.api too)`,
    );
  });
});
