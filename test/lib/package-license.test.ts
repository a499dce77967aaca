/**
 * The package ships its license: `npm pack --dry-run --json` lists LICENSE, whose text is the
 * license package.json names (MIT), and package.json's "files" names it.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/cli.js";

describe("the packed package", () => {
  it("ships LICENSE with the text of package.json's license", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
      license: string;
      files: string[];
    };
    expect(pkg.license).toBe("MIT");
    expect(pkg.files).toContain("LICENSE");
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
        cwd: REPO_ROOT,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }),
    ) as { files: { path: string; size: number }[] }[];
    const license = packed[0]!.files.find((f) => f.path === "LICENSE");
    expect(license, "LICENSE is not in the tarball").toBeDefined();
    const text = fs.readFileSync(path.join(REPO_ROOT, "LICENSE"), "utf8");
    expect(license!.size).toBe(Buffer.byteLength(text));
    expect(text.split("\n")[0]).toBe("MIT License");
    expect(text).toMatch(/^Copyright \(c\) \d{4} .+$/m);
    expect(text.replace(/\s+/g, " ")).toContain(
      'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED',
    );
  });
});
