// render_html pages are shown in <iframe sandbox="allow-scripts" src="/ui/sandbox.html">: an
// opaque origin (never allow-same-origin) under warden's no-network CSP for that page. srcdoc is
// not used: it would inherit this page's CSP, which forbids the page's inline scripts.
//
// The frame says {type: 'ready'} when its loader script runs; the UI then posts the page's HTML
// once ({type: 'render', html}). Every other message is ignored, and so is any message whose
// source is not a frame still waiting for its page.

const waiting = new WeakMap();  // the frame's WindowProxy → the html it is waiting for

window.addEventListener('message', event => {
  if (!event.source || !waiting.has(event.source)) return;
  if (!event.data || event.data.type !== 'ready') return;
  const html = waiting.get(event.source);
  waiting.delete(event.source);
  event.source.postMessage({ type: 'render', html }, '*');  // an opaque origin has no name to target
});

/** A frame wrapper that shows `html` sandboxed; the page is sent when the frame is ready. */
export function htmlFrame(html) {
  const wrap = document.createElement('div');
  wrap.className = 'html-frame-wrap';
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.setAttribute('referrerpolicy', 'no-referrer');
  frame.title = 'render_html result';
  wrap.append(frame);
  // the frame has a window once it is in the document (the caller inserts it right away); its
  // ready message needs a network round trip, so it cannot come before this runs
  queueMicrotask(() => register(frame, html));
  frame.src = '/ui/sandbox.html';
  return wrap;
}

function register(frame, html, tries = 0) {
  if (frame.contentWindow) {
    waiting.set(frame.contentWindow, html);
    return;
  }
  if (tries < 200) setTimeout(() => register(frame, html, tries + 1), 25);
}
