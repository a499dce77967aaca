/**
 * Whether the model server has a model of this name (the REPL's `/model <name>`, docs/keyboard.md
 * "The REPL"): the server's own list (`GET <base_url>/models`, the probe `scoot doctor` and
 * `scoot setup` list models with), read under a short deadline. A name it does not list is
 * refused with a few names it does; a server that gives no list (404, an error, no answer in
 * time, an empty list) cannot tell, so the name is taken with a warning that says so.
 */
import { probeBackendInfo } from "../backend/probe.js";
import { listsModel } from "../backend/wire.js";
import type { Config } from "../config/schema.js";

/** How long `/model` waits for the list: a person is waiting at the prompt. */
export const MODEL_LIST_TIMEOUT_MS = 5_000;
/** How many listed names a refusal shows. */
export const KNOWN_MODELS_SHOWN = 8;

export type ModelCheck =
  | { known: true }
  | { known: false; listed: string[] }
  /** The server could not tell; `why` says what happened. */
  | { known: "unchecked"; why: string };

export async function checkModelName(
  backend: Config["backend"],
  token: string | undefined,
  name: string,
): Promise<ModelCheck> {
  const r = await probeBackendInfo(backend, token, MODEL_LIST_TIMEOUT_MS);
  if (!r.ok) return { known: "unchecked", why: r.error.message };
  if (r.value.ids.length === 0) return { known: "unchecked", why: `${r.value.url} lists no models` };
  return listsModel(r.value.ids, name) ? { known: true } : { known: false, listed: r.value.ids };
}

/** "a, b, c (and 12 more)": the first names of a list for a one-line message. */
export function someNames(names: readonly string[], max = KNOWN_MODELS_SHOWN): string {
  const shown = names.slice(0, max).join(", ");
  return names.length > max ? `${shown} (and ${names.length - max} more)` : shown;
}
