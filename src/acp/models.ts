/**
 * The models an editor can pick for a session (docs/editors.md "Editors (ACP)"): the model server's
 * own list — `GET <base_url>/models`, the probe `scoot doctor` and the REPL's `/model` use — read
 * under a short deadline, offered as the session's `model` config option (category `model`).
 * The list is read again whenever a session opens; the answer waits for it a little
 * (MODEL_LIST_WAIT_MS), and the editor gets a `config_option_update` when it changed. A server that gives no list (404, an error, no
 * answer in time) leaves the configured model as the only choice, and the reason is logged once.
 */
import type { SessionConfigOption } from "@agentclientprotocol/sdk";
import { probeBackendInfo } from "../backend/probe.js";
import { listsModel } from "../backend/wire.js";
import type { Config } from "../config/schema.js";

/** How long the list may take: an editor waits for its dropdown, not for its session. */
export const MODEL_LIST_TIMEOUT_MS = 5_000;
/**
 * How long session/new and session/load wait for the list once the session is open: the answer
 * then carries it (a client may pick its model from the answer alone); a later list still
 * reaches the editor as a `config_option_update`.
 */
export const MODEL_LIST_WAIT_MS = 2_000;
/** The config option that selects the session's model. */
export const MODEL_CONFIG_ID = "model";
/** How many names a refusal of an unknown model shows. */
const NAMES_SHOWN = 8;

export class ModelList {
  private ids: string[] | undefined;
  private unavailable: string | undefined;

  constructor(
    private readonly backend: Config["backend"],
    private readonly token: () => string | undefined,
    private readonly log: (line: string) => void,
  ) {}

  /** Reads the list again; true when it differs from the one known before. */
  async refresh(): Promise<boolean> {
    const r = await probeBackendInfo(this.backend, this.token(), MODEL_LIST_TIMEOUT_MS);
    if (!r.ok || r.value.ids.length === 0) {
      const why = r.ok ? `${r.value.url} lists no models` : r.error.message;
      if (why !== this.unavailable)
        this.log(`warning: the editor can choose only the configured model: ${why}`);
      this.unavailable = why;
      return false;
    }
    this.unavailable = undefined;
    const changed = this.ids === undefined || this.ids.join("\n") !== r.value.ids.join("\n");
    this.ids = r.value.ids;
    return changed;
  }

  /** The choices for a session on `current`: the server's list, `current` first when it lists it not. */
  choices(current: string): string[] {
    const ids = this.ids ?? [];
    return listsModel(ids, current) ? ids : [current, ...ids];
  }

  /** Whether the server's list is known and names `model` (Ollama's `:latest` counted). */
  lists(model: string): boolean | undefined {
    return this.ids === undefined ? undefined : listsModel(this.ids, model);
  }

  /** Why `model` cannot be chosen for a session on `current`, or undefined when it can. */
  refusal(model: string, current: string): string | undefined {
    const offered = this.choices(current);
    if (offered.includes(model)) return undefined;
    if (this.ids === undefined)
      return `unknown model "${model}": only ${current} can be chosen, the server's list is not known${this.unavailable ? ` (${this.unavailable})` : ""}`;
    const shown = offered.slice(0, NAMES_SHOWN).join(", ");
    const more = offered.length > NAMES_SHOWN ? ` (and ${offered.length - NAMES_SHOWN} more)` : "";
    return `unknown model "${model}": choose one the server lists: ${shown}${more}`;
  }

  /** The `model` select option of a session on `current`. */
  option(current: string): SessionConfigOption {
    return {
      id: MODEL_CONFIG_ID,
      name: "Model",
      description: "The model the next prompts go to (the model server's list)",
      category: "model",
      type: "select",
      currentValue: current,
      options: this.choices(current).map((id) => ({ value: id, name: id })),
    };
  }
}
