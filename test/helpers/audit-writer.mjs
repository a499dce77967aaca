// A separate process that appends events to one audit log, for the concurrency and crash tests.
// argv: <audit file> <writer id> <count> <max_file_bytes> <max_retained> [pad bytes] [kill at]
// `kill at` is `<rotation step>:<n>`: the process SIGKILLs itself the n-th time a rotation
// reaches that step (sidecar, link, unlink, gap, evict), for the crash drill.
import { createAuditLog } from "../../dist/store/audit-writer.js";

const [file, writer, count, maxFileBytes, maxRetained, pad = "0", killAt = ""] = process.argv.slice(2);
const [killStep, killNth] = killAt.split(":");
let seen = 0;
const log = createAuditLog({
  file,
  level: "info",
  toFile: true,
  maxRetained: Number(maxRetained),
  maxFileBytes: Number(maxFileBytes),
  onRotationStep: (step) => {
    if (step === killStep && ++seen === Number(killNth)) process.kill(process.pid, "SIGKILL");
  },
});
const padding = "p".repeat(Number(pad));
for (let i = 0; i < Number(count); i++) {
  const r = log.emit(`w${writer}`, i % 5 === 0 ? "tool_call" : "observation", `${writer}:${i}:${padding}`);
  if (!r.ok) {
    console.error(r.error);
    process.exit(1);
  }
}
log.close();
