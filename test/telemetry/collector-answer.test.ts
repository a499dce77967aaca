/**
 * What a collector's answer means (src/telemetry/collector-answer.ts): which statuses may be
 * retried, the message in a `google.rpc.Status` body as the official transport hands it over
 * (JSON, or protobuf decoded as UTF-8 text), and the partial success in a deserialized response.
 */
import { describe, expect, it } from "vitest";
import {
  collectorMessage,
  isRetryableStatus,
  MAX_MESSAGE_CHARS,
  partialSuccessOf,
} from "../../src/telemetry/collector-answer.js";
import { describeSendError as describeError } from "../../src/telemetry/otlp.js";

/** google.rpc.Status {code, message}, encoded by hand, then decoded as the transport does. */
function protobufStatusText(code: number, message: string, details = false): string {
  const text = Buffer.from(message, "utf8");
  const length: number[] = [];
  for (let n = text.length; ; n >>>= 7) {
    if (n < 0x80) {
      length.push(n);
      break;
    }
    length.push((n & 0x7f) | 0x80);
  }
  const tail = details ? Buffer.from([0x1a, 2, 0x0a, 0]) : Buffer.alloc(0);
  return Buffer.concat([Buffer.from([0x08, code, 0x12, ...length]), text, tail]).toString();
}

describe("retryable statuses", () => {
  it("only 429, 502, 503 and 504 may be retried", () => {
    expect([429, 502, 503, 504].every(isRetryableStatus)).toBe(true);
    for (const s of [400, 401, 403, 404, 405, 408, 413, 415, 500, 501, 301])
      expect(isRetryableStatus(s), String(s)).toBe(false);
  });

  it("an exporter error with a status is final unless retryable; one without (network) is retried", () => {
    const err = (code: number | undefined, data: string) =>
      Object.assign(new Error("Bad Request"), { code, data });
    expect(describeError(err(400, '{"code":3,"message":"bad body"}'))).toEqual({
      message: "HTTP 400 Bad Request: bad body",
      status: 400,
      retryable: false,
    });
    expect(describeError(err(503, "")).retryable).toBe(true);
    expect(describeError(Object.assign(new Error("connect ECONNREFUSED"), {})).retryable).toBe(true);
  });
});

describe("the collector's message", () => {
  it("from a JSON Status, a protobuf Status (short and long, with details) or plain text", () => {
    expect(collectorMessage('{"code":3,"message":"log record 2: invalid severity"}')).toBe(
      "log record 2: invalid severity",
    );
    expect(collectorMessage(protobufStatusText(3, "invalid severity"))).toBe("invalid severity");
    // 65 characters: its length byte is a printable "A", which must not lead the message.
    const sixtyFive = "x".repeat(60) + " done";
    expect(collectorMessage(protobufStatusText(3, sixtyFive))).toBe(sixtyFive);
    // 200 characters: a two-byte length, the first of which the UTF-8 decoding replaced.
    const long = `${"y".repeat(195)} tail`;
    expect(collectorMessage(protobufStatusText(3, long, true))).toBe(long);
    expect(collectorMessage("upstream connect error")).toBe("upstream connect error");
    expect(collectorMessage("")).toBe("");
  });

  it("is clipped and has no control characters", () => {
    const m = collectorMessage(`{"message":"a\\u0000b\\nc${"z".repeat(1000)}"}`);
    expect(m.startsWith("a b c")).toBe(true);
    expect(m.length).toBe(MAX_MESSAGE_CHARS + 3);
  });
});

describe("partial success", () => {
  it("reads the count as protobuf (number) and JSON (int64 string) give it", () => {
    expect(partialSuccessOf({ partialSuccess: { rejectedLogRecords: 3, errorMessage: "too big" } })).toEqual({
      rejected: 3,
      message: "too big",
    });
    expect(partialSuccessOf({ partialSuccess: { rejectedLogRecords: "12" } })).toEqual({
      rejected: 12,
      message: "",
    });
    // A warning without rejections is still worth saying; an empty one is no partial success.
    expect(partialSuccessOf({ partialSuccess: { errorMessage: "deprecated field" } })).toEqual({
      rejected: 0,
      message: "deprecated field",
    });
    for (const none of [
      {},
      { partialSuccess: {} },
      null,
      undefined,
      { partialSuccess: { rejectedLogRecords: "x" } },
    ])
      expect(partialSuccessOf(none)).toBeUndefined();
  });
});
