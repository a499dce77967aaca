/**
 * What the model must never reach, in one place (docs/safety.md "Shell containment", "What is
 * protected"): the credential stores under the user's home and Scoot's own files. The gate
 * refuses them to the file tools (reads and writes, readonly and guarded) and the sandbox
 * hides them from bash, both built from these tables.
 */
import path from "node:path";
import { namedCompileCacheDir } from "../config/compile-cache-dir.js";
import type { Config } from "../config/schema.js";
import { tokenCommandFiles } from "../config/token-command-files.js";
import { isInside } from "../core/inside.js";

/** One hidden entry under the user's home, with the reason it is there (README table). */
export interface HomeEntry {
  path: string;
  what: string;
}

/**
 * Credential stores under the user's home that are hidden even though they are not Scoot's:
 * where CLIs keep keys, tokens and sessions. docs/safety.md "What is protected" lists the same rows
 * (test/sandbox/protected-places.test.ts keeps the two in step).
 */
export const CREDENTIAL_STORES: readonly HomeEntry[] = [
  { path: ".ssh", what: "ssh keys" },
  { path: ".gnupg", what: "gpg keys" },
  { path: ".password-store", what: "pass" },
  { path: ".local/share/keyrings", what: "desktop keyring" },
  { path: ".netrc", what: "machine passwords" },
  { path: ".git-credentials", what: "git" },
  { path: ".config/git/credentials", what: "git (XDG store)" },
  { path: ".config/gh", what: "GitHub CLI" },
  { path: ".config/hub", what: "hub" },
  { path: ".config/glab-cli", what: "GitLab CLI" },
  { path: ".aws", what: "AWS" },
  { path: ".azure", what: "Azure" },
  { path: ".config/gcloud", what: "Google Cloud" },
  { path: ".oci", what: "Oracle Cloud" },
  { path: ".config/doctl", what: "DigitalOcean" },
  { path: ".config/hcloud", what: "Hetzner" },
  { path: ".config/openstack", what: "OpenStack" },
  { path: ".kube", what: "Kubernetes" },
  { path: ".docker", what: "Docker registries" },
  { path: ".config/containers/auth.json", what: "podman registries" },
  { path: ".terraform.d", what: "Terraform" },
  { path: ".terraformrc", what: "Terraform" },
  { path: ".pulumi", what: "Pulumi" },
  { path: ".vault-token", what: "Vault" },
  { path: ".config/sops", what: "sops/age keys" },
  { path: ".config/rclone", what: "rclone remotes" },
  { path: ".databrickscfg", what: "Databricks" },
  { path: ".boto", what: "gsutil" },
  { path: ".s3cfg", what: "s3cmd" },
  { path: ".npmrc", what: "npm registry" },
  { path: ".yarnrc", what: "yarn registry" },
  { path: ".yarnrc.yml", what: "yarn registry" },
  { path: ".pypirc", what: "PyPI" },
  { path: ".config/pip/pip.conf", what: "pip index" },
  { path: ".gem/credentials", what: "RubyGems" },
  { path: ".cargo/credentials", what: "crates.io" },
  { path: ".cargo/credentials.toml", what: "crates.io" },
  { path: ".m2/settings.xml", what: "Maven" },
  { path: ".gradle/gradle.properties", what: "Gradle" },
  { path: ".nuget/NuGet/NuGet.Config", what: "NuGet" },
  { path: ".config/composer/auth.json", what: "Composer" },
  { path: ".composer/auth.json", what: "Composer" },
  { path: ".pgpass", what: "PostgreSQL" },
  { path: ".my.cnf", what: "MySQL" },
  { path: ".mylogin.cnf", what: "MySQL" },
  { path: ".codex", what: "Codex CLI" },
  { path: ".claude", what: "Claude Code" },
  { path: ".claude.json", what: "Claude Code" },
  { path: ".mozilla", what: "Firefox profiles" },
  { path: ".config/google-chrome", what: "Chrome profiles" },
  { path: ".config/chromium", what: "Chromium profiles" },
  { path: ".config/BraveSoftware", what: "Brave profiles" },
  { path: ".config/microsoft-edge", what: "Edge profiles" },
  { path: ".bash_history", what: "shell history" },
  { path: ".zsh_history", what: "shell history" },
  { path: ".psql_history", what: "database history" },
  { path: ".mysql_history", what: "database history" },
  { path: ".cache/huggingface/token", what: "Hugging Face" },
  { path: ".huggingface/token", what: "Hugging Face (old location)" },
  { path: ".config/op", what: "1Password CLI" },
  { path: ".op", what: "1Password CLI (old location)" },
  { path: ".config/github-copilot", what: "GitHub Copilot" },
];

/** How a credential-pointing variable names its place. */
export type PointerKind = "file" | "dir" | "list";

/** A variable that tells a CLI where its credentials are, so they can lie outside the stores above. */
export interface CredentialPointer {
  variable: string;
  /** `file` and `dir`: one path; `list`: `:`-separated paths (KUBECONFIG). */
  kind: PointerKind;
  what: string;
}

/**
 * Credential-pointing variables, read from Scoot's own environment: the place each one names is
 * hidden like a credential store. docs/safety.md "What is protected" lists the same rows.
 */
export const CREDENTIAL_POINTERS: readonly CredentialPointer[] = [
  { variable: "GOOGLE_APPLICATION_CREDENTIALS", kind: "file", what: "Google Cloud service-account key" },
  { variable: "CLOUDSDK_CONFIG", kind: "dir", what: "gcloud configuration and tokens" },
  { variable: "KUBECONFIG", kind: "list", what: "Kubernetes clusters and tokens" },
  { variable: "AWS_SHARED_CREDENTIALS_FILE", kind: "file", what: "AWS keys" },
  { variable: "AWS_CONFIG_FILE", kind: "file", what: "AWS profiles (SSO, credential_process)" },
  { variable: "AWS_WEB_IDENTITY_TOKEN_FILE", kind: "file", what: "AWS web identity token" },
  { variable: "DOCKER_CONFIG", kind: "dir", what: "Docker registry logins" },
  { variable: "REGISTRY_AUTH_FILE", kind: "file", what: "podman/buildah registry logins" },
  { variable: "AZURE_CONFIG_DIR", kind: "dir", what: "Azure CLI tokens" },
  { variable: "OCI_CLI_CONFIG_FILE", kind: "file", what: "Oracle Cloud keys" },
  { variable: "GNUPGHOME", kind: "dir", what: "gpg keys" },
  { variable: "PASSWORD_STORE_DIR", kind: "dir", what: "pass" },
  { variable: "NETRC", kind: "file", what: "machine passwords (curl, git)" },
  { variable: "PGPASSFILE", kind: "file", what: "PostgreSQL passwords" },
  { variable: "BOTO_CONFIG", kind: "file", what: "gsutil keys" },
  { variable: "DATABRICKS_CONFIG_FILE", kind: "file", what: "Databricks tokens" },
  { variable: "TF_CLI_CONFIG_FILE", kind: "file", what: "Terraform tokens" },
  { variable: "RCLONE_CONFIG", kind: "file", what: "rclone remotes" },
  { variable: "SOPS_AGE_KEY_FILE", kind: "file", what: "sops age key" },
  { variable: "NPM_CONFIG_USERCONFIG", kind: "file", what: "npm registry token" },
  { variable: "HF_TOKEN_PATH", kind: "file", what: "Hugging Face token" },
  { variable: "GH_CONFIG_DIR", kind: "dir", what: "GitHub CLI tokens" },
];

/** Where the user's home and the project lie, so a pointer at either is not taken. */
export interface PointerBounds {
  userHome?: string;
  projectRoot?: string;
}

/**
 * The places the credential-pointing variables in `env` name, absolute (relative values resolve
 * against `cwd`, as the CLIs that read them do). A pointer at `/`, at the user's home or at a
 * directory that holds the project is left out: hiding it would hide the work itself, and such
 * a setting is a mistake rather than a credential.
 */
export function credentialPointerPaths(
  env: NodeJS.ProcessEnv,
  cwd: string,
  bounds: PointerBounds = {},
): string[] {
  const out: string[] = [];
  for (const p of CREDENTIAL_POINTERS) {
    const value = env[p.variable];
    if (!value) continue;
    const entries = p.kind === "list" ? value.split(":") : [value];
    for (const e of entries) {
      if (e.trim() === "") continue;
      const abs = path.resolve(cwd, e);
      if (coversWork(abs, bounds)) continue;
      if (!out.includes(abs)) out.push(abs);
    }
  }
  return out;
}

function coversWork(p: string, bounds: PointerBounds): boolean {
  if (p === path.parse(p).root) return true;
  for (const w of [bounds.userHome, bounds.projectRoot]) {
    if (w === undefined) continue;
    if (isInside(w, p)) return true;
  }
  return false;
}

/** Scoot's default home; protected even when SCOOT_HOME points elsewhere. */
export const DEFAULT_HOME_NAME = ".scoot";

export interface ScootPlacesInput {
  config: Config;
  /** The home in use (`--scoot-home`, SCOOT_HOME, ~/.scoot or the XDG state directory). */
  scootHome: string;
  /** Where the configuration lives when it is not the home (`$XDG_CONFIG_HOME/scoot`). */
  configDir?: string;
  /** The user's home. */
  userHome: string;
  /** Scoot's environment (the token command's `$XDG_*_HOME`); process.env when absent. */
  env?: NodeJS.ProcessEnv;
  /** The project root, where a relative word of the token command is also looked up. */
  projectRoot?: string;
}

/** The HMAC key file as the audit log resolves it (relative: under the home). */
export function hmacKeyFile(config: Config, scootHome: string): string | undefined {
  const f = config.audit.hmac_key_file;
  return f ? path.resolve(scootHome, f) : undefined;
}

/**
 * Scoot's own places, absolute: its home, the default home, the configuration, the token file,
 * the HMAC key, the file `api_key_cmd` reads and the compile cache `SCOOT_COMPILE_CACHE` names,
 * wherever they live. The model may not read or change any.
 */
export function scootPlaces(input: ScootPlacesInput): string[] {
  const { config, scootHome, userHome } = input;
  const configDir = input.configDir ?? scootHome;
  const places = [
    path.resolve(scootHome),
    path.resolve(configDir),
    path.join(userHome, DEFAULT_HOME_NAME),
    path.resolve(configDir, config.backend.api_key_file ?? "token"),
    // Named inside the home, but a dotfile manager may link them anywhere (a repository the
    // user works in): their real location is hidden and refused as the home is.
    path.join(configDir, "config.toml"),
    path.join(configDir, "config.json"),
  ];
  const hmac = hmacKeyFile(config, scootHome);
  if (hmac) places.push(hmac);
  // Compiled code kept there runs as the next Scoot (src/config/compile-cache-dir.ts).
  const compiled = namedCompileCacheDir(input.env ?? process.env, {
    userHome,
    ...(input.projectRoot ? { projectRoot: input.projectRoot } : {}),
  });
  if (compiled) places.push(compiled);
  places.push(
    ...tokenCommandFiles(config.backend.api_key_cmd, userHome, {
      scootHome: configDir,
      ...(input.env ? { env: input.env } : {}),
      ...(input.projectRoot ? { projectRoot: input.projectRoot } : {}),
    }),
  );
  return [...new Set(places)];
}

/** The credential stores as absolute paths under `userHome`. */
export function credentialStorePaths(userHome: string): string[] {
  return CREDENTIAL_STORES.map((e) => path.join(userHome, e.path));
}
