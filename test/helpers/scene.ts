/**
 * The lifecycle most CLI tests share: a fresh Scoot home (SCOOT_HOME) and project directory per
 * test, and the scripted model server a test started, closed after it (before its directories go).
 * One call in the file (or a describe) replaces the let/beforeEach/afterEach block:
 *
 *   const scene = useScene({ home: "scoot-h2-tok-", project: "demo" });
 *   ...
 *   scene.server = await startScriptedServer([step("final", "ok")]);
 *   await runCli(["-e", "x"], { home: scene.home, cwd: scene.project, env: { SCOOT_BACKEND_BASE_URL: scene.server.url } });
 *
 * `each` (the default) makes new directories for every test; `all` once for the file or describe.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { demoProject, removeDir, tempDir } from "./cli.js";
import { type ScriptedServer, startScriptedServer } from "./scripted-server.js";

export interface Scene {
  /** The home of this test (SCOOT_HOME). */
  readonly home: string;
  /** With `nested`: the directory holding the home (`<base>/home`), for files beside it. */
  readonly base: string;
  /** The project directory of this test (the CLI's cwd); throws when the scene has none. */
  readonly project: string;
  /** The scripted model server this test started, if any: closed when the test ends. */
  server: ScriptedServer | undefined;
  /**
   * The scripted model server the scene started (`model: true`), empty: a test pushes its steps.
   * A test may replace it (close it first); the one set last is closed when the test ends.
   */
  model: ScriptedServer;
}

export interface SceneOptions {
  /** The home's temp-dir prefix (with `nested`, the base's). */
  home?: string;
  /** The home is `<base>/home` (mode 0700) inside a fresh base directory, removed whole. */
  nested?: boolean;
  /** A temp-dir prefix for an empty project, "demo" for test/helpers/cli.ts demoProject(), false for none. */
  project?: string | false;
  /** The project's real path (a test that compares it with what the CLI resolves). */
  realProject?: boolean;
  /** Start an empty scripted model server for each test (or the file, with `all`): `scene.model`. */
  model?: boolean;
  scope?: "each" | "all";
}

export function useScene(opts: SceneOptions = {}): Scene {
  let home: string | undefined;
  let base: string | undefined;
  let project: string | undefined;
  let model: ScriptedServer | undefined;
  const scene = {
    get model(): ScriptedServer {
      if (model === undefined) throw new Error("this scene has no model server (useScene({ model: true }))");
      return model;
    },
    set model(s: ScriptedServer) {
      model = s;
    },
    get home(): string {
      if (home === undefined) throw new Error("scene.home is made before each test (useScene)");
      return home;
    },
    get base(): string {
      if (base === undefined) throw new Error("this scene has no base (useScene({ nested: true }))");
      return base;
    },
    get project(): string {
      if (project === undefined) throw new Error("this scene has no project (useScene({ project }))");
      return project;
    },
    server: undefined as ScriptedServer | undefined,
  };
  const setUp = async () => {
    if (opts.nested) {
      base = tempDir(opts.home ?? "scoot-test-");
      home = path.join(base, "home");
      fs.mkdirSync(home, { mode: 0o700 });
    } else home = tempDir(opts.home ?? "scoot-home-");
    const p = opts.project ?? false;
    project = p === false ? undefined : p === "demo" ? demoProject() : tempDir(p);
    if (project !== undefined && opts.realProject) project = fs.realpathSync(project);
    if (opts.model) model = await startScriptedServer();
  };
  const tearDown = async () => {
    await scene.server?.close();
    scene.server = undefined;
    await model?.close();
    model = undefined;
    if (base !== undefined) removeDir(base);
    else if (home !== undefined) removeDir(home);
    if (project !== undefined) removeDir(project);
    home = undefined;
    base = undefined;
    project = undefined;
  };
  if (opts.scope === "all") {
    beforeAll(setUp);
    afterAll(tearDown);
  } else {
    beforeEach(setUp);
    afterEach(tearDown);
  }
  return scene;
}
