/** Doctor checks of the audit record: the HMAC key file and the live chain. */
import fs from "node:fs";
import type { Config } from "../config/schema.js";
import { loadAuditKey } from "../store/audit-chain.js";
import { verifyAudit } from "../store/audit-verify.js";
import { auditOptions } from "../store/audit-writer.js";
import type { Check } from "./doctor-check.js";

export function auditChecks(config: Config, live: string): Check[] {
  const checks: Check[] = [];
  const opts = auditOptions(config.audit, live);
  const key = loadAuditKey(opts.hmacKeyFile);
  if (!key.ok) return [{ name: "audit.key", status: "FAIL", detail: key.error }];
  if (key.value)
    checks.push({ name: "audit.key", status: "OK", detail: `HMAC chain with ${opts.hmacKeyFile}` });
  if (config.audit.level === "warn" || config.audit.level === "error") {
    checks.push({
      name: "audit.level",
      status: "WARN",
      detail: `audit.level = "${config.audit.level}" drops run, thought, observation and final records (tool_call, policy_deny and system_error are always written)`,
    });
  }
  if (!fs.existsSync(live)) return checks;
  try {
    const r = verifyAudit(live, { key: key.value, liveOnly: true });
    checks.push(
      r.ok
        ? {
            name: "audit.chain",
            status: "OK",
            detail: `live generation intact (${r.events} chained event(s)); scoot audit verify checks every generation`,
          }
        : {
            name: "audit.chain",
            status: "FAIL",
            detail: `${r.break!.kind} at ${r.break!.file}:${r.break!.line}: ${r.break!.detail} (see scoot audit verify)`,
          },
    );
  } catch (e) {
    checks.push({
      name: "audit.chain",
      status: "FAIL",
      detail: `cannot read ${live}: ${(e as Error).message}`,
    });
  }
  return checks;
}
