/** What every `skills` subcommand returns; the CLI prints the streams and exits with the code. */
export interface CommandOutput {
  stdout: string;
  stderr: string;
  /** 0 success, 1 the check or pack failed, 2 usage error (e.g. a missing directory). */
  exitCode: 0 | 1 | 2;
}

export function lines(items: readonly string[]): string {
  return items.length === 0 ? "" : `${items.join("\n")}\n`;
}
