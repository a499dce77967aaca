import { describe, expect, it } from "vitest";
import type { PolicyMode } from "../../src/config/schema.js";
import {
  correctUnattended,
  effectiveUnattended,
  lessPrivileged,
  parsePolicyMode,
  privilegeMin,
} from "../../src/policy/modes.js";

describe("parsePolicyMode", () => {
  it.each([
    ["readonly", "readonly"],
    ["guarded", "guarded"],
    ["unrestricted", "unrestricted"],
    ["yolo", "unrestricted"],
    ["YOLO", "unrestricted"],
    ["  Guarded\n", "guarded"],
    ["ReadOnly", "readonly"],
    ["\tUNRESTRICTED ", "unrestricted"],
  ])("accepts %j as %s", (input, expected) => {
    expect(parsePolicyMode(input)).toBe(expected);
  });

  it.each([
    [""],
    ["   "],
    ["read-only"],
    ["guard"],
    ["unrestricted!"],
    ["yol o"],
    ["constructor"],
    ["__proto__"],
    ["toString"],
    [undefined],
    [null],
    [1],
    [["guarded"]],
  ])("rejects %j", (input) => {
    expect(parsePolicyMode(input)).toBeUndefined();
  });
});

describe("privilege order readonly < guarded < unrestricted", () => {
  it.each<[PolicyMode, PolicyMode, PolicyMode]>([
    ["readonly", "readonly", "readonly"],
    ["readonly", "guarded", "readonly"],
    ["guarded", "readonly", "readonly"],
    ["readonly", "unrestricted", "readonly"],
    ["unrestricted", "readonly", "readonly"],
    ["guarded", "guarded", "guarded"],
    ["guarded", "unrestricted", "guarded"],
    ["unrestricted", "guarded", "guarded"],
    ["unrestricted", "unrestricted", "unrestricted"],
  ])("privilegeMin(%s, %s) = %s", (a, b, expected) => {
    expect(privilegeMin(a, b)).toBe(expected);
  });

  it("lessPrivileged is strict", () => {
    expect(lessPrivileged("readonly", "guarded")).toBe(true);
    expect(lessPrivileged("guarded", "unrestricted")).toBe(true);
    expect(lessPrivileged("guarded", "guarded")).toBe(false);
    expect(lessPrivileged("unrestricted", "readonly")).toBe(false);
  });
});

describe("correctUnattended maps guarded to readonly", () => {
  it.each<[PolicyMode, PolicyMode]>([
    ["readonly", "readonly"],
    ["guarded", "readonly"],
    ["unrestricted", "unrestricted"],
  ])("%s -> %s", (m, expected) => {
    expect(correctUnattended(m)).toBe(expected);
  });
});

describe("effectiveUnattended = correctUnattended(privilegeMin(requested, ceiling))", () => {
  it.each<[PolicyMode, PolicyMode, PolicyMode]>([
    // default ceiling is readonly: nothing unattended gets more
    ["unrestricted", "readonly", "readonly"],
    ["guarded", "readonly", "readonly"],
    ["readonly", "readonly", "readonly"],
    // a guarded ceiling still yields readonly (guarded is corrected)
    ["unrestricted", "guarded", "readonly"],
    ["guarded", "guarded", "readonly"],
    // only an explicit unrestricted request under an unrestricted ceiling runs unrestricted
    ["unrestricted", "unrestricted", "unrestricted"],
    ["guarded", "unrestricted", "readonly"],
    ["readonly", "unrestricted", "readonly"],
  ])("requested %s, ceiling %s -> %s", (requested, ceiling, expected) => {
    expect(effectiveUnattended(requested, ceiling)).toBe(expected);
  });
});
