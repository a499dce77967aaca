/**
 * The environment a sandboxed command gets (issue 11): Scoot's own token variable and every
 * variable whose name looks like a secret are dropped, because a command can print its
 * environment as easily as a file. `tools.env_passthrough` names the ones to keep anyway.
 */

/** Names that look like they hold a secret (matched anywhere in the name, any case). */
export const SECRET_ENV_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i;

export interface ScrubResult {
  env: NodeJS.ProcessEnv;
  /** Names dropped, sorted (for the trace; never their values). */
  dropped: string[];
}

export function scrubEnv(
  env: NodeJS.ProcessEnv,
  opts: { tokenVar?: string; passthrough: readonly string[] },
): ScrubResult {
  const keep = new Set(opts.passthrough);
  const out: NodeJS.ProcessEnv = {};
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const secret = name === opts.tokenVar || SECRET_ENV_NAME.test(name);
    // The backend token is never passed through, whatever the list says.
    if (secret && (name === opts.tokenVar || !keep.has(name))) dropped.push(name);
    else out[name] = value;
  }
  return { env: out, dropped: dropped.sort() };
}
