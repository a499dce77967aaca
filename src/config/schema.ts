/**
 * The configuration contract: every key, its type and its default, in one table.
 * Loading, env overlay, `config` output and `doctor` are all driven from here.
 */

export type PolicyMode = "readonly" | "guarded" | "unrestricted";
export const POLICY_MODES: readonly PolicyMode[] = ["readonly", "guarded", "unrestricted"];

export type BackendApi = "chat" | "responses";
export type StructuredOutput = "auto" | "json_schema" | "json_object" | "none";
export type AuditLevel = "debug" | "info" | "warn" | "error";

export interface McpHeaderConfig {
  name: string;
  value?: string;
  value_env?: string;
  prefix?: string;
}

export interface McpEnvConfig {
  name: string;
  value?: string;
  value_env?: string;
  secret?: boolean;
}

export interface McpServerConfig {
  name: string;
  transport: "stdio" | "http" | "streamable_http" | "sse";
  command?: string;
  args: string[];
  /**
   * Variables for a stdio server. A plain `value` is configuration, not a secret (README "MCP
   * servers"); `value_env` (read from Scoot's environment) and `secret = true` mark credentials.
   */
  env: McpEnvConfig[];
  url?: string;
  headers: McpHeaderConfig[];
  allowed_tools: string[];
  policy?: string;
}

export interface JobConfig {
  id?: unknown;
  goal?: unknown;
  every_sec?: unknown;
  at_unix?: unknown;
  cron?: unknown;
  mode?: unknown;
  [key: string]: unknown;
}

export interface Config {
  backend: {
    api: BackendApi;
    base_url: string;
    model: string;
    timeout_ms: number;
    max_retries: number;
    structured_output: StructuredOutput;
    api_key_env: string;
    api_key_file?: string;
    api_key_cmd?: string;
    ca_file?: string;
    store: boolean;
    /** Tokens; 0 = discover from the server (issue 15, README "Context window"). */
    context_window: number;
    /** Ask for SSE streaming (issue 13); a server answering plain JSON still works. */
    stream: boolean;
    extra_body: Record<string, unknown>;
  };
  agent: {
    max_turns: number;
    default_mode: "goal" | "plan";
    compactor: "extractive" | "drop";
    context_budget_bytes: number;
    max_malformed_steps: number;
    /** AGENTS.md to the model (README "Project instructions"); unset = true, false for scheduled jobs. */
    project_instructions?: boolean;
  };
  tools: {
    timeout_ms: number;
    policy: PolicyMode;
    confine_writes: boolean;
    block_internal_http: boolean;
    secret_paths: string[];
    /** Issue 11: bash under bubblewrap (README "Shell containment"). */
    sandbox: "auto" | "bwrap" | "off";
    sandbox_network: boolean;
    sandbox_bwrap_path?: string;
    env_passthrough: string[];
    /** README "Approval": unset = ask in a REPL on a terminal and in ACP, never elsewhere. */
    approval?: "ask" | "never";
  };
  skills: {
    enabled: boolean;
    include_project_skills: boolean;
    include_agents_skills: boolean;
    extra_paths: string[];
  };
  /** Raw server tables; `config/mcp-servers.ts` validates each entry and names the bad ones. */
  mcp: { servers: Record<string, unknown>[] };
  audit: {
    level: AuditLevel;
    to_file: boolean;
    max_retained_generations: number;
    max_file_bytes: number;
    hmac_key_file?: string;
  };
  /** Raw job tables; `schedule/jobs.ts` validates each one and skips the bad ones with a warning. */
  schedule: { enabled: boolean; poll_ms: number; jobs: JobConfig[] };
  edge: { max_job_policy: PolicyMode };
  /** Audit events to OpenTelemetry (README "Telemetry and metrics"); `telemetry/settings.ts` resolves it. */
  telemetry: {
    otlp_endpoint?: string;
    otlp_protocol: "http/protobuf" | "http/json";
    /** Raw header tables, validated like MCP headers (`value` or `value_env`, `prefix`). */
    otlp_headers: Record<string, unknown>[];
    service_name?: string;
    resource_attributes: Record<string, unknown>;
    timeout_ms: number;
    max_batch_records: number;
  };
  daemon: { metrics_listen?: string };
}

/**
 * How a key's value is checked. `policy` is an enum whose unknown values become `readonly` in
 * the file and are ignored in the environment (a typo never loosens the gate).
 */
export type KeyKind =
  | { type: "string"; optional?: boolean }
  | { type: "int"; min: number; max: number }
  | { type: "bool" }
  | { type: "enum"; values: readonly string[] }
  | { type: "policy" }
  | { type: "string[]" }
  | { type: "object" }
  | { type: "table[]" };

export interface KeySpec {
  kind: KeyKind;
  default: unknown;
  /** One line for `config --help`-style listings and the README. */
  doc: string;
}

export type SectionName = keyof Config;

/**
 * Upper bounds of every duration and size key (README "Configuration", issue 17 item 9).
 * Durations stay below Node's timer limit (2^31-1 ms), which otherwise silently turns a huge
 * deadline into 1 ms; sizes and counts stay far below anything a run could use.
 */
export const LIMITS = {
  /** 24 h: longer than any single HTTP attempt or tool call should take. */
  TIMEOUT_MS_MAX: 86_400_000,
  /** 1 h between scheduler ticks. */
  POLL_MS_MAX: 3_600_000,
  RETRIES_MAX: 100,
  TURNS_MAX: 100_000,
  MALFORMED_MAX: 1_000,
  /** 1 GiB: the context budget and the audit rotation threshold. */
  BYTES_MAX: 1_073_741_824,
  GENERATIONS_MAX: 10_000,
  /** 10 years of 366 days: `every_sec` of a scheduled job. */
  EVERY_SEC_MAX: 316_224_000,
} as const;

export const SCHEMA: { [S in SectionName]: Record<string, KeySpec> } = {
  backend: {
    api: { kind: { type: "enum", values: ["chat", "responses"] }, default: "chat", doc: "wire API" },
    base_url: {
      kind: { type: "string" },
      default: "http://127.0.0.1:11434/v1",
      doc: "OpenAI-compatible base URL",
    },
    model: { kind: { type: "string" }, default: "qwen2.5", doc: "model name" },
    timeout_ms: {
      kind: { type: "int", min: 0, max: LIMITS.TIMEOUT_MS_MAX },
      default: 120_000,
      doc: "per backend call; 0 = default",
    },
    max_retries: {
      kind: { type: "int", min: 0, max: LIMITS.RETRIES_MAX },
      default: 2,
      doc: "transient errors only",
    },
    structured_output: {
      kind: { type: "enum", values: ["auto", "json_schema", "json_object", "none"] },
      default: "auto",
      doc: "response_format level",
    },
    api_key_env: { kind: { type: "string" }, default: "OPENAI_API_KEY", doc: "first token source" },
    api_key_file: {
      kind: { type: "string", optional: true },
      default: undefined,
      doc: "second token source",
    },
    api_key_cmd: { kind: { type: "string", optional: true }, default: undefined, doc: "third token source" },
    ca_file: { kind: { type: "string", optional: true }, default: undefined, doc: "extra trusted PEM roots" },
    store: { kind: { type: "bool" }, default: false, doc: "Responses API store flag" },
    context_window: {
      kind: { type: "int", min: 0, max: 10_000_000 },
      default: 0,
      doc: "tokens; 0 = discover from the server and fit the history to it",
    },
    stream: { kind: { type: "bool" }, default: true, doc: "ask for SSE streaming; plain JSON still works" },
    extra_body: { kind: { type: "object" }, default: {}, doc: "merged into every request body" },
  },
  agent: {
    max_turns: { kind: { type: "int", min: 1, max: LIMITS.TURNS_MAX }, default: 32, doc: "turns per run" },
    default_mode: {
      kind: { type: "enum", values: ["goal", "plan"] },
      default: "goal",
      doc: "plan is reserved",
    },
    compactor: {
      kind: { type: "enum", values: ["extractive", "drop"] },
      default: "extractive",
      doc: "summary style",
    },
    context_budget_bytes: {
      kind: { type: "int", min: 0, max: LIMITS.BYTES_MAX },
      default: 80_000,
      doc: "0 disables compaction",
    },
    max_malformed_steps: {
      kind: { type: "int", min: 1, max: LIMITS.MALFORMED_MAX },
      default: 3,
      doc: "consecutive invalid steps",
    },
    project_instructions: {
      kind: { type: "bool" },
      default: undefined,
      doc: "AGENTS.md to the model; unset = true, false for scheduled jobs",
    },
  },
  tools: {
    timeout_ms: {
      kind: { type: "int", min: 0, max: LIMITS.TIMEOUT_MS_MAX },
      default: 30_000,
      doc: "every tool call; 0 = default",
    },
    policy: { kind: { type: "policy" }, default: "guarded", doc: "guarded, readonly, unrestricted" },
    confine_writes: { kind: { type: "bool" }, default: true, doc: "guarded: writes stay in the project" },
    block_internal_http: { kind: { type: "bool" }, default: true, doc: "guarded: no internal hosts" },
    secret_paths: { kind: { type: "string[]" }, default: [], doc: "extra paths always secret" },
    sandbox: {
      kind: { type: "enum", values: ["auto", "bwrap", "off"] },
      default: "auto",
      doc: "bash under bubblewrap in guarded mode and jobs",
    },
    sandbox_network: {
      kind: { type: "bool" },
      default: false,
      doc: "sandboxed bash shares the host network",
    },
    sandbox_bwrap_path: {
      kind: { type: "string", optional: true },
      default: undefined,
      doc: "absolute path of bwrap (else fixed system places)",
    },
    env_passthrough: {
      kind: { type: "string[]" },
      default: [],
      doc: "secret-looking variables still passed to bash",
    },
    approval: {
      kind: { type: "enum", values: ["ask", "never"] },
      default: undefined,
      doc: "ask | never; unset: ask in a REPL on a terminal and in ACP, never where nobody can answer",
    },
  },
  skills: {
    enabled: { kind: { type: "bool" }, default: true, doc: "load skills" },
    include_project_skills: { kind: { type: "bool" }, default: false, doc: "<cwd>/.agents/skills" },
    include_agents_skills: { kind: { type: "bool" }, default: false, doc: "~/.agents/skills" },
    extra_paths: { kind: { type: "string[]" }, default: [], doc: "more skill directories" },
  },
  mcp: {
    servers: { kind: { type: "table[]" }, default: [], doc: "[[mcp.servers]] entries" },
  },
  audit: {
    level: {
      kind: { type: "enum", values: ["debug", "info", "warn", "error"] },
      default: "info",
      doc: "threshold",
    },
    to_file: { kind: { type: "bool" }, default: true, doc: "write logs/audit.jsonl" },
    max_retained_generations: {
      kind: { type: "int", min: 0, max: LIMITS.GENERATIONS_MAX },
      default: 8,
      doc: "retired files kept",
    },
    max_file_bytes: {
      kind: { type: "int", min: 1, max: LIMITS.BYTES_MAX },
      default: 16_777_216,
      doc: "rotation threshold",
    },
    hmac_key_file: {
      kind: { type: "string", optional: true },
      default: undefined,
      doc: "0600 key file: the event chain becomes an HMAC chain",
    },
  },
  schedule: {
    enabled: { kind: { type: "bool" }, default: false, doc: "allow schedule/daemon runs" },
    poll_ms: { kind: { type: "int", min: 1, max: LIMITS.POLL_MS_MAX }, default: 1000, doc: "scheduler tick" },
    jobs: { kind: { type: "table[]" }, default: [], doc: "[[schedule.jobs]] entries" },
  },
  edge: {
    max_job_policy: { kind: { type: "policy" }, default: "readonly", doc: "ceiling for --unattended" },
  },
  telemetry: {
    otlp_endpoint: {
      kind: { type: "string", optional: true },
      default: undefined,
      doc: "OTLP/HTTP base URL (logs go to <url>/v1/logs); unset = OTEL_EXPORTER_OTLP_ENDPOINT, else off",
    },
    otlp_protocol: {
      kind: { type: "enum", values: ["http/protobuf", "http/json"] },
      default: "http/protobuf",
      doc: "OTLP encoding",
    },
    otlp_headers: {
      kind: { type: "table[]" },
      default: [],
      doc: "[[telemetry.otlp_headers]] {name, value | value_env, prefix?}",
    },
    service_name: {
      kind: { type: "string", optional: true },
      default: undefined,
      doc: "service.name; unset = OTEL_SERVICE_NAME, else scoot",
    },
    resource_attributes: { kind: { type: "object" }, default: {}, doc: "extra resource attributes" },
    timeout_ms: {
      kind: { type: "int", min: 1, max: LIMITS.TIMEOUT_MS_MAX },
      default: 10_000,
      doc: "deadline of one export request, its own retries included",
    },
    max_batch_records: {
      kind: { type: "int", min: 1, max: 8192 },
      default: 512,
      doc: "audit events per OTLP request; the cursor moves after each acknowledged one",
    },
  },
  daemon: {
    metrics_listen: {
      kind: { type: "string", optional: true },
      default: undefined,
      doc: "host:port for Prometheus /metrics (a bare port means 127.0.0.1); unset = off",
    },
  },
};

/** Fresh defaults: every call returns new arrays and objects so callers may mutate. */
export function defaultConfig(): Config {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [section, keys] of Object.entries(SCHEMA)) {
    const s: Record<string, unknown> = {};
    for (const [key, spec] of Object.entries(keys)) {
      if (spec.default !== undefined) s[key] = structuredClone(spec.default);
    }
    out[section] = s;
  }
  return out as unknown as Config;
}

/** Effective deadlines: 0 means "the default", never "no deadline". */
export function effectiveBackendTimeout(c: Pick<Config, "backend">): number {
  return c.backend.timeout_ms > 0 ? c.backend.timeout_ms : (SCHEMA.backend.timeout_ms!.default as number);
}
export function effectiveToolTimeout(c: Config): number {
  return c.tools.timeout_ms > 0 ? c.tools.timeout_ms : (SCHEMA.tools.timeout_ms!.default as number);
}
