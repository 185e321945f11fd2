// Server-sent events from a fetch() response body: yields each event's data (the `data:` lines
// joined by "\n"); comments (": ping") and other fields are skipped.

export async function* sseData(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let cut;
      while ((cut = eventEnd(buf)) !== null) {
        const data = dataOf(buf.slice(0, cut.at));
        buf = buf.slice(cut.at + cut.len);
        if (data !== null) yield data;
      }
    }
    const tail = dataOf(buf);
    if (tail !== null) yield tail;
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** Where the first complete event in `buf` ends (a blank line), or null. */
function eventEnd(buf) {
  const m = /\r\n\r\n|\n\n|\r\r/.exec(buf);
  return m ? { at: m.index, len: m[0].length } : null;
}

function dataOf(block) {
  const lines = block.split(/\r\n|\n|\r/).filter(l => l.startsWith('data:'));
  if (!lines.length) return null;
  return lines.map(l => l.slice(5).replace(/^ /, '')).join('\n');
}
