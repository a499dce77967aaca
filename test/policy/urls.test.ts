import { describe, expect, it } from "vitest";
import { checkUrl, internalHost, parseHttpUrl, parseIPv4Loose, parseIPv6 } from "../../src/policy/urls.js";

const GUARDED = { mode: "guarded", blockInternalHttp: true } as const;

function expectBlocked(url: string, what: string): void {
  const d = checkUrl(url, GUARDED);
  expect(d.allow, `expected deny: ${url}`).toBe(false);
  if (!d.allow) {
    expect(d.reason).toContain(what);
    expect(d.reason.startsWith("http: ")).toBe(true);
  }
}

describe("http: readonly refuses all network, GET and HEAD included", () => {
  it.each([["https://example.com/"], ["http://127.0.0.1/"], ["not a url"]])("%j", (url) => {
    expect(checkUrl(url, { mode: "readonly", blockInternalHttp: false })).toEqual({
      allow: false,
      reason: "readonly mode denies network access (GET and HEAD included); run with --policy guarded",
    });
  });
});

describe("http: unrestricted allows all", () => {
  it.each([
    ["http://127.0.0.1/"],
    ["http://169.254.169.254/latest/meta-data/"],
    ["file:///etc/passwd"],
    ["::"],
  ])("%j", (url) => {
    expect(checkUrl(url, { mode: "unrestricted", blockInternalHttp: true })).toEqual({ allow: true });
  });
});

describe("http: URLs that do not parse or are not http(s)", () => {
  it.each([
    ["", "URL does not parse"],
    ["not a url", "URL does not parse"],
    ["example.com/path", "URL does not parse"],
    ["http://", "URL does not parse"],
    ["http://a b/", "URL does not parse"],
    ["http://[::1/", "URL does not parse"],
    ["http://4294967296/", "URL does not parse"],
    ["http://1.2.3.4.5/", "URL does not parse"],
    ["http://[fe80::1%25eth0]/", "URL does not parse"],
    ["file:///etc/passwd", "scheme file is not http or https"],
    ["ftp://example.com/x", "scheme ftp is not http or https"],
    ["gopher://127.0.0.1:6379/_INFO", "scheme gopher is not http or https"],
    ["javascript:alert(1)", "scheme javascript is not http or https"],
    ["data:text/plain,hi", "scheme data is not http or https"],
    ["ws://example.com/", "scheme ws is not http or https"],
  ])("%j is refused (%s)", (url, what) => {
    expectBlocked(url, what);
  });

  it("parse and scheme checks hold in guarded even without block_internal_http", () => {
    expect(checkUrl("file:///etc/passwd", { mode: "guarded", blockInternalHttp: false }).allow).toBe(false);
    expect(checkUrl("http://127.0.0.1/", { mode: "guarded", blockInternalHttp: false })).toEqual({
      allow: true,
    });
  });
});

describe("http: loopback, private, link-local, unique-local, unspecified, multicast", () => {
  it.each([
    ["http://127.0.0.1/", "loopback"],
    ["http://127.0.0.1:8080/admin", "loopback"],
    ["https://127.255.255.254/", "loopback"],
    ["http://127.1/", "loopback"],
    ["http://127.0.1/", "loopback"],
    ["http://2130706433/", "loopback"],
    ["http://0x7f000001/", "loopback"],
    ["http://0x7f.0.0.1/", "loopback"],
    ["http://0x7F.1/", "loopback"],
    ["http://0177.0.0.1/", "loopback"],
    ["http://0177.0.0.01/", "loopback"],
    ["http://127.0.0.1./", "loopback"],
    ["http://127.0.0.1%2e/", "loopback"],
    ["http://%31%32%37.0.0.1/", "loopback"],
    ["http://\u2460\u2461\u2466.0.0.1/", "loopback"],
    ["http://10.0.0.1/", "private (10/8)"],
    ["http://10.255.255.255/", "private (10/8)"],
    ["http://012.0.0.1/", "private (10/8)"],
    ["http://167772161/", "private (10/8)"],
    ["http://172.16.0.1/", "private (172.16/12)"],
    ["http://172.31.255.255/", "private (172.16/12)"],
    ["http://192.168.1.1/", "private (192.168/16)"],
    ["http://0xc0a80101/", "private (192.168/16)"],
    ["http://100.64.0.1/", "carrier-grade NAT"],
    ["http://100.127.255.254/", "carrier-grade NAT"],
    ["http://100.100.100.200/", "carrier-grade NAT"],
    ["http://169.254.169.254/latest/meta-data/", "link-local"],
    ["http://169.254.0.1/", "link-local"],
    ["http://0.0.0.0/", "unspecified"],
    ["http://0/", "unspecified"],
    ["http://0.1.2.3/", "unspecified"],
    ["http://224.0.0.1/", "multicast"],
    ["http://239.255.255.250:1900/", "multicast"],
    ["http://255.255.255.255/", "broadcast"],
    ["http://4294967295/", "broadcast"],
    ["http://192.0.0.170/", "special-purpose"],
    ["http://198.18.0.1/", "benchmarking"],
    ["http://[::1]/", "loopback"],
    ["http://[0:0:0:0:0:0:0:1]/", "loopback"],
    ["http://[::]/", "unspecified"],
    ["http://[fe80::1]/", "link-local"],
    ["http://[febf::1]/", "link-local"],
    ["http://[fec0::1]/", "site-local"],
    ["http://[fc00::1]/", "unique-local"],
    ["http://[fd12:3456::1]/", "unique-local"],
    ["http://[fd00:ec2::254]/latest/meta-data/", "unique-local"],
    ["http://[ff02::1]/", "multicast"],
    ["http://[::ffff:127.0.0.1]/", "IPv4-mapped form of 127.0.0.1, a loopback"],
    ["http://[::ffff:7f00:1]/", "IPv4-mapped form of 127.0.0.1"],
    ["http://[0:0:0:0:0:ffff:7f00:1]/", "IPv4-mapped form of 127.0.0.1"],
    ["http://[::ffff:a9fe:a9fe]/", "IPv4-mapped form of 169.254.169.254"],
    ["http://[::ffff:10.1.2.3]/", "IPv4-mapped form of 10.1.2.3"],
    ["http://[::ffff:0:127.0.0.1]/", "IPv4-translated form of 127.0.0.1"],
    ["http://[::127.0.0.1]/", "IPv4-compatible form of 127.0.0.1"],
    ["http://[::7f00:1]/", "IPv4-compatible form of 127.0.0.1"],
    ["http://[64:ff9b::127.0.0.1]/", "NAT64 form of 127.0.0.1"],
    ["http://[64:ff9b::a9fe:a9fe]/", "NAT64 form of 169.254.169.254"],
    ["http://[64:ff9b:1::1]/", "local-use NAT64"],
    ["http://[2002:7f00:1::1]/", "6to4 form of 127.0.0.1"],
    ["http://[2002:c0a8:101::]/", "6to4 form of 192.168.1.1"],
    ["HTTP://[::1]:80/", "loopback"],
  ])("%j is blocked (%s)", (url, what) => {
    expectBlocked(url, what);
  });
});

describe("http: localhost, internal and metadata names", () => {
  it.each([
    ["http://localhost/", "loopback name"],
    ["http://localhost:3000/", "loopback name"],
    ["http://LOCALHOST/", "loopback name"],
    ["http://LocalHost./", "loopback name"],
    ["http://localhost../", "loopback name"],
    ["http://api.localhost/", "loopback name"],
    ["http://a.b.localhost./", "loopback name"],
    ["http://%6c%6fcalhost/", "loopback name"],
    ["http://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/", "loopback name"],
    ["http://localtest.me/", "loopback name"],
    ["http://app.lvh.me/", "loopback name"],
    ["http://metadata.google.internal/computeMetadata/v1/", "cloud metadata name"],
    ["http://METADATA.GOOGLE.INTERNAL./", "cloud metadata name"],
    ["http://metadata/", "cloud metadata name"],
    ["http://metadata.goog/", "cloud metadata name"],
    ["http://instance-data/latest/", "cloud metadata name"],
    ["http://instance-data.ec2.internal/", "cloud metadata name"],
    ["http://intranet/", "single-label name"],
    ["http://printer:631/", "single-label name"],
    ["http://db.internal/", "internal name (.internal)"],
    ["http://nas.local/", "internal name (.local)"],
    ["http://router.home.arpa/", "internal name (.home.arpa)"],
    ["http://kubernetes.default.svc/", "internal name (.svc)"],
    ["http://web.default.svc.cluster.local/", "internal name (.local)"],
    ["http://host.localdomain/", "internal name (.localdomain)"],
    ["http://127.0.0.1.nip.io/", "embeds 127.0.0.1"],
    ["http://10.0.0.1.sslip.io/", "embeds 10.0.0.1"],
    ["http://169-254-169-254.sslip.io/", "embeds 169.254.169.254"],
    // Heuristic: any name that starts with an internal dotted address is treated as wildcard DNS.
    ["https://127.0.0.1.example.com/", "embeds 127.0.0.1"],
  ])("%j is blocked (%s)", (url, what) => {
    expectBlocked(url, what);
  });
});

describe("http: userinfo, fragments and backslashes judge the real host", () => {
  it.each([
    ["http://example.com@127.0.0.1/", "loopback"],
    ["http://user:pass@localhost/", "loopback name"],
    ["http://127.0.0.1#@example.com/", "loopback"],
    ["http://127.0.0.1?@example.com/", "loopback"],
    ["http://example.com:80@169.254.169.254/", "link-local"],
    ["http://evil.com%40@127.0.0.1/", "loopback"],
    ["http://1.1.1.1 &@127.0.0.1# @3.3.3.3/", "loopback"],
    ["http:/127.0.0.1/", "loopback"],
    ["http:127.0.0.1/", "loopback"],
    ["http:\\\\127.0.0.1\\", "loopback"],
    ["  http://127.0.0.1/  ", "loopback"],
    ["http://127.0.0.\t1/", "loopback"],
  ])("%j is blocked (%s)", (url, what) => {
    expectBlocked(url, what);
  });

  it.each([
    ["http://127.0.0.1@example.com/"],
    ["http://localhost:x@example.com/"],
    ["http://example.com\\@127.0.0.1/"],
    ["https://user:pass@example.com/path"],
  ])("%j connects to the public host and is allowed", (url) => {
    expect(checkUrl(url, GUARDED)).toEqual({ allow: true });
  });
});

describe("http: public hosts stay allowed", () => {
  it.each([
    ["https://example.com/"],
    ["http://example.com:8080/a?b=c#d"],
    ["https://api.github.com/repos/x/y"],
    ["https://8.8.8.8/"],
    ["http://1.1.1.1/"],
    ["http://172.15.255.255/"],
    ["http://172.32.0.1/"],
    ["http://100.63.255.255/"],
    ["http://100.128.0.1/"],
    ["http://169.253.1.1/"],
    ["http://192.167.1.1/"],
    ["http://11.0.0.1/"],
    ["http://[2606:4700:4700::1111]/"],
    ["http://[2001:db8::1]/"],
    ["http://[::ffff:8.8.8.8]/"],
    ["http://[64:ff9b::8.8.8.8]/"],
    ["https://localhost.example.com/"],
    ["https://metadata.example.com/"],
    ["https://mylocalhost.com/"],
    ["https://internal.example.org/"],
    ["https://xn--nxasmq6b.com/"],
    ["https://8.8.8.8.example.com/"],
    ["HTTPS://EXAMPLE.COM/"],
  ])("%j", (url) => {
    expect(checkUrl(url, GUARDED)).toEqual({ allow: true });
  });
});

describe("address parsers (defence beyond WHATWG normalisation)", () => {
  it.each([
    ["127.0.0.1", 0x7f000001],
    ["127.1", 0x7f000001],
    ["127.0.1", 0x7f000001],
    ["2130706433", 0x7f000001],
    ["0x7f000001", 0x7f000001],
    ["0x7f.0.0.1", 0x7f000001],
    ["0177.0.0.1", 0x7f000001],
    ["0177.1", 0x7f000001],
    ["127.0.0.1.", 0x7f000001],
    ["0", 0],
    ["255.255.255.255", 0xffffffff],
  ])("parseIPv4Loose(%j)", (host, n) => {
    expect(parseIPv4Loose(host)).toBe(n);
  });

  it.each([["256.0.0.1"], ["1.2.3.4.5"], ["4294967296"], ["example.com"], ["08.0.0.1"], ["1..2"], ["0x"]])(
    "parseIPv4Loose(%j) is not an address",
    (host) => {
      const n = parseIPv4Loose(host);
      if (host === "0x") expect(n).toBe(0);
      else expect(n).toBeUndefined();
    },
  );

  it.each([
    ["::1", [0, 0, 0, 0, 0, 0, 0, 1]],
    ["::", [0, 0, 0, 0, 0, 0, 0, 0]],
    ["fe80::1%eth0", [0xfe80, 0, 0, 0, 0, 0, 0, 1]],
    ["::ffff:127.0.0.1", [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]],
    ["1:2:3:4:5:6:7:8", [1, 2, 3, 4, 5, 6, 7, 8]],
  ])("parseIPv6(%j)", (s, groups) => {
    expect(parseIPv6(s)).toEqual(groups);
  });

  it.each([["1:2:3"], ["1::2::3"], ["12345::"], ["::ffff:999.0.0.1"], ["1:2:3:4:5:6:7:8:9"], ["g::1"]])(
    "parseIPv6(%j) is not an address",
    (s) => {
      expect(parseIPv6(s)).toBeUndefined();
    },
  );

  it("an IPv6 zone id does not hide a link-local address", () => {
    expect(internalHost("[fe80::1%eth0]")).toContain("link-local");
  });

  it("parseHttpUrl returns the URL object the tool must connect with", () => {
    const r = parseHttpUrl("http://0x7f.1:8080/x");
    expect(r.ok && r.value.hostname).toBe("127.0.0.1");
    expect(parseHttpUrl("mailto:a@b.c")).toEqual({ ok: false, error: "scheme mailto is not http or https" });
  });
});
