// render_html pages are shown in <iframe sandbox="allow-scripts" src="/ui/sandbox.html">: an
// opaque origin (never allow-same-origin) under warden's no-network CSP for that page. srcdoc is
// not used: it would inherit this page's CSP, which forbids the page's inline scripts.
//
// The page's own scripts are off until the person clicks "Run the page's scripts" (sandbox.html
// says why: WebRTC is outside every CSP); the frame is then made again with scripts on.
//
// The frame says {type: 'ready'} when its loader script runs; the UI then posts the page's HTML
// once ({type: 'render', html, scripts}). Every other message is ignored, and so is any message
// whose source is not a frame still waiting for its page.

import { h } from './dom.js';

const waiting = new WeakMap();  // the frame's WindowProxy → {html, scripts} it is waiting for

window.addEventListener('message', event => {
  if (!event.source || !waiting.has(event.source)) return;
  if (!event.data || event.data.type !== 'ready') return;
  const { html, scripts } = waiting.get(event.source);
  waiting.delete(event.source);
  event.source.postMessage({ type: 'render', html, scripts }, '*');  // an opaque origin has no name to target
});

const OFF_NOTE = 'Scripts are off: the page is shown without running its code.';
const ON_NOTE = 'Scripts are on. The page still cannot read this page, and fetches, images and '
  + 'frames from the network are blocked, but browsers do not block WebRTC: run scripts only of pages you trust.';

/** A frame wrapper that shows `html` sandboxed (scripts off); the page is sent when the frame is ready. */
export function htmlFrame(html) {
  const note = h('span', { className: 'html-frame-note' }, OFF_NOTE);
  const bar = h('div', { className: 'html-frame-bar' }, note);
  const wrap = h('div', { className: 'html-frame-wrap' });
  const outer = h('div', { className: 'html-frame' }, bar, wrap);
  const run = h('button', { type: 'button', className: 'btn run-scripts', onclick: () => {
    run.remove();
    note.textContent = ON_NOTE;
    wrap.replaceChildren();
    mount(wrap, html, true);
  } }, "Run the page's scripts");
  bar.append(run);
  mount(wrap, html, false);
  return outer;
}

function mount(wrap, html, scripts) {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.setAttribute('referrerpolicy', 'no-referrer');
  frame.title = 'render_html result';
  wrap.append(frame);
  // the frame has a window once it is in the document (the caller inserts it right away); its
  // ready message needs a network round trip, so it cannot come before this runs
  queueMicrotask(() => register(frame, { html, scripts }));
  frame.src = '/ui/sandbox.html';
}

function register(frame, page, tries = 0) {
  if (frame.contentWindow) {
    waiting.set(frame.contentWindow, page);
    return;
  }
  if (tries < 200) setTimeout(() => register(frame, page, tries + 1), 25);
}
