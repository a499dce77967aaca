/**
 * The shape every built-in tool has. The registry (`registry.ts`) lists them; the step
 * schema, the system prompt, the `parallel` allowlist and the policy gate all read it.
 */
import type { Config, PolicyMode } from "../config/schema.js";
import type { Decision, Effects, Result, Target } from "../core/types.js";
import type { GateSettings } from "../policy/types.js";
import type { SandboxService } from "../sandbox/launch.js";
import type { OutputSummary } from "./output-tally.js";

/** The gate bound to the run's mode and settings; tools that fan out or follow redirects call it again. */
export type BoundGate = (action: string, rawInput: string) => Decision;

export interface ToolContext {
  /** Project root: the process working directory. */
  cwd: string;
  config: Config;
  mode: PolicyMode;
  /** Aborted on the tool deadline or on SIGINT. */
  signal: AbortSignal;
  /** Effective tool deadline in ms (already resolved from tools.timeout_ms). */
  timeoutMs: number;
  /** Re-check a derived call (redirect hops) through the same gate; denials are audited. */
  gate: BoundGate;
  /**
   * Runs one of the calls this call declared (`children`), as the pipeline judged it when
   * the call was prepared: audit, deadline, clip. The only way one tool starts another; a
   * call it did not declare is not run.
   */
  call: (action: string, rawInput: string) => Promise<string>;
  /**
   * Where a tool that streams output (bash) reports its newest lines while it runs, throttled by
   * the tool; the pipeline turns them into `tool_output` events for the live view. Absent:
   * nobody is watching.
   */
  progress?: (lines: readonly string[]) => void;
  /** Environment for child processes, token variable already removed. */
  childEnv: NodeJS.ProcessEnv;
  /** Current session transcript path (recall reads it and its `.1`). */
  sessionPath?: string;
  /** Extra services that later capabilities attach (skills, MCP pool). */
  services: ToolServices;
  /**
   * For a content-replacing tool: the change the pipeline planned (and a person may have
   * approved). The tool writes `after` only if the file still holds `before`.
   */
  change?: PlannedContent;
}

/** The bytes a file holds when the call was planned (null: absent) and the text it will hold. */
export interface PlannedContent {
  before: Buffer | null;
  after: string;
  /**
   * The editor's text the change was planned from, when it differs from the disk (unsaved
   * changes, ACP with `fs.writeTextFile`): `after` applies to it, and the editor must still
   * hold it when the write goes.
   */
  base?: Buffer;
}

export interface ToolServices {
  skills?: unknown;
  mcp?: unknown;
  /** How bash is contained; tests without it get defaults from the context. */
  sandbox?: SandboxService;
  /** The run's protected identities (policy/identity.ts), checked on what a file tool opened. */
  identities?: Pick<GateSettings, "mode" | "protectedIdentities">;
  /**
   * An editor's open buffers (ACP `fs/read_text_file`): file_read sees unsaved changes; when
   * the editor writes files too (`fs/write_text_file`), file_write and file_edit write through it.
   */
  editorBuffers?: EditorBuffers;
}

export interface EditorBuffers {
  /** The file as the editor has it; undefined when the editor cannot say (then the disk is read). */
  read(absPath: string, signal: AbortSignal): Promise<string | undefined>;
  /** The editor's write of `absPath`, when it writes that file now; undefined: the tools write the disk. */
  writer?(absPath: string): EditorWrite | undefined;
}

/** Has the editor write `content` to `absPath`; rejects with the editor's error. */
export type EditorWrite = (absPath: string, content: string, signal: AbortSignal) => Promise<void>;

/**
 * How a call shows itself to people (docs/architecture.md "A step, file by file"): the live
 * view prints `tool  keyArgument`, the approval question asks about it, an editor titles its
 * tool call with `title` and jumps to `locations`, the trace and telemetry name it. Computed
 * once, from the validated input, when the call is prepared.
 */
export interface Presentation {
  /** A short sentence: `Read src/app.ts`, `Run npm test`, `GET https://example.com`. */
  title: string;
  /** The argument that says what the call does: `npm test`, `src/calc.py`, `gh/issues`. */
  keyArgument: string;
  /** The paths the call names, as written (absolute or relative to the project), with a start line. */
  locations: readonly CallLocation[];
  /** Editors group searches apart from plain reads; other kinds follow the declared capability. */
  search?: boolean;
}

export interface CallLocation {
  path: string;
  line?: number;
}

/**
 * What a tool gives back: the text the model reads, whether the call failed (an error, a
 * refusal by the tool, a deadline), and facts consumers read instead of parsing the text.
 */
export interface ToolResult {
  text: string;
  failed?: boolean;
  details?: ToolDetails;
}

export interface ToolDetails {
  /** bash: the command's exit status (absent when it was stopped or never started). */
  exitCode?: number;
  /** The deadline or an interrupt ended the call. */
  stopped?: "deadline" | "interrupted";
  /**
   * bash: the whole output as it streamed (bytes and lines, kept or not) and its last lines;
   * the live view shows those with the true size, not the clip the model saw.
   */
  output?: OutputSummary;
}

export interface Tool<I = unknown> {
  name: string;
  /** One or two sentences for the system prompt. */
  describe: string;
  /** The action_input shape as shown in the prompt, e.g. `{"path": "..."}` or `command string`. */
  inputShape: string;
  /**
   * The fields a call's arguments may hold (a text tool: the fields that carry its text).
   * Absent: the tool takes any object its `parse` accepts (recall's two shapes).
   */
  inputFields?: readonly string[];
  /** A tool whose input is plain text: the field name that text has where an object is needed. */
  textName?: string;
  /** Observation clip size in bytes (head + tail kept). */
  clipBytes: number;
  /** Validate the raw action_input text. Error text says exactly what is wrong. */
  parse(raw: string): Result<I>;
  /** What the call would touch; the gate decides from this alone. */
  effects(input: I): Effects;
  /** How the call shows itself (title, key argument, locations); see Presentation. */
  present(input: I): Presentation;
  /**
   * What an "always" (or "reject always") answer to this call covers, and what a rule's `match`
   * names (docs/safety.md "Approval scopes"). Every tool that can ask declares one; a tool
   * without it is covered whole (its reads never ask).
   */
  approvalScope?: ApprovalScope<I>;
  /**
   * Whether this call only reads the project and prints, so that in guarded mode it runs without
   * a question (docs/safety.md "Known-safe commands"): bash's known-safe commands. Read once, when
   * the call is prepared; absent: never.
   */
  knownSafe?: (input: I, where: ScopeWhere) => boolean;
  /**
   * A step, not a call, that ends the run with its input as the run's plan (`plan`, plan mode):
   * the pipeline never runs it. Read from the tool so a step's hot path needs no other module.
   */
  endsRunAsPlan?: true;
  /** When the tool is offered at all (default: always). */
  enabledWhen?: (run: RunFeatures) => boolean;
  /** Listed in the prompt's "prefer the structured tools over bash" rule. */
  preferOverShell?: boolean;
  /**
   * Present when the tool may run as a `parallel` child. Returns why this particular input
   * may not (e.g. an http_request that is not GET or HEAD), or undefined when it may.
   */
  parallelChild?: (input: I) => string | undefined;
  /**
   * The calls this call will start (`parallel`). The pipeline validates and judges every
   * one of them before anything runs, and `policy check` reports a denied one.
   */
  children?: (input: I) => readonly { action: string; input: string }[];
  /**
   * Present on tools that replace a file's content (file_write, file_edit): what the judged
   * write target will hold after this call, given the bytes it holds now (null: it does not
   * exist), or the observation of a call that will fail (then nothing is asked or written).
   * The pipeline computes it once: the approval shows it, the tool writes exactly it (see
   * ToolContext.change), the undo checkpoint keeps the bytes before (docs/sessions.md "Undo").
   */
  proposedContent?: (input: I, before: Buffer | null) => Result<string>;
  /**
   * Runs the call. `target` holds the paths the gate resolved and allowed (see Target): a
   * file tool opens those, never its input's path strings.
   */
  run(input: I, ctx: ToolContext, target: Target): Promise<ToolResult>;
}

/** What a call's scope is read from besides its input: the gate's verdict and the project. */
export interface ScopeWhere {
  /** The paths the gate resolved and allowed (every symlink followed). */
  target: Target;
  /** The project root with every symlink followed, as the targets are. */
  root(): string;
}

/**
 * A tool's approval scope (docs/safety.md "Approval scopes"): the text that names what one
 * "always" covers — `git status`, `notes.txt`, `POST https://example.com`, `github/create_issue` —
 * which is also what a `[[tools.rules]]` entry's `match` says. Two calls share an "always" and a
 * rule exactly when their scope texts are equal.
 */
export interface ApprovalScope<I> {
  /** The scope of one call the gate allowed. */
  of(input: I, where: ScopeWhere): string;
  /** A rule's `match` read as this tool's scope text, or what is wrong with it and how to write it. */
  parseMatch(match: string): Result<string>;
  /** A scope as a rule writes it, for messages: `npm test`, `notes.txt`. */
  example: string;
  /** What the scope covers, in words: `every "git status …" command`, `writes to notes.txt`. */
  meaning(scope: string): string;
  /**
   * Whether a deny or ask rule with scope `rule` reaches this call even though the call's own
   * scope differs (bash: the rule's words appear in the command, in order). Only a narrowing
   * answer is widened so; an allow rule needs the very scope.
   */
  narrowedBy?(input: I, rule: string): boolean;
}

/** What a run has, for `enabledWhen`. */
export interface RunFeatures {
  hasMcp: boolean;
  hasSkills: boolean;
  /** A planning run (plan mode): the `plan` action is offered. */
  planning?: boolean;
}

/** Tool objects are stored heterogeneously; this alias keeps call sites readable. */
// biome-ignore lint/suspicious/noExplicitAny: the registry holds tools of differing input types
export type AnyTool = Tool<any>;
