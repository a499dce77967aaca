/**
 * The listing index of `state/sessions/` (docs/sessions.md "Sessions and audit", *The listing index*):
 * `sessions list` gives exactly what reading every transcript gives, whatever happened to the
 * transcripts or to the index since the last listing.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { selectSessions, sessionNumbered } from "../../src/cli/session-listing.js";
import { listSessions, type Message, openSession } from "../../src/store/session.js";
import { INDEX_RACY_WINDOW_MS, indexPath, SESSION_INDEX_NAME } from "../../src/store/session-index.js";
import { latestSessionOfProject } from "../../src/store/session-meta.js";
import { builtFile, removeDir, tempDir } from "../helpers/cli.js";

let dir: string;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => removeDir(dir));

/** A listing made after the racy window: what was read now may be remembered. */
const later = () => Date.now() + INDEX_RACY_WINDOW_MS + 1000;

/** Whole-second mtimes, one apart (the newest written last), so a test can set one back exactly. */
let clock = Date.UTC(2021, 0, 1) / 1000;

function write(id: string, messages: Message[], { fresh = false } = {}): string {
  const file = path.join(dir, `${id}.jsonl`);
  fs.writeFileSync(file, messages.map((m) => `${JSON.stringify(m)}\n`).join(""), { mode: 0o600 });
  clock += 1;
  if (!fresh) fs.utimesSync(file, clock, clock);
  return file;
}

const conversation = (goal: string, n: number): Message[] => [
  { role: "system", content: "rules" },
  { role: "user", content: goal },
  ...Array.from({ length: n }, (_, i): Message => ({ role: "assistant", content: `step ${i}` })),
];

/** A listing without the modification times (a copy cannot always keep them to the nanosecond). */
function view(r: ReturnType<typeof listSessions>) {
  return {
    sessions: r.sessions.map(({ id, messages, firstUser }) => ({ id, messages, firstUser })),
    warnings: r.warnings,
  };
}

/** What reading every transcript gives: the same transcripts listed in a directory with no index. */
function truth() {
  const probe = tempDir();
  try {
    for (const n of fs.readdirSync(dir)) {
      const st = fs.lstatSync(path.join(dir, n));
      if (!st.isFile() || n === SESSION_INDEX_NAME) continue;
      fs.copyFileSync(path.join(dir, n), path.join(probe, n));
      fs.utimesSync(path.join(probe, n), st.atime, st.mtime);
    }
    const r = view(listSessions(probe, 0)); // a clock at 0 remembers nothing
    return { sessions: r.sessions, warnings: r.warnings.map((w) => w.split(probe).join(dir)) };
  } finally {
    removeDir(probe);
  }
}

/** Waits until the clock has moved past the last change of `file`, as a later edit would be. */
async function pastLastChange(file: string): Promise<void> {
  const { ctimeMs } = fs.statSync(file);
  while (Date.now() - ctimeMs < 20) await new Promise((r) => setTimeout(r, 5));
}

function indexText(): string {
  return fs.readFileSync(indexPath(dir), "utf8");
}

const HEADER = "scoot-sessions-list-index 3";

/** The index's entries, `[file name, stamps, value]`, after its header line. */
function entries(text = indexText()): [string, number[], unknown[]][] {
  expect(text.startsWith(`${HEADER}\n`)).toBe(true);
  return JSON.parse(text.slice(HEADER.length + 1)) as [string, number[], unknown[]][];
}

/** Writes `list` as the index lays its entries out: one a line, after a comma from the second on. */
function writeEntries(list: unknown[]): void {
  const lines = list.map((e, i) => `${i === 0 ? "" : ","}${JSON.stringify(e)}\n`).join("");
  fs.writeFileSync(indexPath(dir), `${HEADER}\n[\n${lines}]\n`);
}

/** Rewrites the value of the entry of `name` (stamps kept). */
function forgeValue(name: string, change: (value: unknown[]) => void): void {
  const list = entries();
  const entry = list.find((e) => e[0] === name);
  expect(entry, `no index entry for ${name}`).toBeDefined();
  change(entry![2]);
  writeEntries(list);
}

/** Rewrites the entry of `name` so it claims `messages` messages (stamps kept). */
function forgeCount(name: string, messages: number): void {
  forgeValue(name, (v) => {
    v[0] = messages;
  });
}

describe("sessions list index", () => {
  it("is written after a listing and used for an unchanged transcript (a forged count shows it is read)", () => {
    write("a", conversation("tidy a", 3));
    const first = listSessions(dir, later());
    expect(first.sessions.map((s) => [s.id, s.messages, s.firstUser])).toEqual([["a", 5, "tidy a"]]);
    expect(entries().map((e) => e[0])).toEqual(["a.jsonl"]);
    forgeCount("a.jsonl", 99);
    // The stamps still match, so the remembered count is what the listing shows.
    expect(listSessions(dir, later()).sessions[0]!.messages).toBe(99);
  });

  it("an index of many write chunks is whole, in listing order, and keeps old lines around new ones", () => {
    // Long goals make each line a few hundred bytes: 300 of them span many write chunks.
    for (let i = 0; i < 300; i++)
      write(`s${String(i).padStart(3, "0")}`, conversation(`goal ${i} ${"x".repeat(300)}`, 2));
    listSessions(dir, later());
    expect(indexText().endsWith("\n")).toBe(true);
    expect(entries().map((e) => e[0])).toEqual(
      Array.from({ length: 300 }, (_, i) => `s${String(299 - i).padStart(3, "0")}.jsonl`),
    );
    expect(Buffer.byteLength(indexText())).toBeGreaterThan(64 * 1024);
    // A transcript in the middle changes: the lines before and after it are kept as they were.
    forgeCount("s299.jsonl", 77);
    forgeCount("s000.jsonl", 88);
    write("s150", conversation("changed", 4));
    const r = listSessions(dir, later());
    expect(r.sessions.find((x) => x.id === "s299")?.messages).toBe(77);
    expect(r.sessions.find((x) => x.id === "s000")?.messages).toBe(88);
    expect(r.sessions.find((x) => x.id === "s150")).toMatchObject({ messages: 6, firstUser: "changed" });
    expect(view(listSessions(dir, later())).sessions.length).toBe(300);
    expect(entries().filter((e) => e[0] === "s150.jsonl")).toHaveLength(1);
  });

  it("a transcript modified within the racy window is read, not remembered", () => {
    write("fresh", conversation("new", 1), { fresh: true });
    expect(listSessions(dir).sessions[0]!.messages).toBe(3);
    expect(fs.existsSync(indexPath(dir))).toBe(false);
  });

  it("an append is seen: the count changes although the index held the old one", () => {
    write("a", conversation("tidy a", 3));
    listSessions(dir, later());
    forgeCount("a.jsonl", 99);
    openSession(dir, "a").append({ role: "assistant", content: "one more" });
    const r = listSessions(dir, later());
    expect(r.sessions[0]!.messages).toBe(6);
    expect(view(r)).toEqual(truth());
  });

  const replacements: [string, (file: string) => void][] = [
    [
      "another file of the same size renamed over it, mtime set back",
      (file) => {
        const st = fs.statSync(file);
        const other = `${file}.new`;
        fs.writeFileSync(other, fs.readFileSync(file, "utf8").replace("tidy a", "TIDY A"));
        fs.renameSync(other, file);
        fs.utimesSync(file, st.atime, st.mtime);
      },
    ],
    [
      "rewritten in place, same size, mtime set back",
      (file) => {
        const st = fs.statSync(file);
        fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("tidy a", "TIDY A"));
        fs.utimesSync(file, st.atime, st.mtime);
      },
    ],
    [
      "an old transcript copied in over it, size and mtime of the original kept",
      (file) => {
        const st = fs.statSync(file);
        const old = path.join(dir, "old-copy.txt");
        fs.writeFileSync(old, fs.readFileSync(file, "utf8").replace("tidy a", "TIDY A"));
        fs.utimesSync(old, st.atime, st.mtime);
        fs.copyFileSync(old, file);
        fs.utimesSync(file, st.atime, st.mtime);
        fs.rmSync(old);
      },
    ],
    ["truncated", (file) => fs.truncateSync(file, fs.statSync(file).size - 20)],
    ["truncated to nothing", (file) => fs.truncateSync(file, 0)],
  ];
  for (const [what, change] of replacements) {
    it(`a transcript ${what} is read again`, async () => {
      const file = write("a", conversation("tidy a", 3));
      write("b", conversation("tidy b", 1));
      listSessions(dir, later());
      forgeCount("a.jsonl", 99);
      await pastLastChange(file);
      change(file);
      const r = listSessions(dir, later());
      expect(r.sessions.find((s) => s.id === "a")!.messages).not.toBe(99);
      expect(view(r)).toEqual(truth());
    });
  }

  it("an old transcript copied in (mtime in the past, no index line) is listed and then remembered", () => {
    write("a", conversation("tidy a", 3));
    listSessions(dir, later());
    const copied = write("old", conversation("from an older version", 7));
    fs.utimesSync(copied, new Date(2020, 0, 1), new Date(2020, 0, 1));
    const r = listSessions(dir, later());
    expect(r.sessions.map((s) => [s.id, s.messages])).toEqual([
      ["a", 5],
      ["old", 9],
    ]);
    expect(view(r)).toEqual(truth());
    expect(entries().map((e) => e[0])).toContain("old.jsonl");
  });

  it("a deleted transcript is not listed and leaves the index", () => {
    const a = write("a", conversation("tidy a", 3));
    write("b", conversation("tidy b", 1));
    listSessions(dir, later());
    fs.rmSync(a);
    const r = listSessions(dir, later());
    expect(r.sessions.map((s) => s.id)).toEqual(["b"]);
    expect(indexText()).not.toContain("a.jsonl");
  });

  it("a new retired part is read with its live file; the warnings of a bad line are given at every listing", () => {
    const file = write("a", conversation("tidy a", 3));
    fs.appendFileSync(file, "not json\n");
    const once = listSessions(dir, later());
    expect(once.warnings.some((w) => w.includes("a.jsonl:6:"))).toBe(true);
    const twice = listSessions(dir, later());
    expect(view(twice)).toEqual(view(once));
    fs.writeFileSync(`${file}.1`, `${JSON.stringify({ role: "user", content: "the first goal" })}\n`);
    const r = listSessions(dir, later());
    expect(r.sessions[0]).toMatchObject({ messages: 6, firstUser: "the first goal" });
    expect(view(r)).toEqual(truth());
  });

  it("names that cannot sit on an index line, and long first messages, are listed but not remembered", () => {
    write("tab\tname", conversation("odd name", 1));
    write("long", conversation(`paste ${"x".repeat(10_000)}`, 1));
    const r = listSessions(dir, later());
    expect(r.sessions.map((s) => s.id).sort()).toEqual(["long", "tab\tname"]);
    expect(view(r)).toEqual(truth());
    const text = fs.existsSync(indexPath(dir)) ? indexText() : "";
    expect(text).not.toContain("odd name");
    expect(text).not.toContain("paste");
  });

  const damaged: [string, () => void][] = [
    ["garbage", () => fs.writeFileSync(indexPath(dir), "\u0000\u0001 not an index")],
    ["torn (cut mid-entry)", () => fs.writeFileSync(indexPath(dir), indexText().slice(0, -30))],
    [
      "cut at a line's end (its closing bracket lost)",
      () => fs.writeFileSync(indexPath(dir), indexText().replace(/\]\n$/, "\n")),
    ],
    [
      "of an older format (another header)",
      () =>
        fs.writeFileSync(indexPath(dir), indexText().replace(`${HEADER}\n`, "scoot-sessions-list-index 2\n")),
    ],
    ["empty", () => fs.writeFileSync(indexPath(dir), "")],
    [
      "not JSON after its header (a broken entry)",
      () => fs.writeFileSync(indexPath(dir), indexText().replace('[5,"tidy a"', '[5,,"tidy a"')),
    ],
    [
      "holding an entry whose value has the wrong shape",
      () => fs.writeFileSync(indexPath(dir), indexText().replace('[5,"tidy a",[]]', '{"messages":99}')),
    ],
    [
      "holding an entry that is not an entry",
      () => writeEntries(entries().map((e) => (e[0] === "a.jsonl" ? 5 : e))),
    ],
    [
      "holding an entry whose stamps are text",
      () =>
        writeEntries(entries().map((e) => (e[0] === "a.jsonl" ? [e[0], e[1].join(":"), [99, "x", []]] : e))),
    ],
    [
      "holding two entries for one transcript, the first forged",
      () => {
        const list = entries();
        const a = list.find((e) => e[0] === "a.jsonl")!;
        writeEntries([[a[0], a[1].map((n, i) => (i === 1 ? n + 1 : n)), [99, "forged", []]], ...list]);
      },
    ],
    [
      "a symlink to another index",
      () => {
        const elsewhere = path.join(dir, "elsewhere.json");
        fs.writeFileSync(elsewhere, indexText().replace('[5,"tidy a"', '[99,"tidy a"'));
        fs.rmSync(indexPath(dir));
        fs.symlinkSync(elsewhere, indexPath(dir));
      },
    ],
    [
      "a directory",
      () => {
        fs.rmSync(indexPath(dir));
        fs.mkdirSync(indexPath(dir));
      },
    ],
    [
      "a FIFO",
      () => {
        fs.rmSync(indexPath(dir));
        execFileSync("mkfifo", [indexPath(dir)]);
      },
    ],
  ];
  for (const [what, damage] of damaged) {
    it(`an index that is ${what} is ignored: the listing is what the transcripts say`, () => {
      write("a", conversation("tidy a", 3));
      write("b", conversation("tidy b", 1));
      listSessions(dir, later());
      damage();
      const r = listSessions(dir, later());
      expect(view(r)).toEqual(truth());
      expect(r.sessions.find((s) => s.id === "a")!.messages).toBe(5);
      const st = fs.lstatSync(indexPath(dir));
      if (st.isFile()) {
        // A regular file is replaced by a whole, valid index on the next listing.
        expect(entries().map((e) => [e[0], e[2]])).toEqual([
          ["b.jsonl", [3, "tidy b", []]],
          ["a.jsonl", [5, "tidy a", []]],
        ]);
        expect(view(listSessions(dir, later()))).toEqual(view(r));
      }
    });
  }

  it("a listing killed while writing leaves a temporary index that the next listing removes", async () => {
    write("a", conversation("tidy a", 1));
    // A real listing process, killed after its temporary index is open: the index is rewritten
    // as it lists, so the process stops itself (SIGKILL) as soon as its temp file exists.
    const script = `
      import fs from "node:fs";
      const real = fs.openSync;
      fs.openSync = (f, ...rest) => {
        const fd = real(f, ...rest);
        if (String(f).endsWith(".tmp")) process.kill(process.pid, "SIGKILL");
        return fd;
      };
      const { listSessions } = await import(${JSON.stringify(builtFile("store/session.js"))});
      listSessions(${JSON.stringify(dir)}, Date.now() + 10000);
    `;
    const killed = await new Promise<NodeJS.Signals | null>((resolve) => {
      spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "ignore" }).on(
        "exit",
        (_c, sig) => resolve(sig),
      );
    });
    expect(killed).toBe("SIGKILL");
    const temps = () => fs.readdirSync(dir).filter((n) => n.endsWith(".tmp"));
    expect(temps()).toHaveLength(1);
    // A temp of a live writer (this process) and a foreign .tmp file are left alone.
    const mine = `${SESSION_INDEX_NAME}.${process.pid}.abc123.tmp`;
    fs.writeFileSync(path.join(dir, mine), "");
    fs.writeFileSync(path.join(dir, "notes.tmp"), "");
    expect(view(listSessions(dir, later())).sessions.map((x) => x.id)).toEqual(["a"]);
    expect(temps().sort()).toEqual([mine, "notes.tmp"].sort());
    expect(entries().map((e) => e[0])).toEqual(["a.jsonl"]);
  });

  it("is never half-written: concurrent listings in other processes always leave a whole index", async () => {
    for (let i = 0; i < 200; i++) write(`s${i}`, conversation(`goal ${i}`, i % 7));
    for (const n of fs.readdirSync(dir))
      fs.utimesSync(
        path.join(dir, n),
        new Date(2020, 0, 1),
        new Date(2020, 0, 1 + (Number(n.slice(1, -6)) % 28)),
      );
    // The built module, as the CLI runs it (npm run build first).
    const sessionModule = builtFile("store/session.js");
    const child = () =>
      new Promise<number | null>((resolve) => {
        // Each child lists 20 times, appending to one transcript between listings so it
        // rewrites the index every time.
        const script = `
          const { listSessions, openSession } = await import(${JSON.stringify(sessionModule)});
          for (let i = 0; i < 20; i++) {
            listSessions(${JSON.stringify(dir)}, Date.now() + 60000);
            openSession(${JSON.stringify(dir)}, "s" + (process.pid % 200)).append({ role: "assistant", content: "x" + i });
          }`;
        const p = spawn(process.execPath, ["--input-type=module", "-e", script], {
          stdio: ["ignore", "ignore", "inherit"],
        });
        p.on("close", resolve);
      });
    const running = Promise.all([child(), child(), child(), child()]);
    let done = false;
    void running.then(() => {
      done = true;
    });
    let reads = 0;
    while (!done) {
      try {
        const text = fs.readFileSync(indexPath(dir), "utf8");
        reads += 1;
        expect(text.endsWith("\n")).toBe(true);
        expect(entries(text).length).toBeGreaterThan(0);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
      }
      await new Promise((r) => setImmediate(r));
    }
    expect(await running).toEqual([0, 0, 0, 0]);
    expect(reads).toBeGreaterThan(0);
    expect(fs.readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    expect(view(listSessions(dir, later()))).toEqual(truth());
  }, 120_000);
});

describe("sessions list index: projects, and listings that show only some sessions", () => {
  /** A sidecar as a run writes it: the session `id` was started in `project`. */
  function sidecar(id: string, project: string): string {
    const file = path.join(dir, `${id}.meta.json`);
    fs.writeFileSync(
      file,
      `${JSON.stringify({ project_root: project, created: "2021-01-01T00:00:00.000Z" })}\n`,
    );
    // A whole-second mtime, as write() gives, so an edit can set it back exactly.
    fs.utimesSync(file, clock, clock);
    return file;
  }

  /** Rows as the table shows them, and the warnings, for `cwd` (every project with `all`). */
  function rows(cwd: string, all: boolean, limit = 100, now = later()) {
    const l = selectSessions(dir, { cwd, all, limit, now });
    return {
      rows: l.rows.map((r) => [r.id, r.messages, r.firstUser, r.project ?? null]),
      warnings: l.warnings,
    };
  }

  /** The same listing in a copy of the directory with no index, listed once (nothing remembered). */
  function rowsWithoutIndex(cwd: string, all: boolean, limit = 100) {
    const probe = tempDir();
    try {
      for (const n of fs.readdirSync(dir)) {
        const from = path.join(dir, n);
        const st = fs.lstatSync(from);
        if (n === SESSION_INDEX_NAME || n.endsWith(".tmp")) continue;
        if (st.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(from), path.join(probe, n));
        else if (st.isFile()) {
          fs.copyFileSync(from, path.join(probe, n));
          fs.utimesSync(path.join(probe, n), st.atime, st.mtime);
        }
      }
      const l = selectSessions(probe, { cwd, all, limit, now: 0 });
      return {
        rows: l.rows.map((r) => [r.id, r.messages, r.firstUser, r.project ?? null]),
        warnings: l.warnings.map((w) => w.split(probe).join(dir)),
      };
    } finally {
      removeDir(probe);
    }
  }

  let here: string;
  let there: string;
  beforeEach(() => {
    here = fs.realpathSync(tempDir());
    there = fs.realpathSync(tempDir());
  });
  afterEach(() => {
    removeDir(here);
    removeDir(there);
  });

  /** Three sessions: a (here), b (there), c (here), c the newest; the index written. */
  function threeSessions() {
    write("a", conversation("tidy a", 3));
    write("b", conversation("tidy b", 1));
    write("c", conversation("tidy c", 2));
    for (const [id, p] of [
      ["a", here],
      ["b", there],
      ["c", here],
    ] as const)
      sidecar(id, p);
    rows(here, true);
  }

  it("a sidecar's project is remembered: a forged one is what the listing shows while the sidecar is unchanged", () => {
    threeSessions();
    expect(entries().map((e) => e[0])).toEqual([
      "c.meta.json",
      "c.jsonl",
      "b.meta.json",
      "b.jsonl",
      "a.meta.json",
      "a.jsonl",
    ]);
    forgeValue("b.meta.json", (v) => {
      v[0] = here;
    });
    // The stamps still match, so the remembered project decides: b is listed here.
    expect(rows(here, false).rows.map((r) => r[0])).toEqual(["c", "b", "a"]);
  });

  const edits: [string, (file: string) => void][] = [
    [
      "rewritten in place, same size, mtime set back",
      (file) => {
        const st = fs.statSync(file);
        const text = fs.readFileSync(file, "utf8");
        fs.writeFileSync(file, text.replace(there, here.padEnd(there.length, "/")));
        expect(fs.statSync(file).size).toBe(st.size);
        fs.utimesSync(file, st.atime, st.mtime);
      },
    ],
    [
      "replaced by another file renamed over it, mtime set back",
      (file) => {
        const st = fs.statSync(file);
        fs.writeFileSync(`${file}.new`, fs.readFileSync(file, "utf8").replace(there, here));
        fs.renameSync(`${file}.new`, file);
        fs.utimesSync(file, st.atime, st.mtime);
      },
    ],
    ["removed", (file) => fs.rmSync(file)],
    [
      "turned into a symlink to a sidecar elsewhere",
      (file) => {
        const elsewhere = path.join(here, "meta.json");
        fs.copyFileSync(file, elsewhere);
        fs.rmSync(file);
        fs.symlinkSync(elsewhere, file);
      },
    ],
    ["not JSON any more", (file) => fs.writeFileSync(file, "{ not json")],
  ];
  for (const [what, edit] of edits) {
    it(`a sidecar ${what} is read again: every listing is the one without an index`, async () => {
      threeSessions();
      const file = path.join(dir, "b.meta.json");
      await pastLastChange(file);
      edit(file);
      for (const [cwd, all] of [
        [here, false],
        [there, false],
        [here, true],
      ] as const) {
        expect(rows(cwd, all)).toEqual(rowsWithoutIndex(cwd, all));
        // And again, from whatever the listing before remembered.
        expect(rows(cwd, all)).toEqual(rowsWithoutIndex(cwd, all));
      }
    });
  }

  it("a sidecar added to an old session, and sessions added and removed, are listed as without an index", () => {
    threeSessions();
    // An old session copied in, a sidecar given to it later.
    const old = write("old", conversation("from elsewhere", 4));
    fs.utimesSync(old, new Date(2020, 0, 1), new Date(2020, 0, 1));
    rows(here, true);
    sidecar("old", here);
    fs.rmSync(path.join(dir, "c.jsonl"));
    fs.rmSync(path.join(dir, "c.meta.json"));
    write("d", conversation("tidy d", 1));
    sidecar("d", there);
    for (const [cwd, all] of [
      [here, false],
      [there, false],
      [here, true],
    ] as const)
      expect(rows(cwd, all)).toEqual(rowsWithoutIndex(cwd, all));
    expect(rows(here, false).rows.map((r) => r[0])).toEqual(["a", "old"]);
    // The removed session's entries are gone from the index.
    expect(entries().some((e) => e[0].startsWith("c."))).toBe(false);
  });

  it("a listing of the newest reads only what it shows and keeps the other entries as they were", () => {
    for (let i = 0; i < 30; i++) {
      write(`s${String(i).padStart(2, "0")}`, conversation(`goal ${i}`, i % 4));
      sidecar(`s${String(i).padStart(2, "0")}`, i % 2 === 0 ? here : there);
    }
    rows(here, true);
    const before = entries();
    expect(before).toHaveLength(60);
    // Forged counts deep in the listing: a listing of the newest 5 never looks at them.
    forgeCount("s00.jsonl", 77);
    write("s30", conversation("the newest", 1));
    sidecar("s30", here);
    expect(rows(here, true, 5).rows.map((r) => r[0])).toEqual(["s30", "s29", "s28", "s27", "s26"]);
    const after = entries();
    expect(after.map((e) => e[0])).toContain("s30.jsonl");
    expect(after.find((e) => e[0] === "s00.jsonl")![2][0]).toBe(77);
    expect(after).toHaveLength(62);
    // The whole listing then uses them, and agrees with no index wherever the index is right.
    forgeCount("s00.jsonl", before.find((e) => e[0] === "s00.jsonl")![2][0] as number);
    expect(rows(here, true)).toEqual(rowsWithoutIndex(here, true));
    expect(rows(there, false, 3)).toEqual(rowsWithoutIndex(there, false, 3));
  });

  it("--continue and /resume <n> choose from the index while it holds, and from the files once they changed", async () => {
    threeSessions();
    expect(latestSessionOfProject(dir, here, "x")).toEqual({ ok: true, value: "c" });
    expect(sessionNumbered(dir, here, 2)).toEqual({ ok: true, value: "a" });
    // c moved to the other project by hand, its size and mtime kept.
    const file = path.join(dir, "c.meta.json");
    await pastLastChange(file);
    const st = fs.statSync(file);
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(here, there.padEnd(here.length, "/")));
    fs.utimesSync(file, st.atime, st.mtime);
    expect(fs.statSync(file).size).toBe(st.size);
    expect(latestSessionOfProject(dir, here, "x")).toEqual({ ok: true, value: "a" });
    expect(sessionNumbered(dir, here, 1)).toEqual({ ok: true, value: "a" });
    expect(sessionNumbered(dir, there, 1)).toEqual({ ok: true, value: "c" });
    // A forged project is believed while its sidecar is unchanged: the index is what was read.
    rows(here, true);
    forgeValue("b.meta.json", (v) => {
      v[0] = here;
    });
    expect(latestSessionOfProject(dir, here, "x")).toEqual({ ok: true, value: "b" });
  });

  it("a sidecar changed within the racy window is read, not remembered", () => {
    write("a", conversation("tidy a", 1));
    sidecar("a", here);
    // The listing's clock is the sidecar's own time: it was just written.
    expect(rows(here, false, 10, Date.now()).rows.map((r) => r[0])).toEqual(["a"]);
    const remembered = fs.existsSync(indexPath(dir)) ? entries().map((e) => e[0]) : [];
    expect(remembered).not.toContain("a.meta.json");
  });
});
