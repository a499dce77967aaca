/** Waiting that a stop cuts short: the one abortable sleep the loops, the backend and the locks share. */

/** Resolves after `ms`, or at once when `signal` aborts (the caller checks `signal.aborted`). Leaves no timer behind. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
