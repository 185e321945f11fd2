// Small DOM helpers: elements are built with properties, never with HTML strings (the only HTML
// that is inserted as HTML is Markdown output sanitized by DOMPurify, in markdown.js).

/** h('div', {className: 'x', onclick: f, dataset: {id: 1}}, child, 'text', …) */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key in el) el[key] = value;
    else el.setAttribute(key, value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
}

export const $ = (sel, root = document) => root.querySelector(sel);

/** Random URL-safe id: prefix + 22 characters (128 bits). */
export function randomId(prefix) {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const b64 = btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  return prefix + b64;
}

/** Scrolls `box` to its end when the user has not scrolled away from it. */
export function stickToBottom(box, force) {
  const near = box.scrollHeight - box.scrollTop - box.clientHeight < 120;
  if (force || near) box.scrollTop = box.scrollHeight;
}
