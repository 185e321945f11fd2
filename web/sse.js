// Server-sent events from a fetch() response body: sseData yields each event's data (the `data:`
// lines joined by "\n"); sseEvents yields {event, data} (event: the `event:` field, 'message' when
// there is none). Comments (": ping") and other fields are skipped.

export async function* sseData(body) {
  for await (const ev of sseEvents(body)) yield ev.data;
}

export async function* sseEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let cut;
      while ((cut = eventEnd(buf)) !== null) {
        const ev = eventOf(buf.slice(0, cut.at));
        buf = buf.slice(cut.at + cut.len);
        if (ev !== null) yield ev;
      }
    }
    const tail = eventOf(buf);
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

function eventOf(block) {
  const lines = block.split(/\r\n|\n|\r/);
  const data = lines.filter(l => l.startsWith('data:'));
  if (!data.length) return null;
  const named = lines.find(l => l.startsWith('event:'));
  return { event: named ? named.slice(6).trim() : 'message', data: data.map(l => l.slice(5).replace(/^ /, '')).join('\n') };
}
