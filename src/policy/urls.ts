/**
 * URL rules for `http_request`.
 *
 * readonly refuses all network access (a GET can carry data out in its URL). guarded
 * refuses what does not parse and anything but http(s); with `block_internal_http` it also
 * refuses internal hosts. unrestricted allows all.
 *
 * The internal-host check is a heuristic over the literal host, with no DNS lookup: a public
 * name that resolves to 127.0.0.1 is out of its reach (except the well-known wildcard forms
 * that embed the address, such as `127.0.0.1.nip.io`). It parses with WHATWG `URL`, which
 * already normalises most tricks (decimal, hex, octal and short IPv4 forms, percent-encoded
 * and fullwidth hosts, userinfo, backslashes); the tool must connect to the host of the same
 * `URL` object (`parseHttpUrl`), so the gate and the socket never disagree. Our own IPv4 and
 * IPv6 parsers then classify the address, loosely enough to catch forms WHATWG leaves alone.
 */
import type { PolicyMode } from "../config/schema.js";
import type { Decision, Result } from "../core/types.js";

/** Names that are cloud metadata services. */
export const METADATA_HOSTS: ReadonlySet<string> = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.tencentyun.com",
]);

/** Names that always resolve to loopback (public wildcard DNS). */
const LOOPBACK_NAMES: readonly string[] = ["localhost", "localtest.me", "lvh.me"];

/** Suffixes that are never public DNS: special-use, reserved or de-facto private names. */
export const INTERNAL_SUFFIXES: readonly string[] = [
  "internal",
  "local",
  "localdomain",
  "home.arpa",
  "intranet",
  "corp",
  "home",
  "lan",
  "svc",
];

/** IPv4 ranges that are not the public internet, with the name a reason uses. */
const IPV4_BLOCKS: readonly { base: number; bits: number; kind: string }[] = [
  { base: ip4(0, 0, 0, 0), bits: 8, kind: "an unspecified (0.0.0.0/8) address" },
  { base: ip4(10, 0, 0, 0), bits: 8, kind: "a private (10/8) address" },
  { base: ip4(100, 64, 0, 0), bits: 10, kind: "a carrier-grade NAT (100.64/10) address" },
  { base: ip4(127, 0, 0, 0), bits: 8, kind: "a loopback address" },
  { base: ip4(169, 254, 0, 0), bits: 16, kind: "a link-local (169.254/16, cloud metadata) address" },
  { base: ip4(172, 16, 0, 0), bits: 12, kind: "a private (172.16/12) address" },
  { base: ip4(192, 0, 0, 0), bits: 24, kind: "an IETF special-purpose (192.0.0/24) address" },
  { base: ip4(192, 168, 0, 0), bits: 16, kind: "a private (192.168/16) address" },
  { base: ip4(198, 18, 0, 0), bits: 15, kind: "a benchmarking (198.18/15) address" },
  { base: ip4(224, 0, 0, 0), bits: 4, kind: "a multicast address" },
  { base: ip4(240, 0, 0, 0), bits: 4, kind: "a reserved or broadcast address" },
];

function ip4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function fmt4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

/** What an IPv4 address (as a 32-bit number) is, if it is not public. */
export function classifyIPv4(n: number): string | undefined {
  for (const b of IPV4_BLOCKS) {
    const mask = b.bits === 0 ? 0 : (~0 << (32 - b.bits)) >>> 0;
    if ((n & mask) >>> 0 === b.base) return b.kind;
  }
  return undefined;
}

/**
 * inet_aton-style IPv4: 1 to 4 parts, each decimal, octal (leading 0) or hex (0x), the last
 * part filling the remaining bytes (`127.1`, `0x7f000001`, `0177.0.0.1`). Undefined if not one.
 */
export function parseIPv4Loose(host: string): number | undefined {
  const h = host.endsWith(".") ? host.slice(0, -1) : host;
  const parts = h.split(".");
  if (parts.length < 1 || parts.length > 4) return undefined;
  const nums: number[] = [];
  for (const p of parts) {
    let v: number;
    if (/^0x[0-9a-f]*$/i.test(p)) v = p.length === 2 ? 0 : Number.parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) v = Number.parseInt(p, 8);
    else if (/^(0|[1-9][0-9]*)$/.test(p)) v = Number.parseInt(p, 10);
    else return undefined;
    if (!Number.isSafeInteger(v)) return undefined;
    nums.push(v);
  }
  const last = nums.pop()!;
  if (nums.some((v) => v > 255)) return undefined;
  const lastBytes = 4 - nums.length;
  if (last >= 2 ** (8 * lastBytes)) return undefined;
  let n = 0;
  for (const v of nums) n = n * 256 + v;
  return (n * 2 ** (8 * lastBytes) + last) >>> 0;
}

/** Eight 16-bit groups, or undefined. A zone id (`%eth0`) is dropped for classification. */
export function parseIPv6(s: string): number[] | undefined {
  let t = s.toLowerCase();
  const zone = t.indexOf("%");
  if (zone >= 0) t = t.slice(0, zone);
  const lastColon = t.lastIndexOf(":");
  if (lastColon < 0) return undefined;
  const tail = t.slice(lastColon + 1);
  if (tail.includes(".")) {
    const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(tail);
    if (!m) return undefined;
    const bytes = m.slice(1).map(Number);
    if (bytes.some((b) => b > 255)) return undefined;
    const [a, b, c, d] = bytes as [number, number, number, number];
    t = `${t.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = t.split("::");
  if (halves.length > 2) return undefined;
  const groups = (x: string): number[] | undefined => {
    if (x === "") return [];
    const out: number[] = [];
    for (const g of x.split(":")) {
      if (!/^[0-9a-f]{1,4}$/.test(g)) return undefined;
      out.push(Number.parseInt(g, 16));
    }
    return out;
  };
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !rest) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const fill = 8 - head.length - rest.length;
  if (fill < 1) return undefined;
  return [...head, ...new Array<number>(fill).fill(0), ...rest];
}

/** What an IPv6 address is, if it is not public; embedded IPv4 addresses are judged as IPv4. */
export function classifyIPv6(g: number[]): string | undefined {
  const zeros = (from: number, to: number): boolean => g.slice(from, to).every((x) => x === 0);
  const v4 = (hi: number, lo: number): number => ((hi << 16) | lo) >>> 0;
  const embedded = (n: number, how: string): string | undefined => {
    const kind = classifyIPv4(n);
    return kind ? `${how} of ${fmt4(n)}, ${kind}` : undefined;
  };
  const [g0, g1, g2] = g as [number, number, number];
  const g5 = g[5]!;
  const g6 = g[6]!;
  const g7 = g[7]!;
  if (zeros(0, 8)) return "the unspecified address (::)";
  if (zeros(0, 7) && g7 === 1) return "a loopback address (::1)";
  if ((g0 & 0xffc0) === 0xfe80) return "a link-local (fe80::/10) address";
  if ((g0 & 0xffc0) === 0xfec0) return "a site-local (fec0::/10) address";
  if ((g0 & 0xfe00) === 0xfc00) return "a unique-local (fc00::/7) address";
  if ((g0 & 0xff00) === 0xff00) return "a multicast address";
  if (zeros(0, 5) && g5 === 0xffff) return embedded(v4(g6, g7), "an IPv4-mapped form");
  if (zeros(0, 4) && g[4] === 0xffff && g5 === 0) return embedded(v4(g6, g7), "an IPv4-translated form");
  if (zeros(0, 6)) return embedded(v4(g6, g7), "an IPv4-compatible form");
  if (g0 === 0x64 && g1 === 0xff9b && zeros(2, 6)) return embedded(v4(g6, g7), "a NAT64 form");
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return "a local-use NAT64 (64:ff9b:1::/48) address";
  if (g0 === 0x2002) return embedded(v4(g1, g2), "a 6to4 form");
  return undefined;
}

/** Why a (WHATWG-parsed) hostname is internal, or undefined for a public-looking host. */
export function internalHost(hostname: string): string | undefined {
  let h = hostname.toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) {
    const groups = parseIPv6(h.slice(1, -1));
    return groups ? classifyIPv6(groups) : "an IPv6 literal that cannot be classified";
  }
  h = h.replace(/\.+$/, ""); // `localhost.` is `localhost`
  if (h === "") return "an empty host";
  const n = parseIPv4Loose(h);
  if (n !== undefined) return classifyIPv4(n);
  if (h.includes(":")) {
    const groups = parseIPv6(h);
    return groups ? classifyIPv6(groups) : "an IPv6 literal that cannot be classified";
  }
  if (LOOPBACK_NAMES.some((name) => h === name || h.endsWith(`.${name}`))) return "a loopback name";
  if (METADATA_HOSTS.has(h)) return "a cloud metadata name";
  if (!h.includes(".")) return "a single-label name (resolved through local search domains)";
  const suffix = INTERNAL_SUFFIXES.find((s) => h === s || h.endsWith(`.${s}`));
  if (suffix) return `an internal name (.${suffix})`;
  // Wildcard DNS that embeds an address: 127.0.0.1.nip.io, 10-0-0-1.sslip.io.
  const labels = h.split(".");
  const dotted = labels.slice(0, 4);
  if (labels.length > 4 && dotted.every((l) => /^\d{1,3}$/.test(l))) {
    const e = parseIPv4Loose(dotted.join("."));
    if (e !== undefined && classifyIPv4(e)) return `a name that embeds ${fmt4(e)}, ${classifyIPv4(e)}`;
  }
  const dashed = /^(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})$/.exec(labels[0]!);
  if (dashed && labels.length > 1) {
    const e = parseIPv4Loose(dashed.slice(1).join("."));
    if (e !== undefined && classifyIPv4(e)) return `a name that embeds ${fmt4(e)}, ${classifyIPv4(e)}`;
  }
  return undefined;
}

/** Parses an http(s) URL the way the gate judges it; tools connect to this object's host. */
export function parseHttpUrl(raw: string): Result<URL> {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { ok: false, error: "URL does not parse" };
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    return { ok: false, error: `scheme ${u.protocol.replace(/:$/, "")} is not http or https` };
  }
  if (u.hostname === "") return { ok: false, error: "URL has no host" };
  return { ok: true, value: u };
}

/** The URL rule. */
export function checkUrl(url: string, settings: { mode: PolicyMode; blockInternalHttp: boolean }): Decision {
  if (settings.mode === "readonly") {
    return {
      allow: false,
      reason: "readonly mode denies network access (GET and HEAD included); run with --policy guarded",
    };
  }
  if (settings.mode === "unrestricted") return { allow: true };
  const parsed = parseHttpUrl(url);
  if (!parsed.ok) return { allow: false, reason: `http: ${parsed.error}` };
  if (!settings.blockInternalHttp) return { allow: true };
  const host = parsed.value.hostname;
  const why = internalHost(host);
  if (why === undefined) return { allow: true };
  return {
    allow: false,
    reason: `http: host ${host} is ${why}; internal hosts are blocked in guarded mode (tools.block_internal_http)`,
  };
}
