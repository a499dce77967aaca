/**
 * `final`: the answer to the user. The action_input is the answer text itself (not JSON);
 * giving it ends the run, and in `-e` mode it is what Scoot prints to stdout.
 */
import { CLIP } from "./clip.js";
import type { Result, Tool } from "./types.js";

export const finalTool: Tool<string> = {
  name: "final",
  describe: "Give the answer to the user and stop. action_input is the answer text itself.",
  inputShape: "answer text",
  clipBytes: CLIP.final,

  parse(raw: string): Result<string> {
    // An empty answer is almost always a slip; refusing it gives the model one more turn to answer.
    if (raw.trim() === "") return { ok: false, error: "final: the answer text must not be empty" };
    return { ok: true, value: raw };
  },

  effects() {
    return { capability: "native" };
  },

  async run(input) {
    return input;
  },
};
