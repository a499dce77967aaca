/**
 * What the model must never reach, in one place (docs/safety.md "Shell containment", "What is
 * protected"): the credential stores under the user's home and Scoot's own files. The gate
 * refuses them to the file tools (reads and writes, readonly and guarded) and the sandbox
 * hides them from bash, both built from these tables.
 */
import fs from "node:fs";
import path from "node:path";
import type { Config } from "../config/schema.js";

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
];

/** Scoot's default home; protected even when SCOOT_HOME points elsewhere. */
export const DEFAULT_HOME_NAME = ".scoot";

export interface ScootPlacesInput {
  config: Config;
  /** The home in use (`--scoot-home`, SCOOT_HOME or ~/.scoot). */
  scootHome: string;
  /** The user's home. */
  userHome: string;
}

/** The words of `backend.api_key_cmd` that name an existing file: what the command reads. */
export function tokenCommandFiles(cmd: string | undefined, userHome: string): string[] {
  if (!cmd) return [];
  const out: string[] = [];
  for (const raw of cmd.split(/[\s;|&<>()]+/)) {
    const word = raw.replace(/^['"]+|['"]+$/g, "").replace(/^[A-Za-z_][A-Za-z0-9_]*=/, "");
    let p: string | undefined;
    if (word === "~" || word.startsWith("~/")) p = path.join(userHome, word.slice(2));
    else if (word.startsWith("/")) p = word;
    if (p === undefined) continue;
    try {
      if (fs.statSync(p).isFile()) out.push(path.resolve(p));
    } catch {
      // not a file: a flag, a program, a path that does not exist
    }
  }
  return out;
}

/** The HMAC key file as the audit log resolves it (relative: under the home). */
export function hmacKeyFile(config: Config, scootHome: string): string | undefined {
  const f = config.audit.hmac_key_file;
  return f ? path.resolve(scootHome, f) : undefined;
}

/**
 * Scoot's own places, absolute: its home, the default home, the token file, the HMAC key and
 * the file `api_key_cmd` reads, wherever they live. The model may not read or change any.
 */
export function scootPlaces(input: ScootPlacesInput): string[] {
  const { config, scootHome, userHome } = input;
  const places = [
    path.resolve(scootHome),
    path.join(userHome, DEFAULT_HOME_NAME),
    path.resolve(scootHome, config.backend.api_key_file ?? "token"),
  ];
  const hmac = hmacKeyFile(config, scootHome);
  if (hmac) places.push(hmac);
  places.push(...tokenCommandFiles(config.backend.api_key_cmd, userHome));
  return [...new Set(places)];
}

/** The credential stores as absolute paths under `userHome`. */
export function credentialStorePaths(userHome: string): string[] {
  return CREDENTIAL_STORES.map((e) => path.join(userHome, e.path));
}
