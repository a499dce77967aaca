/**
 * Terminal styling for the live view (docs/keyboard.md "The live view"). Colour is on only for a
 * terminal, and off with `NO_COLOR` (https://no-color.org), `--no-color` or `TERM=dumb`.
 * Six SGR codes are all the view needs, so no colour library is loaded.
 */
export interface Style {
  color: boolean;
  dim(s: string): string;
  bold(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

const sgr = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;

export function makeStyle(color: boolean): Style {
  if (!color) {
    const id = (s: string) => s;
    return { color, dim: id, bold: id, red: id, green: id, yellow: id, cyan: id };
  }
  return {
    color,
    dim: sgr(2, 22),
    bold: sgr(1, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
  };
}

/** Whether to colour a stream that is a terminal, given the environment and `--no-color`. */
export function colorWanted(isTty: boolean, env: NodeJS.ProcessEnv, noColorFlag: boolean): boolean {
  if (!isTty || noColorFlag) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  return env.TERM !== "dumb";
}
