/**
 * What `backend.base_url` must be, said once for the loader (file and `SCOOT_BACKEND_BASE_URL`),
 * `--base-url`, `scoot setup` and the backend (docs/configuration.md "Configuration"):
 * an http:// or https:// URL with a host. A refusal quotes the whole value and, when the
 * mistake is a common one, the URL that was probably meant: `localhost:8080` lacks `http://`
 * (→ `http://localhost:8080/v1`), `http//x` lacks the colon, `ftp://x` is another scheme.
 * OpenAI-compatible servers answer under `/v1`, so a suggestion adds it when the path is empty.
 */
import type { Result } from "../core/types.js";

/** The path OpenAI-compatible servers answer under. */
export const OPENAI_PATH = "/v1";
/** The example a message gives when nothing better can be suggested. */
const EXAMPLE = "http://127.0.0.1:11434/v1";
/** Control characters are never meaningful in a URL and would not survive TOML. */
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
/** `host`, `host:port`, `host:` (port forgotten), with an optional path: a URL without its scheme. */
const SCHEMELESS = /^([A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(:\d*)?(\/.*)?$/;
/** `http//host` and `https//host`: the colon is missing. */
const COLONLESS = /^(https?)\/\/(.*)$/i;
/** `scheme://rest`. */
const OTHER_SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/;

/** `rest` (host, port, path) as an http URL, with `/v1` when it has no path; `<port>` fills an empty port. */
function httpSuggestion(rest: string, scheme = "http"): string {
  const slash = rest.indexOf("/");
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  const path = slash === -1 ? "" : rest.slice(slash);
  const host = authority.endsWith(":") ? `${authority}<port>` : authority;
  return `${scheme}://${host}${path === "" || path === "/" ? OPENAI_PATH : path}`;
}

/** `url` with `/v1` as its path when it has no path; undefined when it has one (a 404's hint). */
export function withV1(url: URL): string | undefined {
  if (url.pathname !== "/" && url.pathname !== "") return undefined;
  const fixed = new URL(url.href);
  fixed.pathname = OPENAI_PATH;
  return fixed.href;
}

/**
 * `value` when it is an http(s) URL with a host (trimmed), else why not: the whole value
 * quoted, and the URL probably meant. The message has no subject, so each caller names where
 * the value came from (`backend.base_url: …`, `SCOOT_BACKEND_BASE_URL: …`, `--base-url: …`).
 */
export function checkBaseUrl(raw: string): Result<string> {
  const v = raw.trim();
  const quoted = JSON.stringify(raw);
  if (v === "") return { ok: false, error: `the base URL is empty; set the server's URL, e.g. ${EXAMPLE}` };
  if (CONTROL_CHARS.test(v)) return { ok: false, error: `${quoted} contains control characters` };
  let url: URL | undefined;
  try {
    url = new URL(v);
  } catch {
    url = undefined;
  }
  if (url && (url.protocol === "http:" || url.protocol === "https:")) {
    if (url.hostname === "") return { ok: false, error: `${quoted} has no host (e.g. ${EXAMPLE})` };
    return { ok: true, value: v };
  }
  const colonless = COLONLESS.exec(v);
  if (colonless)
    return {
      ok: false,
      error: `${quoted} is not a URL: the ":" after ${colonless[1]} is missing; write it as ${httpSuggestion(colonless[2]!, colonless[1]!.toLowerCase())}`,
    };
  const other = OTHER_SCHEME.exec(v);
  if (other && /^https?$/i.test(other[1]!))
    return { ok: false, error: `${quoted} is not a URL: its host is missing or not valid (e.g. ${EXAMPLE})` };
  if (other)
    return {
      ok: false,
      error: `${quoted} uses ${other[1]}://; model servers are reached over http:// or https://${other[2] ? `, e.g. ${httpSuggestion(other[2])}` : ""}`,
    };
  if (SCHEMELESS.test(v))
    return {
      ok: false,
      error: `${quoted} does not start with http:// or https://; write it as ${httpSuggestion(v)}`,
    };
  return { ok: false, error: `${quoted} is not an http:// or https:// URL (e.g. ${EXAMPLE})` };
}
