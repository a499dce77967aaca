/**
 * Which context window the model really has (docs/context.md "Context window"). Local servers
 * run with whatever window the operator chose and cut an over-long prompt silently, so Scoot
 * asks the server once per process, under a short deadline, and never fails because of it:
 *
 * - vLLM: `GET <base>/models` → `data[].max_model_len`
 * - llama.cpp: `GET <root>/props` → `default_generation_settings.n_ctx` (the per-slot window in use)
 * - Ollama: `GET <root>/api/ps` → `models[].context_length` of the loaded model; when it is not
 *   loaded, `POST <root>/api/show` gives a Modelfile `num_ctx` or only the trained maximum, and
 *   Ollama's default load window is assumed
 * - LM Studio: `GET <root>/api/v0/models` → `loaded_context_length`, else `max_context_length`
 * - anything else: unknown, and the byte budget (agent.context_budget_bytes) alone applies.
 *
 * `<root>` is the base URL without its `/v1`. The probes run in parallel; the answer is cached
 * per base URL + model in `<home>/state/context-window.json` for a few minutes so `-e` runs do
 * not pay for it each time.
 */
import fs from "node:fs";
import path from "node:path";
import type { Config } from "../config/schema.js";
import { redact } from "../core/redact.js";
import type { Result } from "../core/types.js";
import { exchange, type HttpResponse, type TransportFailure } from "./transport.js";
import { displayUrl, joinUrl } from "./wire.js";

/** The whole discovery, all probes together: local servers answer in milliseconds. */
export const DISCOVERY_TIMEOUT_MS = 1_500;
/** How long a discovered window is trusted by later processes (Ollama unloads idle models after 5 min). */
export const CACHE_TTL_MS = 5 * 60 * 1000;
/** Entries kept in the cache file (one per base URL + model). */
const CACHE_MAX_ENTRIES = 32;
const CACHE_FILE = "context-window.json";
const CACHE_VERSION = 1;
/**
 * The window Ollama loads a model with when nothing sets it: its documented default is 4096 tokens
 * on machines with less than 24 GiB of VRAM (more on larger ones; older releases used 2048).
 * A client cannot see OLLAMA_CONTEXT_LENGTH, so this is an assumption and is said to be one.
 */
export const OLLAMA_DEFAULT_WINDOW = 4_096;
/** Windows outside this range are garbage, not a server's answer. */
const MIN_PLAUSIBLE_WINDOW = 128;
const MAX_PLAUSIBLE_WINDOW = 100_000_000;

export type Flavour = "vllm" | "llamacpp" | "ollama" | "lmstudio";

export type WindowSource =
  | "configured"
  | "vLLM max_model_len"
  | "llama.cpp n_ctx"
  | "Ollama loaded"
  | "Ollama num_ctx"
  | "Ollama default"
  | "LM Studio loaded"
  | "LM Studio max_context_length"
  | "unknown";

export interface ContextWindow {
  /** Tokens; undefined when unknown. */
  tokens?: number;
  source: WindowSource;
  flavour?: Flavour;
  /** Extra words for the user, e.g. "model not loaded; trained maximum 32768". */
  detail?: string;
  /** What went wrong on the way (a probe that hung or answered garbage), for --trace. */
  notes: string[];
  /** Read from the state cache rather than asked. */
  cached: boolean;
}

export interface DiscoverOptions {
  backend: Config["backend"];
  token?: string;
  /** `<home>/state`; undefined = no cache. */
  stateDir?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Doctor asks the server afresh (and refreshes the cache). */
  readCache?: boolean;
  now?: () => number;
}

/** `<root>`: the base URL without a trailing `/v1` (and without a trailing slash). */
export function rootUrl(baseUrl: string): string {
  return baseUrl.trim().replace(/\/+$/, "").replace(/\/v1$/, "");
}

/** How to give the model a larger window on this server. */
export function windowFix(flavour: Flavour | undefined, tokens: number): string {
  const n = Math.max(8_192, Math.ceil(tokens / 1_024) * 1_024);
  switch (flavour) {
    case "ollama":
      return `restart Ollama with OLLAMA_CONTEXT_LENGTH=${n} (or set num_ctx ${n} in the model's Modelfile)`;
    case "llamacpp":
      return `start llama-server with -c ${n} (per slot: -c is divided by --parallel)`;
    case "vllm":
      return `start vLLM with --max-model-len ${n}`;
    case "lmstudio":
      return `load the model in LM Studio with a context length of ${n} (lms load <model> --context-length ${n})`;
    default:
      return `give the model a window of ${n} tokens or more (Ollama: OLLAMA_CONTEXT_LENGTH, llama.cpp: -c, vLLM: --max-model-len)`;
  }
}

export function describeWindow(w: ContextWindow): string {
  if (w.tokens === undefined) return `unknown${w.detail ? ` (${w.detail})` : ""}`;
  return `${w.tokens} tokens (${w.source}${w.detail ? `; ${w.detail}` : ""})`;
}

// ---------------------------------------------------------------- cache

interface CacheEntry {
  tokens?: number;
  source: WindowSource;
  flavour?: Flavour;
  detail?: string;
  at: number;
}

const SOURCES: ReadonlySet<string> = new Set<WindowSource>([
  "configured",
  "vLLM max_model_len",
  "llama.cpp n_ctx",
  "Ollama loaded",
  "Ollama num_ctx",
  "Ollama default",
  "LM Studio loaded",
  "LM Studio max_context_length",
  "unknown",
]);
const FLAVOURS: ReadonlySet<string> = new Set<Flavour>(["vllm", "llamacpp", "ollama", "lmstudio"]);

function cacheKey(b: Config["backend"]): string {
  return `${b.api} ${b.base_url.trim()} ${b.model}`;
}

/** A corrupt or foreign cache file is ignored (and replaced on the next write), never an error. */
function readCacheFile(file: string): Record<string, CacheEntry> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return {};
  }
  if (typeof parsed !== "object" || parsed === null) return {};
  const p = parsed as { v?: unknown; entries?: unknown };
  if (p.v !== CACHE_VERSION || typeof p.entries !== "object" || p.entries === null) return {};
  const out: Record<string, CacheEntry> = {};
  for (const [k, raw] of Object.entries(p.entries as Record<string, unknown>)) {
    if (typeof raw !== "object" || raw === null) continue;
    const e = raw as Record<string, unknown>;
    if (typeof e.at !== "number" || !Number.isFinite(e.at)) continue;
    if (typeof e.source !== "string" || !SOURCES.has(e.source)) continue;
    if (e.tokens !== undefined && !plausible(e.tokens)) continue;
    if (e.flavour !== undefined && (typeof e.flavour !== "string" || !FLAVOURS.has(e.flavour))) continue;
    out[k] = {
      ...(typeof e.tokens === "number" ? { tokens: e.tokens } : {}),
      source: e.source as WindowSource,
      ...(typeof e.flavour === "string" ? { flavour: e.flavour as Flavour } : {}),
      ...(typeof e.detail === "string" ? { detail: e.detail.slice(0, 300) } : {}),
      at: e.at,
    };
  }
  return out;
}

/** Atomic: a reader sees the old file or the new one, never half of one. Failures are ignored. */
function writeCacheEntry(stateDir: string, key: string, entry: CacheEntry): void {
  const file = path.join(stateDir, CACHE_FILE);
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const entries = readCacheFile(file);
    entries[key] = entry;
    const kept = Object.entries(entries)
      .sort((a, b) => b[1].at - a[1].at)
      .slice(0, CACHE_MAX_ENTRIES);
    fs.writeFileSync(tmp, `${JSON.stringify({ v: CACHE_VERSION, entries: Object.fromEntries(kept) })}\n`, {
      mode: 0o600,
    });
    fs.renameSync(tmp, file);
  } catch {
    try {
      fs.rmSync(tmp, { force: true });
    } catch {
      // nothing more to clean
    }
  }
}

// ---------------------------------------------------------------- probes

type ProbeOutcome =
  /** The server answered in this flavour's shape with a window. */
  | { kind: "window"; w: Omit<ContextWindow, "notes" | "cached"> }
  /** The server answered, but not in this flavour's shape (404, another server's JSON). */
  | { kind: "absent" }
  /** No usable answer: timeout, network error, garbage in the right place. */
  | { kind: "failed"; note: string; reachable: boolean };

interface ProbeEnv {
  opts: DiscoverOptions;
  signal: AbortSignal;
  deadline: number;
  now: () => number;
}

function plausible(n: unknown): n is number {
  return (
    typeof n === "number" && Number.isInteger(n) && n >= MIN_PLAUSIBLE_WINDOW && n <= MAX_PLAUSIBLE_WINDOW
  );
}

function sameModel(a: unknown, model: string): boolean {
  if (typeof a !== "string") return false;
  const strip = (s: string) => s.replace(/:latest$/, "");
  return a === model || strip(a) === strip(model);
}

async function request(
  env: ProbeEnv,
  method: "GET" | "POST",
  url: URL,
  body?: unknown,
): Promise<Result<HttpResponse, TransportFailure>> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const token = env.opts.token;
  return exchange({
    method,
    url,
    headers: {
      accept: "application/json",
      "user-agent": "scoot",
      ...(payload ? { "content-type": "application/json", "content-length": String(payload.length) } : {}),
      // Same origin as the completions endpoint, which already gets the token.
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: payload,
    timeoutMs: Math.max(1, env.deadline - env.now()),
    signal: env.signal,
    caFile: env.opts.backend.ca_file,
  });
}

/** GET/POST and JSON-parse; 2xx with a body that is not JSON is "garbage", other statuses "absent". */
async function getJson(
  env: ProbeEnv,
  method: "GET" | "POST",
  url: URL,
  body?: unknown,
): Promise<{ json: unknown } | ProbeOutcome> {
  const shown = `${method} ${displayUrl(url)}`;
  const r = await request(env, method, url, body);
  if (!r.ok) {
    const f = r.error;
    const why =
      f.kind === "timeout"
        ? `no answer within ${env.opts.timeoutMs ?? DISCOVERY_TIMEOUT_MS} ms`
        : f.kind === "network"
          ? `${f.code} ${f.detail}`
          : f.kind === "config"
            ? f.detail
            : f.kind === "too_large"
              ? "answer too large"
              : "aborted";
    return { kind: "failed", note: `${shown}: ${why}`, reachable: false };
  }
  if (r.value.status < 200 || r.value.status >= 300) return { kind: "absent" };
  try {
    return { json: JSON.parse(r.value.body) };
  } catch {
    return { kind: "failed", note: `${shown}: answered something that is not JSON`, reachable: true };
  }
}

function isOutcome(x: { json: unknown } | ProbeOutcome): x is ProbeOutcome {
  return "kind" in x;
}

function garbage(method: string, url: URL, what: string): ProbeOutcome {
  return {
    kind: "failed",
    note: `${method} ${displayUrl(url)}: ${what}`,
    reachable: true,
  };
}

async function probeVllm(env: ProbeEnv, base: URL): Promise<ProbeOutcome> {
  const got = await getJson(env, "GET", base);
  if (isOutcome(got)) return got;
  const data = (got.json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return { kind: "absent" };
  const withLen = data.filter(
    (d): d is { id?: unknown; max_model_len?: unknown } =>
      typeof d === "object" && d !== null && "max_model_len" in d,
  );
  if (withLen.length === 0) return { kind: "absent" };
  const model = env.opts.backend.model;
  // vLLM serves one model; match by name, else take the only one listed.
  const entry =
    withLen.find((d) => sameModel(d.id, model)) ?? (withLen.length === 1 ? withLen[0] : undefined);
  if (!entry) return { kind: "absent" };
  if (!plausible(entry.max_model_len))
    return garbage("GET", base, `max_model_len ${JSON.stringify(entry.max_model_len)} is not a window`);
  return {
    kind: "window",
    w: { tokens: entry.max_model_len, source: "vLLM max_model_len", flavour: "vllm" },
  };
}

async function probeLlamaCpp(env: ProbeEnv, url: URL): Promise<ProbeOutcome> {
  const got = await getJson(env, "GET", url);
  if (isOutcome(got)) return got;
  const settings = (got.json as { default_generation_settings?: unknown } | null)
    ?.default_generation_settings;
  if (typeof settings !== "object" || settings === null || !("n_ctx" in settings)) return { kind: "absent" };
  const nCtx = (settings as { n_ctx: unknown }).n_ctx;
  if (!plausible(nCtx)) return garbage("GET", url, `n_ctx ${JSON.stringify(nCtx)} is not a window`);
  return { kind: "window", w: { tokens: nCtx, source: "llama.cpp n_ctx", flavour: "llamacpp" } };
}

/** `num_ctx 8192` in the Modelfile parameters text of `/api/show`. */
function modelfileNumCtx(parameters: unknown): number | undefined {
  if (typeof parameters !== "string") return undefined;
  const m = /^\s*num_ctx\s+(\d+)\s*$/m.exec(parameters);
  const n = m ? Number(m[1]) : undefined;
  return plausible(n) ? n : undefined;
}

function trainedMaximum(modelInfo: unknown): number | undefined {
  if (typeof modelInfo !== "object" || modelInfo === null) return undefined;
  for (const [k, v] of Object.entries(modelInfo)) if (k.endsWith(".context_length") && plausible(v)) return v;
  return undefined;
}

async function probeOllama(env: ProbeEnv, root: string): Promise<ProbeOutcome> {
  const psUrl = new URL(`${root}/api/ps`);
  const got = await getJson(env, "GET", psUrl);
  if (isOutcome(got)) return got;
  const models = (got.json as { models?: unknown } | null)?.models;
  if (!Array.isArray(models)) return { kind: "absent" };
  const model = env.opts.backend.model;
  const loaded = models.find(
    (m): m is Record<string, unknown> =>
      typeof m === "object" && m !== null && (sameModel(m.name, model) || sameModel(m.model, model)),
  );
  if (loaded && "context_length" in loaded) {
    if (!plausible(loaded.context_length))
      return garbage("GET", psUrl, `context_length ${JSON.stringify(loaded.context_length)} is not a window`);
    return {
      kind: "window",
      w: { tokens: loaded.context_length, source: "Ollama loaded", flavour: "ollama" },
    };
  }
  // Not loaded (or an Ollama before 0.10 without context_length): the trained maximum is all
  // /api/show knows, unless the Modelfile sets num_ctx.
  const showUrl = new URL(`${root}/api/show`);
  const shown = await getJson(env, "POST", showUrl, { model });
  const state = loaded ? "loaded, window not reported" : "model not loaded";
  if (isOutcome(shown)) {
    if (shown.kind === "failed") return shown;
    return {
      kind: "window",
      w: {
        tokens: OLLAMA_DEFAULT_WINDOW,
        source: "Ollama default",
        flavour: "ollama",
        detail: `${state}; assumed`,
      },
    };
  }
  const info = shown.json as { parameters?: unknown; model_info?: unknown } | null;
  const numCtx = modelfileNumCtx(info?.parameters);
  const trained = trainedMaximum(info?.model_info);
  if (numCtx !== undefined) {
    const tokens = trained ? Math.min(numCtx, trained) : numCtx;
    return { kind: "window", w: { tokens, source: "Ollama num_ctx", flavour: "ollama", detail: state } };
  }
  const tokens = trained ? Math.min(OLLAMA_DEFAULT_WINDOW, trained) : OLLAMA_DEFAULT_WINDOW;
  return {
    kind: "window",
    w: {
      tokens,
      source: "Ollama default",
      flavour: "ollama",
      detail: `${state}; assumed${trained ? `, trained maximum ${trained}` : ""}`,
    },
  };
}

async function probeLmStudio(env: ProbeEnv, root: string): Promise<ProbeOutcome> {
  const url = new URL(`${root}/api/v0/models`);
  const got = await getJson(env, "GET", url);
  if (isOutcome(got)) return got;
  const data = (got.json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return { kind: "absent" };
  const entry = data.find(
    (d): d is Record<string, unknown> =>
      typeof d === "object" && d !== null && sameModel(d.id, env.opts.backend.model),
  );
  if (!entry) return { kind: "absent" };
  if (plausible(entry.loaded_context_length))
    return {
      kind: "window",
      w: { tokens: entry.loaded_context_length, source: "LM Studio loaded", flavour: "lmstudio" },
    };
  if (plausible(entry.max_context_length))
    return {
      kind: "window",
      w: {
        tokens: entry.max_context_length,
        source: "LM Studio max_context_length",
        flavour: "lmstudio",
        detail: "model not loaded",
      },
    };
  if ("loaded_context_length" in entry || "max_context_length" in entry)
    return garbage("GET", url, "context lengths are not windows");
  return { kind: "absent" };
}

/**
 * Runs every probe at once under one deadline and takes the first window in priority order;
 * lower-priority probes still running are abandoned as soon as the answer is known.
 */
async function ask(opts: DiscoverOptions): Promise<{ window: ContextWindow; cacheable: boolean }> {
  const now = opts.now ?? Date.now;
  const notes: string[] = [];
  const base = joinUrl(opts.backend.base_url, "models");
  if (!base.ok)
    return { window: { source: "unknown", notes: [base.error], cached: false }, cacheable: false };
  const root = rootUrl(opts.backend.base_url);
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const env: ProbeEnv = {
    opts,
    signal: controller.signal,
    deadline: now() + (opts.timeoutMs ?? DISCOVERY_TIMEOUT_MS),
    now,
  };
  const safe = (p: Promise<ProbeOutcome>): Promise<ProbeOutcome> =>
    p.catch((e: unknown) => ({ kind: "failed", note: String(e), reachable: false }) as const);
  const probes = [
    safe(probeVllm(env, base.value)),
    safe(probeLlamaCpp(env, new URL(`${root}/props`))),
    safe(probeLmStudio(env, root)),
    safe(probeOllama(env, root)),
  ];
  let reachable = false;
  let found: ContextWindow | undefined;
  try {
    for (const p of probes) {
      const o = await p;
      if (o.kind === "window") {
        found = { ...o.w, notes, cached: false };
        reachable = true;
        break;
      }
      if (o.kind === "absent") reachable = true;
      else {
        notes.push(redact(o.note));
        reachable ||= o.reachable;
      }
    }
  } finally {
    controller.abort();
    opts.signal?.removeEventListener("abort", onAbort);
  }
  // A window for a model that is not loaded yet is a guess about the load to come: the next
  // run should see the loaded one.
  const guess = found?.source === "Ollama default" || found?.source === "LM Studio max_context_length";
  if (found) return { window: found, cacheable: !guess };
  return {
    window: { source: "unknown", detail: "the server reports no window", notes, cached: false },
    // A server that did not answer at all may be starting: ask again next time.
    cacheable: reachable,
  };
}

const memo = new Map<string, { at: number; value: Promise<ContextWindow> }>();

/**
 * The model's context window: `backend.context_window` when set, else asked of the server (at
 * most once per process per base URL + model, and at most once per CACHE_TTL_MS across processes).
 * Never fails: anything that goes wrong is a note and the window is unknown.
 */
export function discoverContextWindow(opts: DiscoverOptions): Promise<ContextWindow> {
  const configured = opts.backend.context_window ?? 0;
  if (configured > 0)
    return Promise.resolve({ tokens: configured, source: "configured", notes: [], cached: false });
  const now = opts.now ?? Date.now;
  const key = cacheKey(opts.backend);
  const readCache = opts.readCache ?? true;
  const hit = memo.get(key);
  if (readCache && hit && now() - hit.at < CACHE_TTL_MS) return hit.value;

  const file = opts.stateDir ? path.join(opts.stateDir, CACHE_FILE) : undefined;
  if (readCache && file) {
    const e = readCacheFile(file)[key];
    const age = e ? now() - e.at : Number.POSITIVE_INFINITY;
    if (e && age >= 0 && age < CACHE_TTL_MS) {
      const value = Promise.resolve<ContextWindow>({
        ...(e.tokens !== undefined ? { tokens: e.tokens } : {}),
        source: e.source,
        ...(e.flavour ? { flavour: e.flavour } : {}),
        ...(e.detail ? { detail: e.detail } : {}),
        notes: [],
        cached: true,
      });
      memo.set(key, { at: e.at, value });
      return value;
    }
  }
  const value = ask(opts).then(({ window, cacheable }) => {
    if (cacheable && opts.stateDir) {
      writeCacheEntry(opts.stateDir, key, {
        ...(window.tokens !== undefined ? { tokens: window.tokens } : {}),
        source: window.source,
        ...(window.flavour ? { flavour: window.flavour } : {}),
        ...(window.detail ? { detail: window.detail } : {}),
        at: now(),
      });
    }
    if (!cacheable) memo.delete(key);
    return window;
  });
  memo.set(key, { at: now(), value });
  return value;
}

/** For tests and the benchmark: forget what this process discovered. */
export function forgetDiscoveredWindows(): void {
  memo.clear();
}
