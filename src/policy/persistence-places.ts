/**
 * Persistence places (docs/safety.md "Persistence places"): files and directories whose
 * content runs later, outside every sandbox, when the user next opens a shell, logs in or
 * runs git. The file tools may not write them in readonly and guarded, and the sandbox binds
 * the project's repository places read-only. One table; the docs list is generated from it
 * (test/policy/persistence-places.test.ts keeps the two in step).
 *
 * Where a row matches ("wherever they lie"), judged on the resolved absolute path, lexical and
 * with symlinks followed, segments folded like secret names (case, width, trailing dots and
 * spaces: a case-insensitive filesystem opens `.BASHRC` as `.bashrc`, so the fold is applied
 * everywhere rather than guessed per filesystem):
 * - `home` rows: the row's segments as a consecutive run anywhere in the path, so the user's
 *   home, another user's home, and a copy of a home inside the project all count;
 * - `repository` rows: a `.git` segment followed, anywhere below it, by the row's last
 *   segment, so submodule and worktree git dirs (`.git/modules/x/hooks`) count too;
 * - `system` rows: the absolute path itself or anything inside it.
 */
import { foldSegment } from "./fold.js";

export type PersistenceScope = "home" | "repository" | "system";

export interface PersistencePlace {
  path: string;
  scope: PersistenceScope;
  why: string;
}

export const PERSISTENCE_PLACES: readonly PersistencePlace[] = [
  { path: ".bashrc", scope: "home", why: "bash runs it in every interactive shell" },
  { path: ".bash_profile", scope: "home", why: "bash runs it at login" },
  { path: ".bash_login", scope: "home", why: "bash runs it at login" },
  { path: ".bash_logout", scope: "home", why: "bash runs it at logout" },
  { path: ".bash_aliases", scope: "home", why: "the usual .bashrc sources it" },
  { path: ".profile", scope: "home", why: "sh, dash and display managers run it at login" },
  { path: ".zshrc", scope: "home", why: "zsh runs it in every interactive shell" },
  { path: ".zprofile", scope: "home", why: "zsh runs it at login" },
  { path: ".zshenv", scope: "home", why: "zsh runs it in every shell, scripts included" },
  { path: ".zlogin", scope: "home", why: "zsh runs it at login" },
  { path: ".zlogout", scope: "home", why: "zsh runs it at logout" },
  { path: ".xprofile", scope: "home", why: "the display manager runs it at a graphical login" },
  { path: ".xsessionrc", scope: "home", why: "the X session runs it at a graphical login" },
  { path: ".xinitrc", scope: "home", why: "startx runs it" },
  { path: ".pam_environment", scope: "home", why: "PAM sets its variables (LD_PRELOAD, PATH) at login" },
  { path: ".config/fish", scope: "home", why: "fish runs config.fish and conf.d at start" },
  { path: ".config/autostart", scope: "home", why: "the desktop starts its entries at login" },
  { path: ".config/systemd/user", scope: "home", why: "systemd starts user units" },
  { path: ".local/share/systemd/user", scope: "home", why: "systemd starts user units" },
  { path: ".config/environment.d", scope: "home", why: "systemd sets its variables for the user session" },
  { path: ".local/bin", scope: "home", why: "first on the usual PATH: a program there shadows a system one" },
  { path: ".ssh/rc", scope: "home", why: "sshd runs it at every login" },
  { path: ".gitconfig", scope: "home", why: "git runs its core.fsmonitor, core.pager, aliases, hooksPath" },
  {
    path: ".config/git/config",
    scope: "home",
    why: "git runs its core.fsmonitor, core.pager, aliases, hooksPath",
  },
  {
    path: ".git/hooks",
    scope: "repository",
    why: "git runs hooks when you next commit, merge, check out or push",
  },
  {
    path: ".git/config",
    scope: "repository",
    why: "git runs core.fsmonitor, core.hooksPath, core.sshCommand, filters and aliases from it",
  },
  {
    path: ".git/commondir",
    scope: "repository",
    why: "git reads config and hooks from the directory it names",
  },
  {
    path: ".git/config.worktree",
    scope: "repository",
    why: "git reads it as config when the repository enables it",
  },
  { path: "/etc/crontab", scope: "system", why: "cron runs it" },
  { path: "/etc/cron.d", scope: "system", why: "cron runs its entries" },
  { path: "/etc/cron.hourly", scope: "system", why: "cron runs its scripts" },
  { path: "/etc/cron.daily", scope: "system", why: "cron runs its scripts" },
  { path: "/etc/cron.weekly", scope: "system", why: "cron runs its scripts" },
  { path: "/etc/cron.monthly", scope: "system", why: "cron runs its scripts" },
  { path: "/var/spool/cron", scope: "system", why: "users' crontabs (crontab -e writes there)" },
  { path: "/etc/systemd/system", scope: "system", why: "systemd starts system units" },
  { path: "/etc/profile", scope: "system", why: "every login shell runs it" },
  { path: "/etc/profile.d", scope: "system", why: "/etc/profile runs its scripts" },
  { path: "/etc/bash.bashrc", scope: "system", why: "bash runs it in every interactive shell" },
];

function segments(p: string): string[] {
  return p
    .split(/[/\\]+/)
    .filter((s) => s !== "")
    .map(foldSegment);
}

let rows: { row: PersistencePlace; segs: string[] }[] | undefined;

/** The row an absolute path is, or lies inside; undefined when none. */
export function persistencePlaceOf(absPath: string): PersistencePlace | undefined {
  const segs = segments(absPath);
  rows ??= PERSISTENCE_PLACES.map((row) => ({ row, segs: segments(row.path) }));
  for (const { row, segs: want } of rows) {
    if (row.scope === "system") {
      if (want.every((s, j) => segs[j] === s)) return row;
    } else if (row.scope === "home") {
      for (let i = 0; i + want.length <= segs.length; i++) {
        if (want.every((s, j) => segs[i + j] === s)) return row;
      }
    } else {
      const git = segs.indexOf(want[0]!);
      if (git >= 0 && segs.slice(git + 1).includes(want[want.length - 1]!)) return row;
    }
  }
  return undefined;
}

/** The refusal for a write that lands on a persistence place (any of `candidates`), or undefined. */
export function persistenceRefusal(candidates: readonly (string | undefined)[]): string | undefined {
  for (const c of candidates) {
    if (c === undefined) continue;
    const row = persistencePlaceOf(c);
    if (row) {
      return `write: ${c} is a persistence place (${row.path}: ${row.why}, outside the sandbox); Scoot does not write there in readonly or guarded mode. Fix: make this change yourself, or run with --policy unrestricted`;
    }
  }
  return undefined;
}
