/**
 * A loopback OTLP/HTTP logs receiver for tests: decodes what the official exporter sends,
 * JSON (`application/json`) and protobuf (`application/x-protobuf`, decoded with the OTLP
 * project's own generated protobufjs code, shipped in @opentelemetry/otlp-transformer 0.57),
 * and keeps every log record flattened with its resource attributes and the request headers.
 * It answers as a collector does: a success, an error status with a `google.rpc.Status` body in
 * the request's encoding, or a partial success (`rejected_log_records`, `error_message`).
 */
import http from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo, Socket } from "node:net";

const require = createRequire(import.meta.url);

interface ProtoRoot {
  opentelemetry: {
    proto: {
      collector: {
        logs: {
          v1: {
            ExportLogsServiceRequest: {
              decode(buf: Uint8Array): unknown;
              toObject(m: unknown, opts: Record<string, unknown>): unknown;
            };
            ExportLogsServiceResponse: {
              encode(m: unknown): { finish(): Uint8Array };
            };
          };
        };
      };
    };
  };
}

const root = require("otlp-transformer-protobufjs/build/src/generated/root.js") as ProtoRoot;
const Request = root.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
const Response = root.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;

export type AttrValue = string | number | boolean | undefined;

export interface ReceivedRecord {
  body: string | undefined;
  severityNumber: number | undefined;
  severityText: string | undefined;
  timeUnixNano: string | undefined;
  attributes: Record<string, AttrValue>;
  resource: Record<string, AttrValue>;
  scope: string | undefined;
  encoding: "json" | "protobuf";
}

export interface ReceivedRequest {
  encoding: "json" | "protobuf";
  /** The request's path, as the exporter posted it. */
  path: string;
  headers: http.IncomingHttpHeaders;
  records: number;
}

/**
 * What the next request gets: accepted; an error status (with a Status message); a partial
 * success rejecting `rejected` records (the others are kept); or no answer at all (held open).
 */
export type Answer =
  | "accept"
  | { status: number; message?: string }
  | { partial: { rejected: number; message?: string } }
  | "hang";

/** google.rpc.Status {code = 3 (INVALID_ARGUMENT), message}: field 1 varint, field 2 string. */
function protobufStatus(message: string): Buffer {
  const text = Buffer.from(message, "utf8");
  const length: number[] = [];
  for (let n = text.length; ; n >>>= 7) {
    if (n < 0x80) {
      length.push(n);
      break;
    }
    length.push((n & 0x7f) | 0x80);
  }
  return Buffer.concat([Buffer.from([0x08, 3, 0x12, ...length]), text]);
}

export interface OtlpReceiver {
  url: string;
  port: number;
  records: ReceivedRecord[];
  requests: ReceivedRequest[];
  /** Answers for the next requests, in order; when empty, requests are accepted. */
  answers: Answer[];
  /** Resolves when `n` requests have arrived (counting held ones). */
  waitForRequests(n: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
};

function value(v: AnyValue | undefined): AttrValue {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  return undefined;
}

function attrs(list: { key: string; value?: AnyValue }[] | undefined): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kv of list ?? []) out[kv.key] = value(kv.value);
  return out;
}

interface DecodedRequest {
  resourceLogs?: {
    resource?: { attributes?: { key: string; value?: AnyValue }[] };
    scopeLogs?: {
      scope?: { name?: string };
      logRecords?: {
        body?: AnyValue;
        severityNumber?: number;
        severityText?: string;
        timeUnixNano?: string | number;
        attributes?: { key: string; value?: AnyValue }[];
      }[];
    }[];
  }[];
}

export function flatten(req: DecodedRequest, encoding: "json" | "protobuf"): ReceivedRecord[] {
  const out: ReceivedRecord[] = [];
  for (const rl of req.resourceLogs ?? []) {
    const resource = attrs(rl.resource?.attributes);
    for (const sl of rl.scopeLogs ?? []) {
      for (const r of sl.logRecords ?? []) {
        out.push({
          body: value(r.body) as string | undefined,
          severityNumber: r.severityNumber,
          severityText: r.severityText,
          timeUnixNano: r.timeUnixNano === undefined ? undefined : String(r.timeUnixNano),
          attributes: attrs(r.attributes),
          resource,
          scope: sl.scope?.name,
          encoding,
        });
      }
    }
  }
  return out;
}

export function decodeProtobuf(buf: Buffer): DecodedRequest {
  const msg = Request.decode(buf);
  return Request.toObject(msg, { longs: String, enums: Number, defaults: false }) as DecodedRequest;
}

export async function startOtlpReceiver(port = 0): Promise<OtlpReceiver> {
  const records: ReceivedRecord[] = [];
  const requests: ReceivedRequest[] = [];
  const answers: Answer[] = [];
  const sockets = new Set<Socket>();
  const waiters: { n: number; resolve: () => void }[] = [];
  const wake = () => {
    for (const w of [...waiters]) {
      if (requests.length >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const type = String(req.headers["content-type"] ?? "");
      const encoding = type.includes("protobuf") ? "protobuf" : "json";
      const answer = answers.shift() ?? "accept";
      let decoded: DecodedRequest;
      try {
        decoded =
          encoding === "protobuf"
            ? decodeProtobuf(body)
            : (JSON.parse(body.length > 0 ? body.toString("utf8") : "{}") as DecodedRequest);
      } catch (e) {
        res.writeHead(400, { "content-type": "text/plain" });
        res.end(`undecodable: ${(e as Error).message}`);
        return;
      }
      const got = flatten(decoded, encoding);
      requests.push({ encoding, path: req.url ?? "", headers: req.headers, records: got.length });
      wake();
      if (answer === "hang") return;
      const contentType = encoding === "protobuf" ? "application/x-protobuf" : "application/json";
      if (answer !== "accept" && "status" in answer) {
        const message = answer.message ?? "";
        res.writeHead(answer.status, { "content-type": contentType });
        res.end(encoding === "protobuf" ? protobufStatus(message) : JSON.stringify({ code: 3, message }));
        return;
      }
      if (answer !== "accept") {
        const { rejected, message = "" } = answer.partial;
        records.push(...got.slice(0, Math.max(0, got.length - rejected)));
        const partialSuccess = { rejectedLogRecords: rejected, errorMessage: message };
        res.writeHead(200, { "content-type": contentType });
        res.end(
          encoding === "protobuf"
            ? Buffer.from(Response.encode({ partialSuccess }).finish())
            : // int64 is a string in OTLP/JSON (the protobuf JSON mapping)
              JSON.stringify({ partialSuccess: { ...partialSuccess, rejectedLogRecords: String(rejected) } }),
        );
        return;
      }
      records.push(...got);
      res.writeHead(200, { "content-type": contentType });
      res.end(encoding === "protobuf" ? Buffer.alloc(0) : "{}");
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    records,
    requests,
    answers,
    waitForRequests(n, ms = 20_000) {
      if (requests.length >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () => reject(new Error(`only ${requests.length} of ${n} OTLP requests arrived`)),
          ms,
        );
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(t);
            resolve();
          },
        });
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port nobody listens on right now (bound and released): a collector that is down. */
export async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
