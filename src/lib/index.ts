/**
 * `import { createScoot } from "scoot"` (docs/editors.md "Library API"). The package root exports this
 * facade only: internal modules stay free to change.
 */
export {
  type AgentEvent,
  createScoot,
  type PolicyChoice,
  type PolicyMode,
  type RunOptions,
  type RunOutcome,
  type RunStop,
  type Scoot,
  type ScootOptions,
  version,
} from "./scoot.js";
