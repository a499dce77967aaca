/**
 * The options that stretch a command beyond what a person approved (docs/safety.md "Plans as
 * contracts"): each row is a word a model might add to an approved command to write, delete,
 * run something, send data or act elsewhere; the harmless rows show the table does not refuse
 * ordinary use.
 */
import { describe, expect, it } from "vitest";
import {
  findStretch,
  isOperandProgram,
  OPERAND_PROGRAMS,
  stretchingOption,
} from "../../src/policy/command-options.js";

describe("stretchingOption", () => {
  it.each<[string, string[], string | undefined]>([
    // git: the stretches named in the plan and approval issues
    ["git", ["--output=README.md"], "--output=README.md"],
    ["git", ["--output", "README.md"], "--output"],
    ["git", ["--OUTPUT=README.md"], "--OUTPUT=README.md"],
    ["git", ["HEAD", "--", "--output=x"], "--output=x"],
    ["git", ["-oREADME.md"], "-oREADME.md"],
    ["git", ["--ext-diff"], "--ext-diff"],
    ["git", ["-c", "diff.external=./evil"], "-c"],
    ["git", ["-D", "x"], "-D"],
    ["git", ["-Dx"], "-Dx"],
    ["git", ["-d", "x"], "-d"],
    ["git", ["--delete", "x"], "--delete"],
    ["git", ["-M", "main"], "-M"],
    ["git", ["-f", "main", "HEAD~3"], "-f"],
    ["git", ["-fdx"], "-fdx"],
    ["git", ["-X"], "-X"],
    ["git", ["--force-with-lease"], "--force-with-lease"],
    ["git", ["--hard"], "--hard"],
    ["git", ["-x", "make"], "-x"],
    ["git", ["--exec=make"], "--exec=make"],
    ["git", ["--git-dir=../other/.git"], "--git-dir=../other/.git"],
    ["git", ["--upload-pack=./evil"], "--upload-pack=./evil"],
    ["/usr/bin/GIT", ["-X"], "-X"],
    // git takes any unambiguous beginning of a long option: a beginning of a stretching one stretches
    ["git", ["--ext"], "--ext"],
    ["git", ["--ext-d"], "--ext-d"],
    ["git", ["--forc"], "--forc"],
    ["git", ["--format=%h"], undefined],
    ["git", ["--follow", "--oneline"], undefined],
    ["git", ["--stat"], undefined],
    ["git", ["--name-only", "HEAD~1", "--", "src"], undefined],
    ["git", ["--no-ext-diff", "--cached"], undefined],
    ["git", ["-a", "--list", "-v"], undefined],
    // sed
    ["sed", ["-i", "s/a/b/", "f"], "-i"],
    ["sed", ["-i.bak"], "-i.bak"],
    ["sed", ["--in-place=.bak"], "--in-place=.bak"],
    ["sed", ["-n", "s/TODO/DONE/", "-f", "notes.md"], "-f"],
    ["sed", ["-e", "p"], "-e"],
    // curl
    ["curl", ["-d", "@secret"], "-d"],
    ["curl", ["--data-binary", "@secret"], "--data-binary"],
    ["curl", ["--data-urlencode=x"], "--data-urlencode=x"],
    ["curl", ["-T", "secret"], "-T"],
    ["curl", ["--upload-file", "secret"], "--upload-file"],
    ["curl", ["-F", "f=@secret"], "-F"],
    ["curl", ["-o", "x"], "-o"],
    ["curl", ["-O"], "-O"],
    ["curl", ["-sSLo", "x"], "-sSLo"],
    ["curl", ["--json", "{}"], "--json"],
    ["curl", ["-K", "cfg"], "-K"],
    ["curl", ["--form", "f=@secret"], "--form"],
    ["curl", ["--form-string", "f=x"], "--form-string"],
    ["curl", ["-s", "-L"], undefined],
    // find (options spelled with one dash)
    ["find", ["-exec", "rm", "{}", ";"], "-exec"],
    ["find", ["-execdir", "sh"], "-execdir"],
    ["find", ["-delete"], "-delete"],
    ["find", ["-fprint", "x"], "-fprint"],
    ["find", ["-name", "x", "-type", "f", "-print"], undefined],
    // go (options spelled with one dash)
    ["go", ["-count=1", "-run", "TestX", "-v"], undefined],
    ["go", ["-exec", "./evil"], "-exec"],
    ["go", ["--exec=./evil"], "--exec=./evil"],
    ["go", ["-o", "bin/x"], "-o"],
    ["go", ["-coverprofile=c.out"], "-coverprofile=c.out"],
    ["go", ["-ldflags=-extld=./evil"], "-ldflags=-extld=./evil"],
    ["go", ["-toolexec", "./evil"], "-toolexec"],
    // test runners behind a package manager: every word counts, after `--` too
    ["npm", ["--", "--watch=false"], undefined],
    ["npm", ["--", "--reporter=verbose", "-t", "name"], undefined],
    ["npm", ["--", "-u"], "-u"],
    ["npm", ["--", "--update"], "--update"],
    ["npm", ["--", "--updateSnapshot"], "--updateSnapshot"],
    ["npm", ["--", "--outputFile=r.json"], "--outputFile=r.json"],
    ["npm", ["--", "--config=evil.config.ts"], "--config=evil.config.ts"],
    ["npm", ["--script-shell=./evil"], "--script-shell=./evil"],
    ["npm", ["--", "--require=./evil.js"], "--require=./evil.js"],
    ["npm", ["--prefix", "../other"], "--prefix"],
    ["npm", ["-w", "other"], "-w"],
    ["pnpm", ["-C", "../other"], "-C"],
    // writers and fixers
    ["prettier", ["-w", "."], "-w"],
    ["prettier", ["--write", "."], "--write"],
    ["eslint", ["--fix"], "--fix"],
    ["biome", ["check", "--write"], "--write"],
    ["tsc", ["--outDir", "x"], "--outDir"],
    ["tsc", ["--noEmit", "-p", "tsconfig.json"], undefined],
    ["rg", ["--pre=./evil", "x"], "--pre=./evil"],
    ["rg", ["-n", "TODO", "src"], undefined],
    ["make", ["-C", "../other"], "-C"],
    ["make", ["--file=evil.mk"], "--file=evil.mk"],
    ["make", ["--eval=x"], "--eval=x"],
    ["pytest", ["-p", "evil"], "-p"],
    ["pytest", ["--basetemp=src"], "--basetemp=src"],
    ["pytest", ["-k", "slow", "-q", "tests/"], undefined],
    ["docker", ["-v", "/:/host"], "-v"],
    ["podman", ["--privileged"], "--privileged"],
    // not options: words that look like one
    ["npm", ["-", "--", "-1", "x-d"], undefined],
    // a program named like an Object property is only a program
    ["constructor", ["--stat"], undefined],
    ["__proto__", ["-X"], undefined],
  ])("%s %j → %j", (program, words, want) => {
    expect(stretchingOption(program, words)).toBe(want);
  });

  it("says what the word does", () => {
    expect(findStretch("git", ["--output=x"])).toEqual({ word: "--output=x", does: "writes files" });
    expect(findStretch("git", ["-D", "x"])).toEqual({ word: "-D", does: "deletes" });
    expect(findStretch("git", ["--ext-diff"])).toEqual({
      word: "--ext-diff",
      does: "runs a command or loads code",
    });
    expect(findStretch("curl", ["-d", "@x"])?.does).toBe("sends data");
  });
});

describe("OPERAND_PROGRAMS", () => {
  it.each([
    ["rm", true],
    ["/bin/RM", true],
    ["Sed", true],
    ["curl", true],
    ["wget", true],
    ["find", true],
    ["xargs", true],
    ["env", true],
    ["python3", true],
    ["node", true],
    ["tee", true],
    ["cp", true],
    ["mv", true],
    ["npm", false],
    ["git", false],
    ["make", false],
  ])("%s → %s", (program, want) => {
    expect(isOperandProgram(program)).toBe(want);
  });

  it("holds the programs whose extra words are files, code or hosts", () => {
    for (const p of ["rm", "sed", "curl", "wget", "cp", "mv", "tee", "sh", "bash", "python", "node", "find"])
      expect(OPERAND_PROGRAMS.has(p), p).toBe(true);
  });
});
