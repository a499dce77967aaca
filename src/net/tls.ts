/**
 * Trusted roots for HTTPS: Node's bundled roots plus the PEM certificates of
 * `backend.ca_file`. Shared by the backend client, `http_request` and remote MCP.
 *
 * Passing `ca` to an agent *replaces* the default roots, which is why the bundled roots
 * are included: a private CA is added to, never substituted for, the public ones.
 */
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import type https from "node:https";
import { httpsModule, tlsModule } from "../core/builtins.js";
import type { Result } from "../core/types.js";

/** A CA file larger than this is not a certificate bundle. */
const MAX_CA_FILE_BYTES = 4 * 1024 * 1024;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * The roots to trust: undefined when no `ca_file` is set (use Node's defaults as they
 * are), else the bundled roots followed by every certificate in the file. Errors name
 * the file and what is wrong with it.
 */
export function loadCaBundle(caFile?: string): Result<string[] | undefined> {
  if (caFile === undefined || caFile === "") return { ok: true, value: undefined };
  let text: string;
  try {
    const buf = readFileSync(caFile);
    if (buf.length > MAX_CA_FILE_BYTES) {
      return { ok: false, error: `backend.ca_file ${caFile}: larger than ${MAX_CA_FILE_BYTES} bytes` };
    }
    text = buf.toString("utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "";
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : String(e);
    return { ok: false, error: `backend.ca_file ${caFile}: cannot read: ${why}` };
  }
  const pems = text.match(PEM_CERTIFICATE) ?? [];
  if (pems.length === 0) {
    return { ok: false, error: `backend.ca_file ${caFile}: no PEM certificate (BEGIN CERTIFICATE) found` };
  }
  for (const [i, pem] of pems.entries()) {
    try {
      new X509Certificate(pem);
    } catch {
      return {
        ok: false,
        error: `backend.ca_file ${caFile}: certificate ${i + 1} is not a valid PEM certificate`,
      };
    }
  }
  return { ok: true, value: [...tlsModule().rootCertificates, ...pems] };
}

/** An https.Agent trusting `caFile` on top of the bundled roots (Node's defaults when unset). */
export function makeHttpsAgent(caFile?: string, options: https.AgentOptions = {}): Result<https.Agent> {
  const ca = loadCaBundle(caFile);
  if (!ca.ok) return ca;
  return { ok: true, value: new (httpsModule().Agent)(ca.value ? { ...options, ca: ca.value } : options) };
}
