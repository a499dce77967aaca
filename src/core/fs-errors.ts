/** How a Node fs error reads to a person or the model (shared by tools and atomic writes). */

/** One readable phrase for a Node fs error, e.g. "no such file or directory". */
export function fsErrorText(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return "no such file or directory";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EISDIR":
      return "is a directory";
    case "ENOTDIR":
      return "a parent of the path is not a directory";
    case "EROFS":
      return "read-only file system";
    case "ENOSPC":
      return "no space left on device";
    case "ENAMETOOLONG":
      return "file name too long";
    case "ELOOP":
      return "too many levels of symbolic links (or a symlink where the policy check found none)";
    case "EEXIST":
      return "already exists";
    default:
      return e instanceof Error ? e.message : String(e);
  }
}
