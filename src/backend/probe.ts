/**
 * `scoot doctor`'s backend check: one GET `<base_url>/models` under a short deadline, no retries,
 * so a dead or misconfigured backend is reported in seconds with the same one-line errors as a run.
 */
import type { Config } from "../config/schema.js";
import type { Result } from "../core/types.js";
import { backendError, httpMessage, protocolMessage, transportError } from "./errors.js";
import { exchange } from "./transport.js";
import type { BackendError } from "./types.js";
import { displayUrl, joinUrl, listsModel, parseModelList, serverMessage } from "./wire.js";

export interface ProbeResult {
  url: string;
  /** Models the server lists. */
  models: number;
  /** Their ids, in the server's order (empty ids dropped). */
  ids: string[];
  /** Whether backend.model is among them (servers that load models on demand may not list it). */
  hasModel: boolean;
  latencyMs: number;
}

/**
 * For `doctor`: a one-line detail ("3 models listed, qwen2.5 among them") or the one-line error
 * (redacted, never the token).
 */
export async function probeBackend(
  config: Config["backend"],
  token: string | undefined,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Result<string, string>> {
  const r = await probeBackendInfo(config, token, timeoutMs, signal);
  if (!r.ok) return { ok: false, error: r.error.message };
  const { models, hasModel, latencyMs } = r.value;
  const listed = `${models} model${models === 1 ? "" : "s"} listed`;
  const which = hasModel ? `${config.model} among them` : `backend.model ${config.model} not among them`;
  return { ok: true, value: `${listed}, ${which} (${latencyMs} ms)` };
}

/** The same probe with structured results and error kinds. */
export async function probeBackendInfo(
  config: Config["backend"],
  token: string | undefined,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Result<ProbeResult, BackendError>> {
  const url = joinUrl(config.base_url, "models");
  const shown = url.ok ? displayUrl(url.value) : config.base_url;
  const fail = (kind: BackendError["kind"], message: string, status?: number) =>
    ({ ok: false, error: backendError(kind, shown, message, token, status) }) as const;
  if (!url.ok) return fail("config", url.error);

  const r = await exchange({
    method: "GET",
    url: url.value,
    headers: {
      accept: "application/json",
      "user-agent": "scoot",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    timeoutMs,
    signal,
    caFile: config.ca_file,
  });
  if (!r.ok) {
    return {
      ok: false,
      error: transportError(r.error, { url: shown, what: "a model list", timeoutMs, attempts: 1, token }),
    };
  }
  const res = r.value;
  if (res.status < 200 || res.status >= 300) {
    const endpoint = { baseUrl: config.base_url, path: "models" };
    return fail(
      "http",
      httpMessage(shown, res.status, serverMessage(res.body), 1, false, endpoint),
      res.status,
    );
  }
  const list = parseModelList(res.body);
  if (!list.ok) return fail("protocol", protocolMessage(shown, "a model list", list.error), res.status);
  return {
    ok: true,
    value: {
      url: shown,
      models: list.value.length,
      ids: list.value.filter((id) => id !== ""),
      hasModel: listsModel(list.value, config.model),
      latencyMs: res.latencyMs,
    },
  };
}
