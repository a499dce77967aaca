/**
 * `outline`: one fixture per language (test/fixtures/outline/<name>.txt, copied into a temp
 * project under its real name) with the exact entries expected, Markdown heading rules,
 * the keyword heuristic, the 400-entry cap, the fallbacks (broken grammar, parse out of
 * time) and the error paths. Everything runs the real tree-sitter grammars.
 */
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CLIP } from "../../src/tools/clip.js";
import { MAX_SIGNATURE_CHARS } from "../../src/tools/outline/entry.js";
import { LANGUAGES, languageFor } from "../../src/tools/outline/languages.js";
import {
  MAX_OUTLINE_ENTRIES,
  MAX_OUTLINE_FILE_BYTES,
  outlineSource,
  outlineTool,
} from "../../src/tools/outline.js";
import type { ToolContext } from "../../src/tools/types.js";
import { makeToolContext, runTool } from "../helpers/tool-context.js";

const requireHere = createRequire(import.meta.url);
const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/outline");
const wasm = (globalThis as unknown as { WebAssembly: { instantiate: unknown } }).WebAssembly;
const ORIGINAL_INSTANTIATE = wasm.instantiate;

let project: string;
let scratch: string;

beforeAll(() => {
  project = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-outline-"));
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-outline-grammars-"));
  for (const name of fs.readdirSync(FIXTURES)) {
    fs.copyFileSync(path.join(FIXTURES, name), path.join(project, name.replace(/\.txt$/, "")));
  }
});

afterAll(() => {
  fs.rmSync(project, { recursive: true, force: true });
  fs.rmSync(scratch, { recursive: true, force: true });
});

function outline(file: string, overrides: Partial<ToolContext> = {}): Promise<string> {
  return runTool(
    outlineTool,
    { path: file },
    makeToolContext({ cwd: project, timeoutMs: 30_000, ...overrides }),
  );
}

function write(name: string, content: string | Buffer): string {
  fs.mkdirSync(path.dirname(path.join(project, name)), { recursive: true });
  fs.writeFileSync(path.join(project, name), content);
  return name;
}

const later = () => Date.now() + 30_000;

/** The listing without its header line. */
const entriesOf = (out: string) => out.split("\n").slice(1);

describe("first use of several grammars at once", () => {
  // Runs first in the file so these grammars really load concurrently here.
  it("answers concurrent first calls (grammar loads queue up) and puts WebAssembly.instantiate back", async () => {
    const outs = await Promise.all(
      ["sample.go", "sample.rs", "Sample.java", "sample.rb"].map((f) => outline(f)),
    );
    expect(outs.map((o) => o.split("\n")[0])).toEqual([
      "outline of sample.go (Go, tree-sitter): 10 entries",
      "outline of sample.rs (Rust, tree-sitter): 18 entries",
      "outline of Sample.java (Java, tree-sitter): 11 entries",
      "outline of sample.rb (Ruby, tree-sitter): 10 entries",
    ]);
    expect(wasm.instantiate).toBe(ORIGINAL_INSTANTIATE);
  });
});

interface LanguageCase {
  file: string;
  language: string;
  /** The grammar leaves error nodes (here: `extern "C" {` split by the preprocessor). */
  partial?: true;
  expected: string[];
}

const CASES: LanguageCase[] = [
  {
    file: "sample.ts",
    language: "TypeScript",
    expected: [
      "L3: export const double = (n: number): number =>",
      "L4: export const load = async function (file: string)",
      "L10: export class Widget<T> extends Base implements Render",
      "  L12: onClick = (e: MouseEvent): void =>",
      "  L15: constructor(private readonly name: string)",
      "  L19: async render(props: Props<T>): Promise<string>",
      "  L23: get size(): number",
      "L28: export interface Shape",
      "  L29: area(): number",
      "L33: export type Id = string | number",
      "L34: export enum Color",
      "L39: namespace Util",
      "  L40: export function clamp(x: number, lo: number, hi: number): number",
      'L45: declare module "ext"',
      "  L46: function plugin(opts: object): void",
      "L49: export function parse(input: string): Id",
      "L50: export function parse(input: unknown): Id",
      "L54: export default function main(argv: string[], env: Record<string, string>): number",
    ],
  },
  {
    file: "sample.tsx",
    language: "TSX",
    expected: [
      "L3: type Props = {\u2026}",
      "L5: export const Header = ({ title }: Props): JSX.Element =>",
      "L7: export function App(): JSX.Element",
      "L11: export class Legacy extends React.Component<Props>",
      "  L12: render()",
    ],
  },
  {
    file: "sample.js",
    language: "JavaScript",
    expected: [
      "L4: export const sum = (a, b) =>",
      "L6: function* ids()",
      "L10: class Queue",
      "  L12: static create = () =>",
      "  L13: push(item)",
      "L18: var legacy = function (x)",
      "L22: module.exports.handler = async function handler(event)",
      "L26: export default function ()",
    ],
  },
  {
    file: "sample.py",
    language: "Python",
    expected: [
      "L5: def plain(a, b=1)",
      "L12: def cached(key: str, *, strict: bool = False) -> int",
      "L20: class Service(Base, metaclass=Meta)",
      "  L23: def __init__(self, name)",
      "  L27: def label(self) -> str",
      "  L31: async def fetch(url: str) -> bytes",
      "  L34: class Config",
      "    L37: def validate(self)",
      "L42: def typed_only() -> None",
    ],
  },
  {
    file: "sample.go",
    language: "Go",
    expected: [
      "L6: type Server struct",
      "L11: Handler func(ctx context.Context) error",
      "L12: Store interface",
      "  L13: Get(key string) ([]byte, error)",
      "  L14: Put(key string, v []byte) error",
      "L18: type ID = string",
      "L20: func New(addr string) *Server",
      "L24: func (s *Server) Start(ctx context.Context) error",
      "L28: func (Server) name() string",
      "L30: func Map[T, U any](xs []T, f func(T) U) []U",
    ],
  },
  {
    file: "sample.rs",
    language: "Rust",
    expected: [
      "L4: pub struct Point",
      "L9: pub struct Meters",
      "L11: pub enum Shape",
      "L16: pub trait Area",
      "  L17: fn area(&self) -> f64",
      "  L18: fn describe(&self) -> String",
      "L23: impl Area for Shape",
      "  L24: fn area(&self) -> f64",
      "L29: impl<T> fmt::Display for Wrapper<T> where T: fmt::Display",
      "  L33: fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result",
      "L38: impl Point",
      "  L41: pub fn new(x: f64, y: f64) -> Self",
      "  L46: pub(crate) async fn dist(&self, other: &Point) -> f64",
      "L51: pub mod geometry",
      "  L52: pub fn unit() -> f64",
      "L57: pub type Result<T> = std::result::Result<T, Error>",
      "L59: macro_rules! square",
      "L65: fn main()",
    ],
  },
  {
    file: "Sample.java",
    language: "Java",
    expected: [
      "L7: public class User extends Base implements Comparable<User>",
      "  L10: public User(String name)",
      "  L15: public int compareTo(User other)",
      "  L19: public static <T extends User> List<T> all(Class<T> type) throws Exception",
      "  L23: interface Visitor",
      "    L24: void visit(User u)",
      "  L27: enum Role",
      "    L30: boolean privileged()",
      "  L35: record Pair(String a, String b)",
      "L38: @interface Audit",
      '  L39: String value() default ""',
    ],
  },
  {
    file: "sample.c",
    language: "C",
    expected: [
      "L4: #define SQUARE(x)",
      "L9: struct list",
      "L14: typedef enum {\u2026} status_t",
      "L18: static inline int add(int a, int b)",
      "L20: const char * name_of(const struct list *l)",
      "L26: int main(int argc, char **argv)",
    ],
  },
  {
    file: "sample.h",
    language: "C",
    partial: true,
    expected: [
      "L6: typedef struct point {\u2026} point_t",
      "L11: typedef int (*compare_fn)(const void *, const void *)",
      "L15: union value",
      "L20: int point_add(point_t *a, const point_t *b)",
      "L21: size_t buffer_len(const struct buffer *buf)",
      "L22: struct buffer *buffer_new(size_t cap)",
      "L24: void log_msg(const char *fmt, ...)",
      "L29: void c_only(void)",
    ],
  },
  {
    file: "sample.cpp",
    language: "C++",
    expected: [
      "L4: namespace app",
      "  L5: namespace detail",
      "    L7: template <typename T> class Stack : public Container",
      "      L10: Stack()",
      "      L11: explicit Stack(std::size_t cap)",
      "      L12: ~Stack()",
      "      L13: void push(const T& v)",
      "      L14: T pop()",
      "      L15: virtual bool empty() const = 0",
      "  L25: struct Config",
      "    L27: bool verbose() const",
      "  L30: enum class Level : int",
      "  L32: using Names = std::vector<std::string>",
      "  L34: template <typename T> T clamp(T v, T lo, T hi)",
      "  L39: std::string Config::describe() const",
      "  L43: bool operator==(const Config& a, const Config& b)",
      "L47: int main()",
    ],
  },
  {
    file: "widget.h",
    language: "C++",
    expected: [
      "L3: namespace geo",
      "  L5: class Shape",
      "    L7: virtual ~Shape() = default",
      "    L8: virtual double area() const = 0",
      "  L11: double total_area(const Shape* shapes, int n)",
    ],
  },
  {
    file: "sample.rb",
    language: "Ruby",
    expected: [
      "L3: module Billing",
      "  L4: class Invoice < Base",
      '    L7: def initialize(total, currency: "EUR")',
      "    L11: def self.parse(json)",
      "    L13: def ==(other)",
      "    L17: def paid?",
      "    L19: class << self",
      "      L20: def registry",
      "    L27: def secret",
      "L32: def helper(x)",
    ],
  },
  {
    file: "Sample.cs",
    language: "C#",
    expected: [
      "L4: namespace App.Services",
      "  L7: public sealed class Cache<T> : ICache where T : class",
      "    L11: public Cache(int size)",
      "    L16: public async Task<T?> GetAsync(string key)",
      "    L23: public static Cache<T> operator +(Cache<T> a, Cache<T> b)",
      "    L25: ~Cache()",
      "  L28: public interface ICache",
      "    L30: void Clear()",
      "  L33: public struct Entry",
      "  L35: public enum Mode",
      "  L37: public record Item(string Name)",
      "  L39: public delegate void Changed(object sender)",
    ],
  },
  {
    file: "Sample.kt",
    language: "Kotlin",
    expected: [
      "L5: data class User(val name: String, val age: Int) : Person()",
      "  L6: fun greet(other: User): String",
      "  L10: companion object",
      "    L11: fun create(name: String)",
      "L15: interface Repository<T>",
      "  L16: fun find(id: Int): T?",
      "L19: object Registry",
      "L23: enum class Color",
      "L28: fun <T : Comparable<T>> maxOf(a: T, b: T): T",
      "L30: suspend fun User.refresh()",
      "L33: typealias Users = List<User>",
    ],
  },
  {
    file: "sample.php",
    language: "PHP",
    expected: [
      "L3: namespace App\\Models",
      "L7: interface HasName",
      "  L9: public function name(): string",
      "L12: trait Greets",
      "  L14: public function greet(string $who): string",
      "L20: abstract class User extends Model implements HasName",
      "  L24: public function __construct(private int $id)",
      "  L28: public static function find(int $id): ?static",
      "  L33: abstract protected function role(): string",
      "L36: enum Suit: string",
      "L41: function helper($value, array $opts = [])",
    ],
  },
  {
    file: "sample.sh",
    language: "Bash",
    expected: ["L4: usage()", "L8: function build", "L12: function clean()", "L16: main()"],
  },
  {
    file: "sample.swift",
    language: "Swift",
    expected: [
      "L3: protocol Shape",
      "  L4: func area() -> Double",
      "L7: struct Circle: Shape",
      "  L10: init(r: Double)",
      "  L14: func area() -> Double",
      "L19: final class Canvas<T>: NSObject",
      "  L20: override func draw(_ rect: CGRect) async throws",
      "  L23: deinit",
      "L27: enum Direction",
      "L31: extension Circle",
      "  L32: static func unit() -> Circle",
      "L37: func top<T>(_ x: T) -> T",
    ],
  },
  {
    file: "sample.scala",
    language: "Scala",
    expected: [
      "L3: trait Shape",
      "  L4: def area: Double",
      "L7: case class Circle(r: Double) extends Shape",
      "  L8: def area: Double",
      "  L10: override def toString(): String",
      "L15: object Main extends App",
      "  L16: def main(args: Array[String]): Unit",
      "L19: sealed abstract class Base",
      "L21: type Alias = Int",
    ],
  },
  {
    file: "sample.zig",
    language: "Zig",
    expected: [
      "L3: pub const Point = struct",
      "  L7: pub fn init(x: i32, y: i32) Point",
      "L12: const Color = enum",
      "L14: const Value = union(enum)",
      "L19: pub fn main() !void",
      "L23: fn helper(a: u8) u8",
      'L27: test "point init"',
    ],
  },
];

describe("tree-sitter outline, one fixture per language", () => {
  it.each(CASES)("$file ($language)", async ({ file, language, partial, expected }) => {
    const out = await outline(file);
    const note = partial ? "; parts did not parse, entries may be incomplete" : "";
    expect(out.split("\n")[0]).toBe(
      `outline of ${file} (${language}, tree-sitter${note}): ${expected.length} entries`,
    );
    expect(entriesOf(out)).toEqual(expected);
  });

  it("has a fixture for every language it claims", () => {
    expect(new Set(CASES.map((c) => c.language))).toEqual(new Set(LANGUAGES.map((l) => l.name)));
  });

  it.each([
    ["a.ts", "TypeScript"],
    ["a.mts", "TypeScript"],
    ["a.cts", "TypeScript"],
    ["a.tsx", "TSX"],
    ["a.js", "JavaScript"],
    ["a.mjs", "JavaScript"],
    ["a.cjs", "JavaScript"],
    ["a.jsx", "JavaScript"],
    ["a.pyi", "Python"],
    ["A.JAVA", "Java"],
    ["a.c", "C"],
    ["a.cc", "C++"],
    ["a.cpp", "C++"],
    ["a.cxx", "C++"],
    ["a.hpp", "C++"],
    ["a.hh", "C++"],
    ["a.hxx", "C++"],
    ["a.kts", "Kotlin"],
    ["a.bash", "Bash"],
    ["a.lua", undefined],
    ["a.txt", undefined],
    ["Makefile", undefined],
  ])("%s is outlined as %s", (file, name) => {
    expect(languageFor(file, "")?.name).toBe(name);
  });

  it.each([
    ["int add(int a, int b);\n", "C"],
    ['#ifdef __cplusplus\nextern "C" {\n#endif\n', "C"],
    ["namespace geo {\n}\n", "C++"],
    ["template <typename T>\nT max(T a, T b);\n", "C++"],
    ["class Shape {\npublic:\n};\n", "C++"],
    ["struct S {\nprivate:\n  int x;\n};\n", "C++"],
  ])("a .h header holding %j is read as %s", (text, name) => {
    expect(languageFor("x.h", text)?.name).toBe(name);
  });

  it("parses JSX in .jsx files and module variants of TypeScript", async () => {
    write("comp.jsx", "export const Card = ({ title }) => <div>{title}</div>;\n");
    write("mod.mts", "export function f(): void {}\n");
    expect(entriesOf(await outline("comp.jsx"))).toEqual(["L1: export const Card = ({ title }) =>"]);
    expect(entriesOf(await outline("mod.mts"))).toEqual(["L1: export function f(): void"]);
  });

  it("keeps line numbers and signatures right after non-ASCII and astral characters", async () => {
    write("uni.py", 'def f(s="😀🎉", t="é"):\n    pass\n\n\ndef g(): pass\n');
    expect(entriesOf(await outline("uni.py"))).toEqual(['L1: def f(s="😀🎉", t="é")', "L5: def g()"]);
  });

  it("ignores a byte-order mark", async () => {
    write("bom.py", "\uFEFFdef f():\n    pass\n");
    expect(entriesOf(await outline("bom.py"))).toEqual(["L1: def f()"]);
  });

  it(`clips a long signature to ${MAX_SIGNATURE_CHARS} characters`, async () => {
    const params = Array.from({ length: 60 }, (_, i) => `param_${i}`).join(", ");
    write("long.py", `def wide(${params}):\n    pass\n`);
    const [entry] = entriesOf(await outline("long.py"));
    expect(entry?.startsWith("L1: def wide(param_0, param_1")).toBe(true);
    expect(entry?.slice("L1: ".length)).toHaveLength(MAX_SIGNATURE_CHARS);
    expect(entry?.endsWith("…")).toBe(true);
  });

  it("reads the path relative to the project root, not the process directory", async () => {
    write("src/deep/mod.go", "package deep\n\nfunc Run() {}\n");
    const out = await outline("src/deep/mod.go");
    expect(out).toBe("outline of src/deep/mod.go (Go, tree-sitter): 1 entry\nL3: func Run()");
  });

  it("says so when a file defines nothing", async () => {
    write("empty.py", "# only a comment\nx = 1\n");
    expect(await outline("empty.py")).toBe("outline of empty.py (Python, tree-sitter): no definitions found");
  });
});

describe("Markdown headings", () => {
  const GUIDE = [
    "L5: # Guide",
    "  L9: ## Install",
    "L28: # Usage notes",
    "  L31: ## The setext heading text can span two lines",
    "    L42: ### Indented three spaces",
    "          L43: ###### Six",
  ];

  it("lists ATX and setext headings by level, skipping fences, code, front matter and non-headings", async () => {
    const out = await outline("guide.md");
    expect(out.split("\n")[0]).toBe("outline of guide.md (Markdown headings): 6 entries");
    expect(entriesOf(out)).toEqual(GUIDE);
  });

  it("gives the same headings for CRLF line endings", async () => {
    const crlf = fs.readFileSync(path.join(project, "guide.md"), "utf8").replace(/\n/g, "\r\n");
    expect(entriesOf(await outlineSource("guide.md", crlf, { deadlineAt: later() }))).toEqual(GUIDE);
  });

  it.each([
    ["notes.markdown", "Title\n=====\n", ["L1: # Title"]],
    ["thematic.md", "para\n\n---\n\ntext\n", []],
    ["unclosed.md", "```\n# inside a fence that never closes\n", []],
    ["closing.md", "# Title #\n## Sharp C# ##\n", ["L1: # Title", "  L2: ## Sharp C#"]],
    ["quote.md", "> quoted\n---\n", []],
    ["html.md", "<div>\n---\n", []],
  ])("%s", async (file, text, expected) => {
    const out = await outlineSource(file, text, { deadlineAt: later() });
    if (expected.length === 0) expect(out).toBe(`outline of ${file} (Markdown headings): no headings found`);
    else expect(entriesOf(out)).toEqual(expected);
  });
});

describe("keyword heuristic for files without a grammar", () => {
  it("lists keyword-led lines, nested by indentation", async () => {
    write(
      "notes.txt",
      [
        "Release notes",
        "",
        "class Widget renders things",
        "  def draw(canvas)",
        "  fn nested_helper",
        "type Alias = Widget",
        "just prose that mentions a function in passing",
      ].join("\n"),
    );
    expect(await outline("notes.txt")).toBe(
      [
        "outline of notes.txt (keyword heuristic, best effort): 4 entries",
        "L3: class Widget renders things",
        "  L4: def draw(canvas)",
        "  L5: fn nested_helper",
        "L6: type Alias = Widget",
      ].join("\n"),
    );
  });

  it("handles Lua, whose shipped grammar is not used", async () => {
    expect(await outline("sample.lua")).toBe(
      [
        "outline of sample.lua (keyword heuristic, best effort): 3 entries",
        "L3: function M.add(a, b)",
        "L7: local function helper(x)",
        "  L8: local function inner() end",
      ].join("\n"),
    );
  });

  it.each([
    ["def run(self):", true],
    ["export default async function main() {", true],
    ["pub(crate) fn parse(input: &str) -> Result<()> {", true],
    ["impl<T> Trait for Wrapper<T> {", true],
    ["sub handler {", true],
    ["proc build {args} {", true],
    ["defmodule App.Router do", true],
    ["pub const Point = struct {", true],
    ["const limit = 10;", false],
    ["return function () {};", false],
    ["classify(items)", false],
    ["typed text", false],
    ["# def commented out", false],
  ])("%j is a definition: %s", async (line, listed) => {
    const out = await outlineSource("x.txt", `${line}\n`, { deadlineAt: later() });
    expect(out.endsWith("no definitions found")).toBe(!listed);
  });
});

describe(`cap at ${MAX_OUTLINE_ENTRIES} entries`, () => {
  const extra = 50;
  it.each([
    ["many.py", (i: number) => `def f${i}():\n    pass\n`, (i: number) => `def f${i}()`],
    ["many.md", (i: number) => `# Heading ${i}\n\n`, (i: number) => `# Heading ${i}`],
    ["many.txt", (i: number) => `fn f${i}()\n`, (i: number) => `fn f${i}()`],
  ])(`%s lists the first ${MAX_OUTLINE_ENTRIES} and counts the rest`, async (file, line, shown) => {
    const total = MAX_OUTLINE_ENTRIES + extra;
    const text = Array.from({ length: total }, (_, i) => line(i)).join("");
    const lines = (await outlineSource(file, text, { deadlineAt: later() })).split("\n");
    expect(lines[0]).toMatch(new RegExp(`: ${total} entries$`));
    expect(lines).toHaveLength(1 + MAX_OUTLINE_ENTRIES + 1);
    expect(lines[MAX_OUTLINE_ENTRIES]).toMatch(
      new RegExp(` ${shown(MAX_OUTLINE_ENTRIES - 1).replace(/[()]/g, "\\$&")}$`),
    );
    expect(lines.at(-1)).toBe(`... ${extra} more (outline capped at ${MAX_OUTLINE_ENTRIES} entries)`);
  });

  it("has no marker at exactly the cap", async () => {
    const text = Array.from({ length: MAX_OUTLINE_ENTRIES }, (_, i) => `fn f${i}()\n`).join("");
    const lines = (await outlineSource("full.txt", text, { deadlineAt: later() })).split("\n");
    expect(lines).toHaveLength(1 + MAX_OUTLINE_ENTRIES);
    expect(lines.at(-1)).toBe(`L${MAX_OUTLINE_ENTRIES}: fn f${MAX_OUTLINE_ENTRIES - 1}()`);
  });

  it("clips the observation and keeps the cap marker visible at its end", async () => {
    const defs = Array.from(
      { length: MAX_OUTLINE_ENTRIES + extra },
      (_, i) => `def handler_number_${i}(request):\n    pass\n`,
    );
    write("wide.py", defs.join(""));
    const out = await outline("wide.py");
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(CLIP.outline + 64);
    expect(out).toContain("bytes clipped");
    expect(
      out.startsWith(
        "outline of wide.py (Python, tree-sitter): 450 entries\nL1: def handler_number_0(request)",
      ),
    ).toBe(true);
    expect(out.endsWith(`... ${extra} more (outline capped at ${MAX_OUTLINE_ENTRIES} entries)`)).toBe(true);
  });
});

describe("fallbacks", () => {
  const SERVICE =
    "class Service:\n    def start(self):\n        def local():\n            pass\n\ndef main():\n    pass\n";
  const HEURISTIC = ["L1: class Service", "  L2: def start(self)", "    L3: def local()", "L6: def main()"];

  it.each([
    ["not WebAssembly", () => Buffer.from("not wasm")],
    [
      "a truncated grammar",
      () =>
        fs
          .readFileSync(requireHere.resolve("tree-sitter-wasms/out/tree-sitter-python.wasm"))
          .subarray(0, 4096),
    ],
  ])("uses the heuristic when the grammar is %s, and says so first", async (_what, bytes) => {
    const dir = fs.mkdtempSync(path.join(scratch, "g-"));
    fs.writeFileSync(path.join(dir, "tree-sitter-python.wasm"), bytes());
    const out = await outlineSource("svc.py", SERVICE, { deadlineAt: later(), grammarDir: dir });
    expect(out.split("\n")[0]).toMatch(
      /^outline of svc\.py \(keyword heuristic, because the Python grammar failed to load: .+\): 4 entries$/,
    );
    expect(entriesOf(out)).toEqual(HEURISTIC);
  });

  it("a grammar with no language function falls back, and nothing it prints reaches Scoot's stdout", async () => {
    // A valid WebAssembly side module with an empty dylink.0 section and no exports:
    // web-tree-sitter answers it with console.log, which would corrupt `scoot serve`. It runs in
    // the grammar process, whose stdout goes nowhere.
    const name = Buffer.from("dylink.0");
    const payload = Buffer.concat([Buffer.from([name.length]), name, Buffer.from([1, 4, 0, 0, 0, 0])]);
    const wasm = Buffer.concat([Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 0, payload.length]), payload]);
    const dir = fs.mkdtempSync(path.join(scratch, "g-"));
    fs.writeFileSync(path.join(dir, "tree-sitter-python.wasm"), wasm);
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const write = vi.spyOn(process.stdout, "write");
    try {
      const out = await outlineSource("svc.py", SERVICE, { deadlineAt: later(), grammarDir: dir });
      expect(out.split("\n")[0]).toContain("because the Python grammar failed to load: Language.load failed");
      expect(log).not.toHaveBeenCalled();
      expect(write).not.toHaveBeenCalled();
    } finally {
      log.mockRestore();
      write.mockRestore();
    }
  });

  it("uses the heuristic when the grammar file is missing", async () => {
    const dir = fs.mkdtempSync(path.join(scratch, "g-"));
    const out = await outlineSource("svc.py", SERVICE, { deadlineAt: later(), grammarDir: dir });
    expect(out.split("\n")[0]).toContain("because the Python grammar failed to load: ENOENT");
    expect(entriesOf(out)).toEqual(HEURISTIC);
  });

  it("still parses with the installed grammar after a broken one failed", async () => {
    const out = await outlineSource("svc.py", SERVICE, { deadlineAt: later() });
    expect(out).toBe(
      [
        "outline of svc.py (Python, tree-sitter): 3 entries",
        "L1: class Service",
        "  L2: def start(self)",
        "L6: def main()",
      ].join("\n"),
    );
  });

  it("falls back to the heuristic when the parse runs out of time", async () => {
    write("slow.py", "def f(x):\n    return x\n".repeat(20_000));
    // A 1 ms tool deadline leaves the parse no time at all.
    const out = await outline("slow.py", { timeoutMs: 1 });
    expect(out.split("\n")[0]).toBe(
      "outline of slow.py (keyword heuristic, because the Python parse did not finish in time): 20000 entries",
    );
  });
});

describe("input, effects and errors", () => {
  it.each([
    ['{"path":"src/a.py"}', { ok: true, value: { path: "src/a.py" } }],
    // The same declared-input messages as every file tool.
    ['{"path":""}', { ok: false, error: 'outline: "path" must be a non-empty string' }],
    ['{"path":3}', { ok: false, error: 'outline: "path" must be a string, got the number 3' }],
    ["{}", { ok: false, error: 'outline: "path" is required' }],
    ['{"path":"a.py","depth":2}', { ok: false, error: 'outline: unknown field "depth"; allowed: path' }],
    ['{"path":"a\\u0000b"}', { ok: false, error: 'outline: "path" must not contain a NUL byte' }],
    [
      '"a.py"',
      {
        ok: false,
        error:
          'outline: action_input must be a JSON object such as {"path": "src/main.ts"}; got a string ("a.py")',
      },
    ],
    [
      "[1]",
      {
        ok: false,
        error: 'outline: action_input must be a JSON object such as {"path": "src/main.ts"}; got an array',
      },
    ],
  ])("parse(%s)", (raw, expected) => {
    expect(outlineTool.parse(raw)).toEqual(expected);
  });

  it("declares a read of exactly the given path", () => {
    expect(outlineTool.effects({ path: "../x/a.py" })).toEqual({
      capability: "read",
      readPaths: ["../x/a.py"],
    });
    expect(outlineTool.name).toBe("outline");
    expect(outlineTool.clipBytes).toBe(CLIP.outline);
  });

  it("reports a missing file", async () => {
    expect(await outline("nope.py")).toBe("error: no such file: nope.py");
    expect(await outline("no/such/dir/x.py")).toBe("error: no such file: no/such/dir/x.py");
  });

  it("refuses a directory", async () => {
    fs.mkdirSync(path.join(project, "pkg"), { recursive: true });
    expect(await outline("pkg")).toBe(
      "error: pkg is a directory; outline takes one file (use glob to list files)",
    );
  });

  it("refuses something that is not a regular file", async () => {
    expect(await outline("/dev/null")).toBe("error: /dev/null is not a regular file");
  });

  it("refuses a binary file, whatever its extension", async () => {
    write("blob.py", Buffer.from([0x64, 0x65, 0x66, 0x00, 0x01, 0x02]));
    expect(await outline("blob.py")).toBe("error: blob.py is a binary file (6 bytes); nothing to outline");
  });

  it(`refuses a file over ${MAX_OUTLINE_FILE_BYTES} bytes and takes one of exactly that size`, async () => {
    write("huge.txt", Buffer.alloc(MAX_OUTLINE_FILE_BYTES + 1, "a"));
    expect(await outline("huge.txt")).toBe(
      `error: huge.txt is too large to outline (${MAX_OUTLINE_FILE_BYTES + 1} bytes; the limit is ${MAX_OUTLINE_FILE_BYTES}); use grep to find definitions`,
    );
    write("limit.txt", Buffer.alloc(MAX_OUTLINE_FILE_BYTES, "a"));
    expect(await outline("limit.txt")).toBe(
      "outline of limit.txt (keyword heuristic, best effort): no definitions found",
    );
  });

  it("does nothing once aborted", async () => {
    const ac = new AbortController();
    ac.abort();
    expect(await outline("sample.py", { signal: ac.signal })).toBe("error: outline aborted");
  });
});
