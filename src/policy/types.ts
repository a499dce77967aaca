import type { PolicyMode } from "../config/schema.js";
import type { PlaceResolutions, SeenPaths } from "./realpath.js";

/** What the gate asks of the protected identities (a `Set` will do). */
export interface IdentitySet {
  has(key: string): boolean;
  /** Collects them now if they are collected on demand (policy/identity.ts `lazyIdentities`). */
  prime?(): void;
}

/** Settings the gate reads; built once from the loaded configuration. */
export interface GateSettings {
  mode: PolicyMode;
  /**
   * What a readonly denial tells the model to do instead. Unset: run with --policy guarded;
   * a run lowered to readonly (a project root that is the home) says what lifts that instead.
   */
  readonlyFix?: string;
  /** Project root (process cwd) as given. */
  projectRoot: string;
  confineWrites: boolean;
  blockInternalHttp: boolean;
  /** tools.secret_paths plus the token file, absolute. */
  secretPaths: string[];
  /**
   * Scoot's own places (its home, the default home, the token file, the HMAC key, the file
   * `api_key_cmd` reads) and the credential stores under the user's home, absolute: refused
   * for reads and writes in readonly and guarded (policy/protected-places.ts).
   */
  protectedPaths: readonly string[];
  /** Folders of loaded skills: readable although they may lie inside a protected place. */
  readableInside: readonly string[];
  /** dev:ino of every protected file that exists (policy/identity.ts), collected on first use. */
  protectedIdentities: IdentitySet;
  /** MCP allowlists by server name (servers absent here are unknown). */
  mcpAllowed: Record<string, string[]>;
  /**
   * Resolves a path the way the filesystem would (symlinks followed) for the nearest
   * existing ancestor. Injected so the decision function itself does no I/O. `seen`: what
   * resolutions made together (one decision) already looked at, reused rather than asked again.
   */
  realpath: (p: string, seen?: SeenPaths) => string | undefined;
  /**
   * The places resolved once for a stretch of reads (policy/realpath.ts, "Kept place
   * resolutions"); the call pipeline tells it when a call that may move them starts and ends.
   * Absent: every decision resolves them.
   */
  places?: PlaceResolutions;
}
