/**
 * The audit writer as it was before issue 12 (main at a105a27), ported line for line for
 * bench/audit.mjs to measure against in the same run: a stat per event for the size check,
 * reopen + append per event (appendFileSync), no fsync, no chain, a lock only around rotation.
 * Only the append path matters for the figure; rotation follows the old order.
 */
import fs from "node:fs";

function fileSize(file) {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

export function createBeforeLog({ file, maxFileBytes, maxRetained }) {
  let seq = 0;
  let gen = 1;
  const lock = `${file}.lock`;
  return {
    emit(sessionId, kind, msg, runId) {
      const event = {
        seq,
        ts: Date.now(),
        session_id: sessionId,
        ...(runId ? { run_id: runId } : {}),
        kind,
        msg,
      };
      const line = `${JSON.stringify(event)}\n`;
      const bytes = Buffer.byteLength(line);
      const size = fileSize(file);
      if (size > 0 && size + bytes > maxFileBytes) {
        const fd = fs.openSync(lock, "wx", 0o600);
        fs.writeSync(fd, String(process.pid));
        fs.closeSync(fd);
        fs.writeFileSync(`${file}.gen.tmp`, `${gen + 1}\n`);
        fs.renameSync(`${file}.gen.tmp`, `${file}.gen`);
        fs.linkSync(file, `${file}.${gen}`);
        fs.unlinkSync(file);
        if (gen > maxRetained) {
          fs.rmSync(`${file}.${gen - maxRetained}`, { force: true });
          fs.appendFileSync(`${file}.gaps.jsonl`, `${JSON.stringify({ gap_from: gen - maxRetained })}\n`);
        }
        gen += 1;
        fs.rmSync(lock, { force: true });
      }
      fs.appendFileSync(file, line, { mode: 0o600 });
      seq += 1;
      return { ok: true, value: event };
    },
  };
}
