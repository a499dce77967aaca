/** The backend's public surface: the client, the doctor probe and their types. */
export { type BackendOptions, createBackend } from "./client.js";
export { type ProbeResult, probeBackend, probeBackendInfo } from "./probe.js";
export type {
  Backend,
  BackendError,
  BackendErrorKind,
  BackendEvent,
  BackendReply,
  BackendRequest,
  ChatMessage,
  ChatRole,
  StructuredLevel,
  Usage,
} from "./types.js";
export { STEP_SCHEMA_NAME } from "./wire.js";
