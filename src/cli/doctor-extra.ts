/** Doctor checks owned by later capabilities; each is a small function over the loaded config. */
import type { Config } from "../config/schema.js";
import type { Cli } from "./context.js";
import type { Check } from "./doctor.js";

export async function doctorExtraChecks(_config: Config, _cli: Cli, _root: string): Promise<Check[]> {
  return [];
}
