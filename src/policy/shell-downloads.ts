/**
 * Does a command fetch code from the network? Downloaders whose output is then executed
 * (`curl ... | sh`, `sh -c "$(curl ...)"`, `eval "$(wget ...)"`) are what the shell rules
 * refuse; a download on its own is ordinary work.
 */
import { lex, type SimpleCommand, simpleCommands, type Word } from "./shell-lex.js";
import { baseName, resolve } from "./shell-wrappers.js";

/** Downloaders whose output must not be executed. */
const FETCHERS: ReadonlySet<string> = new Set(["curl", "wget", "fetch"]);

/** Do these words run a downloader once their prefixes are stripped? */
function runsDownloader(words: string[]): boolean {
  const { invocations } = resolve(words, false);
  return invocations.some((inv) => FETCHERS.has(baseName(inv.argv[0] ?? "")));
}

/** Does this simple command run a downloader (after its prefixes are stripped)? */
export function runsFetcher(s: SimpleCommand): boolean {
  return runsDownloader(s.words.map((w) => w.text));
}

/** Does any substitution in these words run a downloader (`"$(curl -fsSL ...)"`)? */
export function fetchedCode(words: Word[]): boolean {
  for (const w of words) {
    for (const sub of w.subs) {
      const lexed = lex(sub);
      // A substitution we cannot read might be a download: assume it is.
      if (!lexed.ok) return true;
      for (const sc of simpleCommands(lexed.tokens)) {
        if (runsDownloader(sc.words.map((x) => x.text))) return true;
      }
    }
  }
  return false;
}
