/**
 * The configuration contract: every key declared once in `SCHEMA` — its type (`Config` is
 * derived from it), default, environment variable, check and, for the keys `scoot setup`
 * asks about, the question. Loading, env overlay, `config` output, setup and `doctor` are all
 * driven from here.
 */
import {
  choiceOf,
  TOKEN_SOURCES,
  type TokenSourceChoice,
  validateBaseUrl,
  validateEnvName,
  validateModel,
  validatePolicy,
  validateTokenCmd,
  validateTokenSource,
} from "./answers.js";
import { checkBaseUrl } from "./base-url.js";
import {
  bool,
  declareConfig,
  type InferConfig,
  int,
  oneOf,
  optionalBool,
  optionalInt,
  optionalOneOf,
  optionalText,
  policy,
  type SetupQuestion,
  strings,
  table,
  tables,
  text,
} from "./declare.js";

export type PolicyMode = "readonly" | "guarded" | "unrestricted";
export const POLICY_MODES: readonly PolicyMode[] = ["readonly", "guarded", "unrestricted"];

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
   * Variables for a stdio server. A plain `value` is configuration, not a secret (docs/mcp.md "MCP
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
  plan_file?: unknown;
  plan_sha256?: unknown;
  [key: string]: unknown;
}

/**
 * Upper bounds of every duration and size key (docs/configuration.md "Configuration").
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

const BACKEND_APIS = ["chat", "responses"] as const;

/**
 * Every key of the configuration, declared once (builders in `config/declare.ts`): the type,
 * the default, the `SCOOT_*` variable, the check and its messages, and setup's question.
 */
export const SCHEMA = declareConfig({
  backend: {
    api: oneOf(BACKEND_APIS, {
      default: "chat",
      doc: "wire API",
      setup: {
        flag: "api",
        question: `Wire API (${BACKEND_APIS.join(" or ")})`,
        answer: choiceOf("api", BACKEND_APIS),
      },
    }),
    base_url: text({
      default: "http://127.0.0.1:11434/v1",
      doc: "OpenAI-compatible base URL",
      valid: checkBaseUrl,
      setup: { flag: "base-url", question: "Model server base URL", answer: validateBaseUrl },
    }),
    model: text({
      default: "qwen2.5",
      doc: "model name",
      setup: { flag: "model", question: "Model name", answer: validateModel },
    }),
    timeout_ms: int({
      min: 0,
      max: LIMITS.TIMEOUT_MS_MAX,
      default: 120_000,
      doc: "per backend call; 0 = default",
    }),
    max_retries: int({ min: 0, max: LIMITS.RETRIES_MAX, default: 2, doc: "transient errors only" }),
    structured_output: oneOf(["auto", "json_schema", "json_object", "none"], {
      default: "auto",
      doc: "response_format level",
    }),
    api_key_env: text({
      default: "OPENAI_API_KEY",
      doc: "first token source",
      setup: {
        flag: "token-env",
        question: "Environment variable holding the token",
        answer: validateEnvName,
      },
    }),
    api_key_file: optionalText({ doc: "second token source", unset: "<home>/token" }),
    api_key_cmd: optionalText({
      doc: "third token source",
      setup: { flag: "token-cmd", question: "Command that prints the token", answer: validateTokenCmd },
    }),
    ca_file: optionalText({ doc: "extra trusted PEM roots" }),
    store: bool({ default: false, doc: "Responses API store flag" }),
    /** Tokens; 0 = discover from the server (docs/context.md "Context window"). */
    context_window: int({
      min: 0,
      max: 10_000_000,
      default: 0,
      doc: "tokens; 0 = discover from the server and fit the history to it",
    }),
    /** A server answering plain JSON still works. */
    stream: bool({ default: true, doc: "ask for SSE streaming; plain JSON still works" }),
    extra_body: table({ doc: "merged into every request body" }),
  },
  agent: {
    max_turns: int({ min: 1, max: LIMITS.TURNS_MAX, default: 32, doc: "turns per run" }),
    default_mode: oneOf(["goal", "plan"], {
      default: "goal",
      doc: 'plan: -e and the REPL\'s goals are planned first, in readonly (docs/safety.md "Plan mode")',
    }),
    compactor: oneOf(["extractive", "drop"], { default: "extractive", doc: "summary style" }),
    /**
     * Whether an approved plan binds an interactive plan run as `--execute-plan` binds `-e`
     * (docs/safety.md "Plans as contracts"). `--execute-plan` and a job's `plan_file` always bind.
     */
    plan_binding: oneOf(["off", "strict"], {
      default: "off",
      doc: "strict: an approved plan narrows the gate (--execute-plan and jobs' plan_file always do)",
    }),
    context_budget_bytes: int({
      min: 0,
      max: LIMITS.BYTES_MAX,
      default: 80_000,
      doc: "0 disables compaction",
    }),
    max_malformed_steps: int({
      min: 1,
      max: LIMITS.MALFORMED_MAX,
      default: 3,
      doc: "consecutive invalid steps",
    }),
    /** AGENTS.md to the model (docs/context.md "Project instructions"). */
    project_instructions: optionalBool({
      doc: "AGENTS.md to the model; unset = true, false for scheduled jobs",
      unset: "true, false for scheduled jobs",
    }),
    /** The AGENTS.md files read as a session starts share this budget (docs/context.md "Project instructions"). */
    project_instructions_max_bytes: int({
      min: 1,
      max: 1_048_576,
      default: 32_768,
      doc: "bytes of AGENTS.md read as a session starts, nearest first (32 KiB, as Codex)",
    }),
  },
  tools: {
    timeout_ms: int({
      min: 0,
      max: LIMITS.TIMEOUT_MS_MAX,
      default: 30_000,
      doc: "every tool call; 0 = default",
    }),
    policy: policy<PolicyMode>({
      default: "guarded",
      doc: "guarded, readonly, unrestricted",
      setup: {
        flag: "policy",
        question: `Tool policy (${POLICY_MODES.join(", ")})`,
        answer: validatePolicy,
      },
    }),
    confine_writes: bool({ default: true, doc: "guarded: writes stay in the project" }),
    block_internal_http: bool({ default: true, doc: "guarded: no internal hosts" }),
    secret_paths: strings({ doc: "extra paths always secret" }),
    /** docs/safety.md "Shell containment". */
    sandbox: oneOf(["auto", "bwrap", "off"], {
      default: "auto",
      doc: "bash under bubblewrap in guarded mode and jobs",
    }),
    sandbox_network: bool({ default: false, doc: "sandboxed bash shares the host network" }),
    sandbox_bwrap_path: optionalText({ doc: "absolute path of bwrap (else fixed system places)" }),
    env_passthrough: strings({ doc: "secret-looking variables still passed to bash" }),
    /** docs/safety.md "Approval". */
    approval: optionalOneOf(["ask", "never"], {
      doc: "ask | never; unset: ask in a REPL on a terminal and in ACP, never where nobody can answer",
      unset: "ask in a REPL on a terminal and in ACP, never elsewhere",
    }),
    /** docs/safety.md "Known-safe commands". */
    approval_safe_commands: bool({
      default: true,
      doc: "guarded: known-safe read-only commands (ls, git status, …) run without a question",
    }),
    /**
     * Raw rule tables; `agent/approval-rules.ts` checks each against the tools' scopes and the
     * commands refuse a configuration with a bad one (docs/safety.md "Rules").
     */
    rules: tables({
      doc: "[[tools.rules]] {tool, match, decision = allow | ask | deny, project?}",
      fileOnly:
        "rules are read only from the config file in Scoot's home (a variable could come from a project)",
    }),
  },
  skills: {
    enabled: bool({ default: true, doc: "load skills" }),
    include_project_skills: bool({ default: false, doc: "<cwd>/.agents/skills" }),
    include_agents_skills: bool({ default: false, doc: "~/.agents/skills" }),
    extra_paths: strings({ doc: "more skill directories" }),
  },
  /** Raw server tables; `config/mcp-servers.ts` validates each entry and names the bad ones. */
  mcp: {
    servers: tables({ doc: "[[mcp.servers]] entries" }),
  },
  audit: {
    level: oneOf(["debug", "info", "warn", "error"], { default: "info", doc: "threshold" }),
    to_file: bool({ default: true, doc: "write logs/audit.jsonl" }),
    max_retained_generations: int({
      min: 0,
      max: LIMITS.GENERATIONS_MAX,
      default: 8,
      doc: "retired files kept",
    }),
    max_file_bytes: int({ min: 1, max: LIMITS.BYTES_MAX, default: 16_777_216, doc: "rotation threshold" }),
    hmac_key_file: optionalText({
      doc: "0600 key file: the event chain becomes an HMAC chain",
      unset: "a plain SHA-256 chain",
    }),
  },
  /** Raw job tables; `schedule/jobs.ts` validates each one and skips the bad ones with a warning. */
  schedule: {
    enabled: bool({ default: false, doc: "allow schedule/daemon runs" }),
    poll_ms: int({ min: 1, max: LIMITS.POLL_MS_MAX, default: 1000, doc: "scheduler tick" }),
    jobs: tables<JobConfig>({ doc: "[[schedule.jobs]] entries" }),
  },
  edge: {
    max_job_policy: policy<PolicyMode>({ default: "readonly", doc: "ceiling for --unattended" }),
  },
  /** Audit events to OpenTelemetry (docs/telemetry.md "Telemetry and metrics"); `telemetry/settings.ts` resolves it. */
  telemetry: {
    otlp_endpoint: optionalText({
      doc: "OTLP/HTTP base URL (logs go to <url>/v1/logs); unset = OTEL_EXPORTER_OTLP_LOGS_ENDPOINT (as is), else OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/logs), else off",
      unset: "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT as is, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/logs, else off",
    }),
    otlp_protocol: optionalOneOf(["http/protobuf", "http/json"], {
      doc: "OTLP encoding; unset = OTEL_EXPORTER_OTLP_LOGS_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf",
      unset: "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf",
    }),
    /** Raw header tables, validated like MCP headers (`value` or `value_env`, `prefix`). */
    otlp_headers: tables({ doc: "[[telemetry.otlp_headers]] {name, value | value_env, prefix?}" }),
    service_name: optionalText({
      doc: "service.name; unset = OTEL_SERVICE_NAME, else scoot",
      unset: "OTEL_SERVICE_NAME, else scoot",
    }),
    resource_attributes: table({ doc: "extra resource attributes" }),
    timeout_ms: optionalInt({
      min: 1,
      max: LIMITS.TIMEOUT_MS_MAX,
      doc: "deadline of one export request, its own retries included; unset = OTEL_EXPORTER_OTLP_LOGS_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT, else 10000",
      unset: "OTEL_EXPORTER_OTLP_LOGS_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT, else 10000",
    }),
    max_batch_records: int({
      min: 1,
      max: 8192,
      default: 512,
      doc: "audit events per OTLP request; the cursor moves after each acknowledged one",
    }),
  },
  daemon: {
    metrics_listen: optionalText({
      doc: "host:port for Prometheus /metrics (a bare port means 127.0.0.1); unset = off",
      unset: "off",
    }),
  },
});

/** The configuration's type, read off the declarations above. */
export type Config = InferConfig<typeof SCHEMA>;
export type SectionName = keyof Config;

/**
 * What setup asks that is not a key: which token source applies. The answer decides
 * `backend.api_key_env` and `backend.api_key_cmd` (see `cli/setup.ts`).
 */
export const TOKEN_SOURCE_QUESTION: SetupQuestion<TokenSourceChoice> = {
  flag: "token-source",
  question: `Token source (${TOKEN_SOURCES.join(", ")})`,
  answer: validateTokenSource,
};

export type BackendApi = Config["backend"]["api"];
export type StructuredOutput = Config["backend"]["structured_output"];
export type AuditLevel = Config["audit"]["level"];

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
  return c.backend.timeout_ms > 0 ? c.backend.timeout_ms : SCHEMA.backend.timeout_ms.default;
}
export function effectiveToolTimeout(c: Config): number {
  return c.tools.timeout_ms > 0 ? c.tools.timeout_ms : SCHEMA.tools.timeout_ms.default;
}
