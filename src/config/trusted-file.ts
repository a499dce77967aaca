/**
 * Files Scoot trusts by identity, not by the directory they are named in (docs/safety.md
 * "Files Scoot trusts"). The configuration, the token file, the HMAC key and the files
 * `api_key_cmd` names decide what runs on the host and what is allowed, so each is checked the
 * way OpenSSH's StrictModes checks `~/.ssh`, before it is read:
 *
 * - its real path is owned by the user (or root) and is not writable by others, nor by a group
 *   other than the user's private one (Debian's user-private-group layout stays usable);
 * - it has one name (`st_nlink == 1`): a hard link elsewhere, in a repository a sandboxed
 *   command may write, would change it unseen;
 * - every directory on its real path is owned by the user or root and cannot be written by
 *   others (a sticky world-writable directory such as /tmp is fine: no one else may rename
 *   what is in it).
 *
 * Where the real path lies inside the project is the sandbox's and the gate's part: the real
 * location is hidden from bash and refused to the file tools (policy/protected-places.ts).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Owner uid that is always trusted besides the user's own. */
const ROOT_UID = 0;
const GROUP_WRITE = 0o020;
const OTHER_WRITE = 0o002;
const STICKY = 0o1000;
/** Where a group's name and members are looked up (only for a group-writable file or directory). */
const GROUP_FILE = "/etc/group";

/** Whether `gid` is the user's private group: named as the user, with no other members. */
function isPrivateGroup(gid: number): boolean {
  if (typeof process.getgid !== "function" || gid !== process.getgid()) return false;
  let user: string;
  let text: string;
  try {
    user = os.userInfo().username;
    text = fs.readFileSync(GROUP_FILE, "utf8");
  } catch {
    return false;
  }
  for (const line of text.split("\n")) {
    const [name, , id, members = ""] = line.split(":");
    if (Number(id) !== gid) continue;
    const others = members
      .split(",")
      .map((m) => m.trim())
      .filter((m) => m !== "" && m !== user);
    return name === user && others.length === 0;
  }
  return false;
}

function uid(): number | undefined {
  return typeof process.getuid === "function" ? process.getuid() : undefined;
}

function ownedByUs(st: fs.Stats): boolean {
  const me = uid();
  return me === undefined || st.uid === me || st.uid === ROOT_UID;
}

/** Why others could change `st`'s contents (or its directory's names), or undefined. */
function writableByOthers(st: fs.Stats, dir: boolean): string | undefined {
  // A sticky directory lets no one else rename or remove what another user put in it.
  if (dir && (st.mode & STICKY) !== 0) return undefined;
  if ((st.mode & OTHER_WRITE) !== 0) return "writable by every user";
  if ((st.mode & GROUP_WRITE) !== 0 && !isPrivateGroup(st.gid)) return `writable by group ${st.gid}`;
  return undefined;
}

function modeText(st: fs.Stats): string {
  return (st.mode & 0o7777).toString(8).padStart(4, "0");
}

/**
 * Why the file at `file` must not be trusted, as one line naming it and the fix; undefined
 * when it may be read (or does not exist: its absence is the caller's business). `what` names
 * it in the message ("config file", "token file", …).
 */
export function untrustedFileProblem(file: string, what: string): string | undefined {
  let real: string;
  try {
    real = fs.realpathSync.native(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    return `${what} ${file} cannot be resolved: ${(e as Error).message}`;
  }
  const shown = real === path.resolve(file) ? file : `${file} (really ${real})`;
  let st: fs.Stats;
  try {
    st = fs.statSync(real);
  } catch (e) {
    return `${what} ${shown} cannot be inspected: ${(e as Error).message}`;
  }
  // Not a regular file (a device, a FIFO): the reader refuses it, naming what it is.
  if (!st.isFile()) return undefined;
  if (!ownedByUs(st))
    return `${what} ${shown} is owned by uid ${st.uid}, not by you: another user could change what Scoot runs. Fix: copy it to a file of your own (cp ${real} ~/x && mv ~/x ${file})`;
  const others = writableByOthers(st, false);
  if (others)
    return `${what} ${shown} is ${others} (mode ${modeText(st)}): another user could change what Scoot runs. Fix: chmod go-w ${real}`;
  if (st.nlink !== 1)
    return `${what} ${shown} has ${st.nlink} names (a hard link): a command that can write another name changes what Scoot trusts. Fix: replace it with a copy (cp ${real} ${real}.copy && mv ${real}.copy ${real})`;
  for (let dir = path.dirname(real); ; dir = path.dirname(dir)) {
    let ds: fs.Stats;
    try {
      ds = fs.statSync(dir);
    } catch (e) {
      return `${what} ${shown}: directory ${dir} cannot be inspected: ${(e as Error).message}`;
    }
    if (!ownedByUs(ds))
      return `${what} ${shown} lies in ${dir}, owned by uid ${ds.uid}: that user could replace it. Fix: keep the file in a directory of your own`;
    const dirOthers = writableByOthers(ds, true);
    if (dirOthers)
      return `${what} ${shown} lies in ${dir}, ${dirOthers} (mode ${modeText(ds)}): another user could replace it. Fix: chmod go-w ${dir}`;
    if (dir === path.dirname(dir)) break;
  }
  return undefined;
}
