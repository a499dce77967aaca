/**
 * What the agent may ask of the editor while a prompt runs (docs/editors.md "Editors (ACP)"), free of
 * the SDK: `server.ts` builds it from the connection and the capabilities the client offered
 * at `initialize`; sessions hand it to the tools. Every request has a deadline and follows
 * the prompt's cancellation.
 */
import type { PermissionOption, RequestPermissionOutcome, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { EditorBuffers } from "../tools/types.js";

/** How long a read through the editor may take before the file is read from disk instead. */
export const EDITOR_READ_TIMEOUT_MS = 5_000;

export interface EditorLink {
  /** `fs/read_text_file`, when the client offered it: the buffer, unsaved changes included. */
  readTextFile?: (path: string, signal: AbortSignal) => Promise<string>;
  /** `session/request_permission`: the person's answer, or `cancelled`. */
  requestPermission: (
    toolCall: ToolCallUpdate,
    options: PermissionOption[],
    signal: AbortSignal,
  ) => Promise<RequestPermissionOutcome>;
}

/**
 * file_read's view of the editor: the current prompt's link, when there is one and it reads
 * files. An editor that fails or is slow is not an error: the disk is read instead.
 */
export function editorBuffers(current: () => EditorLink | undefined): EditorBuffers {
  return {
    async read(absPath, signal) {
      const read = current()?.readTextFile;
      if (!read) return undefined;
      const deadline = AbortSignal.any([signal, AbortSignal.timeout(EDITOR_READ_TIMEOUT_MS)]);
      try {
        return await read(absPath, deadline);
      } catch {
        return undefined;
      }
    },
  };
}
