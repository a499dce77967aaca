// A separate process that appends events to one audit log, for the concurrency and crash tests.
// argv: <audit file> <writer id> <count> <max_file_bytes> <max_retained> [pad bytes]
import { createAuditLog } from "../../dist/store/audit.js";

const [file, writer, count, maxFileBytes, maxRetained, pad = "0"] = process.argv.slice(2);
const log = createAuditLog({
  file,
  level: "info",
  toFile: true,
  maxRetained: Number(maxRetained),
  maxFileBytes: Number(maxFileBytes),
});
const padding = "p".repeat(Number(pad));
for (let i = 0; i < Number(count); i++) {
  const r = log.emit(`w${writer}`, "observation", `${writer}:${i}:${padding}`);
  if (!r.ok) {
    console.error(r.error);
    process.exit(1);
  }
}
