/**
 * What a local server's cache gets from a run's requests (bench/prefix.mjs): a server reuses its
 * KV cache for the unchanged prefix of each request and prefills the rest. A request is read as
 * its tools and instructions then its conversation items (chat `messages`, or
 * Responses `input`), each serialized; a request breaks the prefix when an item the previous
 * request carried is changed or gone (appending is not a break), and its prefill is the
 * characters after the longest common prefix with the previous request.
 */

/**
 * The items of a request in the order a server templates them into the prompt: the tools and
 * instructions (the only fields besides the conversation that reach the prompt; ids, metadata
 * and sampling settings do not), then each conversation item.
 */
function itemsOf(raw) {
  const body = JSON.parse(raw);
  const conversation = body.messages ?? body.input ?? [];
  const head = JSON.stringify({ tools: body.tools, instructions: body.instructions });
  return [
    head,
    ...(Array.isArray(conversation) ? conversation : [conversation]).map((m) => JSON.stringify(m)),
  ];
}

function commonChars(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * For request bodies in order: requests, prefix breaks, breaks per 100 turns, prefill characters
 * per turn (median and mean over requests 2..n), and the first request's characters.
 */
export function prefixStats(raws) {
  let prev;
  let prevText = "";
  let breaks = 0;
  let first = 0;
  const prefill = [];
  for (const raw of raws) {
    const items = itemsOf(raw);
    const text = items.join("\n");
    if (prev === undefined) first = text.length;
    else {
      let same = 0;
      while (same < prev.length && same < items.length && prev[same] === items[same]) same++;
      if (same < prev.length) breaks += 1;
      prefill.push(text.length - commonChars(prevText, text));
    }
    prev = items;
    prevText = text;
  }
  const sorted = [...prefill].sort((a, b) => a - b);
  const turns = raws.length;
  return {
    requests: turns,
    breaks,
    breaksPer100: turns > 1 ? (breaks * 100) / (turns - 1) : 0,
    prefillMedian: sorted.length ? sorted[Math.floor(sorted.length / 2)] : 0,
    prefillMean: prefill.length ? prefill.reduce((a, b) => a + b, 0) / prefill.length : 0,
    first,
  };
}
