/** Observation clip sizes per tool; the clipping itself is core (src/core/clip.ts). */

/** Clip sizes (docs/context.md "The ReACT loop": bash ~2 KB, file_read ~8 KB, ...), in bytes. */
export const CLIP = {
  bash: 2 * 1024,
  file_read: 8 * 1024,
  http_request: 8 * 1024,
  grep: 8 * 1024,
  glob: 8 * 1024,
  outline: 8 * 1024,
  mcp_call: 8 * 1024,
  parallel: 12 * 1024,
  recall: 16 * 1024,
  skill: 32 * 1024,
  final: Number.POSITIVE_INFINITY,
} as const;
