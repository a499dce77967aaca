import type { PolicyMode } from "../config/schema.js";

/** Settings the gate reads; built once from the loaded configuration. */
export interface GateSettings {
  mode: PolicyMode;
  /** Project root (process cwd) as given. */
  projectRoot: string;
  confineWrites: boolean;
  blockInternalHttp: boolean;
  /** tools.secret_paths plus the token file, absolute. */
  secretPaths: string[];
  /** MCP allowlists by server name (servers absent here are unknown). */
  mcpAllowed: Record<string, string[]>;
  /**
   * Resolves a path the way the filesystem would (symlinks followed) for the nearest
   * existing ancestor. Injected so the decision function itself does no I/O.
   */
  realpath: (p: string) => string | undefined;
}
