/**
 * `final`: the answer to the user. The action_input is the answer text itself (not JSON);
 * giving it ends the run, and in `-e` mode it is what Scoot prints to stdout.
 */
import { CLIP } from "./clip.js";
import { declareText } from "./declare.js";
import { done } from "./result.js";
import type { Tool } from "./types.js";

// An empty answer is almost always a slip; refusing it gives the model one more turn to answer.
/** The action that ends a run with an answer: a step, not a call (the pipeline never runs it). */
export const FINAL_ACTION = "final";

export const INPUT = declareText(FINAL_ACTION, {
  shape: "answer text",
  example: "The answer.",
  nonEmpty: "answer text",
  // `{"answer": …}` is read as the answer; any other object is an answer in JSON (kept as it is).
  fields: ["answer", "text"],
  objects: "keep",
});

export const finalTool: Tool<string> = {
  name: FINAL_ACTION,
  describe: "Give the answer to the user and stop. action_input is the answer text itself.",
  inputShape: INPUT.inputShape,
  inputFields: INPUT.names,
  clipBytes: CLIP.final,
  parse: INPUT.parse,

  effects() {
    return { capability: "native" };
  },

  present: (answer: string) => ({ title: "Answer", keyArgument: answer, locations: [] }),

  async run(input) {
    return done(input);
  },
};
