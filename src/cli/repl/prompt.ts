/**
 * The REPL's prompt (docs/keyboard.md "Plan mode"): `scoot> `, and `scoot (plan)> ` while plan
 * mode is on, so a goal typed then is known to be planned first.
 */
export const PROMPT = "scoot> ";
export const PLAN_PROMPT = "scoot (plan)> ";

export function replPrompt(planMode: boolean): string {
  return planMode ? PLAN_PROMPT : PROMPT;
}
