/**
 * Which tree-sitter grammar serves which file, and which of its node kinds are worth a
 * line in an outline. Pure data: the walker in `treesitter.ts` reads it, so adding a
 * language is adding a table here (and a fixture in the tests).
 *
 * Node kind names come from the grammars shipped in tree-sitter-wasms 0.1.13; they were
 * read off real parse trees, not guessed.
 *
 * Lua is deliberately absent: that package's Lua grammar parses correctly only while it is
 * the sole grammar in the process (after another language has parsed, its trees come out
 * as ERROR nodes), and Scoot's outline serves many languages per process. Lua files take
 * the keyword heuristic, which finds `function` and `local function` lines.
 */
import * as path from "node:path";

export interface DefRule {
  /** Definitions found inside this one are listed one level deeper (classes, impls, namespaces). */
  nest?: true;
  /** The signature is the whole node with bodies elided, not just the head before the body. */
  whole?: true;
  /**
   * Only list the node when this holds:
   * - `hasBody`: C `struct x;` mentions are not definitions, `struct x {...}` is;
   * - `declaresFunction`: a C/C++ declaration of a function (prototype), not of a variable;
   * - `assignsFunction`: `const f = (...) => ...`, `M.f = function(...)`;
   * - `holdsContainer`: Zig `const T = struct {...}`.
   */
  when?: "hasBody" | "declaresFunction" | "assignsFunction" | "holdsContainer";
}

export interface LanguageSpec {
  /** Name shown in the outline header. */
  name: string;
  /** Grammar file stem: `tree-sitter-<grammar>.wasm`. */
  grammar: string;
  defs: Record<string, DefRule>;
  /** Kinds that open a body when the grammar does not mark it with the `body` field. */
  bodies?: string[];
  /** Kinds searched through for the body (Go `struct_type`, Zig `struct_declaration`). */
  bodyHosts?: string[];
  /** Parents whose start begins the signature of their single definition (`export`, `template <...>`). */
  wrappers?: string[];
  /** Kinds shown as `{…}` inside a whole-node signature. */
  elide?: string[];
  /** Function-valued expressions that make an assignment a definition (`assignsFunction`). */
  functionValues?: string[];
  /** Containers that make a Zig-style constant a type definition (`holdsContainer`). */
  containers?: string[];
  /** Trailing keyword removed from signatures of body-less definitions (Ruby/Lua `end`). */
  tail?: RegExp;
}

const TS_DEFS: Record<string, DefRule> = {
  function_declaration: {},
  generator_function_declaration: {},
  function_signature: {},
  class_declaration: { nest: true },
  abstract_class_declaration: { nest: true },
  interface_declaration: { nest: true },
  enum_declaration: {},
  type_alias_declaration: { whole: true },
  internal_module: { nest: true },
  module: { nest: true },
  method_definition: {},
  method_signature: {},
  abstract_method_signature: {},
  public_field_definition: { when: "assignsFunction" },
  lexical_declaration: { when: "assignsFunction" },
  variable_declaration: { when: "assignsFunction" },
  assignment_expression: { when: "assignsFunction" },
  // `export default function () {}` and `export default async () => {}` have no declaration.
  export_statement: { when: "assignsFunction" },
};

const TS_SHARED = {
  defs: TS_DEFS,
  bodies: ["class_body", "interface_body", "object_type", "statement_block", "enum_body"],
  wrappers: ["export_statement", "ambient_declaration"],
  elide: ["object_type"],
  functionValues: ["arrow_function", "function_expression", "function", "generator_function"],
};

const TYPESCRIPT: LanguageSpec = { name: "TypeScript", grammar: "typescript", ...TS_SHARED };
const TSX: LanguageSpec = { name: "TSX", grammar: "tsx", ...TS_SHARED };

const JAVASCRIPT: LanguageSpec = {
  name: "JavaScript",
  grammar: "javascript",
  defs: {
    function_declaration: {},
    generator_function_declaration: {},
    class_declaration: { nest: true },
    method_definition: {},
    field_definition: { when: "assignsFunction" },
    lexical_declaration: { when: "assignsFunction" },
    variable_declaration: { when: "assignsFunction" },
    assignment_expression: { when: "assignsFunction" },
    export_statement: { when: "assignsFunction" },
  },
  bodies: ["class_body", "statement_block"],
  wrappers: ["export_statement"],
  functionValues: TS_SHARED.functionValues,
};

const PYTHON: LanguageSpec = {
  name: "Python",
  grammar: "python",
  defs: { function_definition: {}, class_definition: { nest: true } },
  bodies: ["block"],
};

const GO: LanguageSpec = {
  name: "Go",
  grammar: "go",
  defs: {
    function_declaration: {},
    method_declaration: {},
    type_spec: { nest: true },
    type_alias: {},
    method_spec: {},
    method_elem: {},
  },
  bodies: ["block", "field_declaration_list"],
  bodyHosts: ["struct_type", "interface_type"],
  wrappers: ["type_declaration"],
};

const RUST: LanguageSpec = {
  name: "Rust",
  grammar: "rust",
  defs: {
    function_item: {},
    function_signature_item: {},
    struct_item: {},
    enum_item: {},
    union_item: {},
    trait_item: { nest: true },
    impl_item: { nest: true },
    mod_item: { nest: true },
    type_item: { whole: true },
    macro_definition: {},
  },
  bodies: ["declaration_list", "field_declaration_list", "enum_variant_list", "block"],
};

const JAVA: LanguageSpec = {
  name: "Java",
  grammar: "java",
  defs: {
    class_declaration: { nest: true },
    interface_declaration: { nest: true },
    enum_declaration: { nest: true },
    record_declaration: { nest: true },
    annotation_type_declaration: { nest: true },
    method_declaration: {},
    constructor_declaration: {},
    compact_constructor_declaration: {},
    annotation_type_element_declaration: {},
  },
  bodies: ["class_body", "interface_body", "enum_body", "annotation_type_body", "block", "constructor_body"],
};

const C_DEFS: Record<string, DefRule> = {
  function_definition: {},
  declaration: { when: "declaresFunction" },
  struct_specifier: { when: "hasBody", nest: true },
  union_specifier: { when: "hasBody", nest: true },
  enum_specifier: { when: "hasBody" },
  type_definition: { whole: true },
  preproc_function_def: {},
};

const C: LanguageSpec = {
  name: "C",
  grammar: "c",
  defs: C_DEFS,
  bodies: ["compound_statement", "field_declaration_list", "enumerator_list", "preproc_arg"],
  elide: ["field_declaration_list", "enumerator_list"],
};

const CPP: LanguageSpec = {
  name: "C++",
  grammar: "cpp",
  defs: {
    ...C_DEFS,
    field_declaration: { when: "declaresFunction" },
    class_specifier: { when: "hasBody", nest: true },
    namespace_definition: { nest: true },
    alias_declaration: { whole: true },
    concept_definition: { whole: true },
  },
  bodies: [...(C.bodies ?? []), "field_initializer_list", "declaration_list"],
  wrappers: ["template_declaration"],
  elide: C.elide,
};

const RUBY: LanguageSpec = {
  name: "Ruby",
  grammar: "ruby",
  defs: {
    method: {},
    singleton_method: {},
    class: { nest: true },
    module: { nest: true },
    singleton_class: { nest: true },
  },
  bodies: ["body_statement"],
  tail: /;?\s*\bend$/,
};

const CSHARP: LanguageSpec = {
  name: "C#",
  grammar: "c_sharp",
  defs: {
    namespace_declaration: { nest: true },
    file_scoped_namespace_declaration: {},
    class_declaration: { nest: true },
    struct_declaration: { nest: true },
    interface_declaration: { nest: true },
    record_declaration: { nest: true },
    enum_declaration: {},
    delegate_declaration: {},
    method_declaration: {},
    constructor_declaration: {},
    destructor_declaration: {},
    operator_declaration: {},
  },
  bodies: ["declaration_list", "block", "arrow_expression_clause", "enum_member_declaration_list"],
};

const KOTLIN: LanguageSpec = {
  name: "Kotlin",
  grammar: "kotlin",
  defs: {
    class_declaration: { nest: true },
    object_declaration: { nest: true },
    companion_object: { nest: true },
    function_declaration: {},
    secondary_constructor: {},
    type_alias: { whole: true },
  },
  bodies: ["class_body", "function_body", "enum_class_body"],
};

const PHP: LanguageSpec = {
  name: "PHP",
  grammar: "php",
  defs: {
    namespace_definition: { nest: true },
    function_definition: {},
    class_declaration: { nest: true },
    interface_declaration: { nest: true },
    trait_declaration: { nest: true },
    enum_declaration: { nest: true },
    method_declaration: {},
  },
  bodies: ["compound_statement", "declaration_list", "enum_declaration_list"],
};

const BASH: LanguageSpec = {
  name: "Bash",
  grammar: "bash",
  defs: { function_definition: {} },
  bodies: ["compound_statement", "subshell"],
};

const SWIFT: LanguageSpec = {
  name: "Swift",
  grammar: "swift",
  defs: {
    class_declaration: { nest: true },
    protocol_declaration: { nest: true },
    function_declaration: {},
    protocol_function_declaration: {},
    init_declaration: {},
    deinit_declaration: {},
    subscript_declaration: {},
    typealias_declaration: { whole: true },
  },
  bodies: ["class_body", "protocol_body", "enum_class_body", "function_body"],
};

const SCALA: LanguageSpec = {
  name: "Scala",
  grammar: "scala",
  defs: {
    class_definition: { nest: true },
    object_definition: { nest: true },
    trait_definition: { nest: true },
    enum_definition: { nest: true },
    function_definition: {},
    function_declaration: {},
    type_definition: { whole: true },
  },
  bodies: ["template_body", "block"],
};

const ZIG: LanguageSpec = {
  name: "Zig",
  grammar: "zig",
  defs: {
    function_declaration: {},
    variable_declaration: { when: "holdsContainer", nest: true },
    test_declaration: {},
  },
  bodies: ["block"],
  bodyHosts: ["struct_declaration", "enum_declaration", "union_declaration", "opaque_declaration"],
  containers: ["struct_declaration", "enum_declaration", "union_declaration", "opaque_declaration"],
};

/** Lower-case extension (with the dot) to language. */
const BY_EXTENSION: Record<string, LanguageSpec> = {
  ".ts": TYPESCRIPT,
  ".mts": TYPESCRIPT,
  ".cts": TYPESCRIPT,
  ".tsx": TSX,
  ".js": JAVASCRIPT,
  ".mjs": JAVASCRIPT,
  ".cjs": JAVASCRIPT,
  ".jsx": JAVASCRIPT,
  ".py": PYTHON,
  ".pyi": PYTHON,
  ".go": GO,
  ".rs": RUST,
  ".java": JAVA,
  ".c": C,
  ".h": C,
  ".cc": CPP,
  ".cpp": CPP,
  ".cxx": CPP,
  ".c++": CPP,
  ".hpp": CPP,
  ".hh": CPP,
  ".hxx": CPP,
  ".h++": CPP,
  ".rb": RUBY,
  ".cs": CSHARP,
  ".kt": KOTLIN,
  ".kts": KOTLIN,
  ".php": PHP,
  ".sh": BASH,
  ".bash": BASH,
  ".swift": SWIFT,
  ".scala": SCALA,
  ".sc": SCALA,
  ".zig": ZIG,
};

/** Every language with a grammar, for tests and diagnostics. */
export const LANGUAGES: readonly LanguageSpec[] = [...new Set(Object.values(BY_EXTENSION))];

/**
 * A `.h` header is C unless it plainly holds C++ (classes, namespaces, templates, access
 * labels); the C grammar turns those into error nodes and loses the definitions after them.
 */
const CPP_HEADER_HINT =
  /^\s*(?:namespace\b|template\s*<|class\s+\w+[^;]*$|(?:public|private|protected)\s*:)/m;

export function languageFor(file: string, text: string): LanguageSpec | undefined {
  const ext = path.extname(file).toLowerCase();
  const spec = BY_EXTENSION[ext];
  if (spec === C && ext === ".h" && CPP_HEADER_HINT.test(text)) return CPP;
  return spec;
}

export function isMarkdown(file: string): boolean {
  const ext = path.extname(file).toLowerCase();
  return ext === ".md" || ext === ".markdown";
}
