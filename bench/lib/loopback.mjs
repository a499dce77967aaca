/**
 * A scripted benchmark server's loopback side: listening on a free port of 127.0.0.1, its
 * OpenAI-style base URL, and a close that does not wait for kept-alive connections.
 */
export async function listenLoopback(server) {
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  };
}
