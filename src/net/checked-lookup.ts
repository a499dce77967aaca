/**
 * Connect-time address check for `http_request` (docs/safety.md "Policy modes"). The gate judges
 * the literal host; a public-looking name can still resolve to 127.0.0.1 (an /etc/hosts
 * entry, `*.nip.io`-style wildcard DNS, a rebinding domain). This lookup resolves the name
 * itself, refuses when ANY resolved address is internal (the same address rules as the gate,
 * `internalHost` in policy/urls.ts), and hands the socket exactly the addresses it checked,
 * so no second lookup can rebind between the check and the connect. TLS still verifies the
 * certificate against the URL's host name: only the address lookup is replaced.
 */
import dns from "node:dns";
import type { LookupFunction } from "node:net";
import { internalHost } from "../policy/urls.js";

/** The error code a refused address carries (http_request turns it into its observation). */
export const INTERNAL_ADDRESS_CODE = "ERR_SCOOT_INTERNAL_ADDRESS";

export class InternalAddressError extends Error {
  readonly code = INTERNAL_ADDRESS_CODE;
}

type LookupOptions = dns.LookupOptions;

export function checkedLookup(): LookupFunction {
  return ((hostname: string, options: LookupOptions, callback: (...args: unknown[]) => void) => {
    const wantAll = options.all === true;
    dns.lookup(hostname, { family: options.family, hints: options.hints, all: true }, (err, addresses) => {
      if (err) return callback(err);
      if (addresses.length === 0) {
        const e = Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" });
        return callback(e);
      }
      for (const a of addresses) {
        const why = internalHost(a.address);
        if (why !== undefined) {
          return callback(
            new InternalAddressError(
              `host ${hostname} resolves to ${a.address}, ${why}; internal addresses are blocked in guarded mode (tools.block_internal_http)`,
            ),
          );
        }
      }
      if (wantAll) return callback(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  }) as LookupFunction;
}
