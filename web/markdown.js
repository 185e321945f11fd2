// Markdown → sanitized DOM, with code highlighting. marked, DOMPurify and hljs are the vendor
// globals loaded by index.html before this module.

const { marked, DOMPurify, hljs } = window;

marked.setOptions({ gfm: true, breaks: false });

// Model output must not look like or take over the UI: no ids or names (they would shadow the
// UI's own elements for querySelector), and of classes only marked's `language-*` on code blocks
// (the app's own classes could draw a fake approval card or a full-page overlay).
const CODE_CLASS = /^language-[A-Za-z0-9_+-]{1,40}$/;

DOMPurify.addHook('afterSanitizeAttributes', node => {
  if (node.hasAttribute && node.hasAttribute('class')) {
    const keep = [...node.classList].filter(c => CODE_CLASS.test(c));
    if (keep.length) node.setAttribute('class', keep.join(' '));
    else node.removeAttribute('class');
  }
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

const PURIFY = { FORBID_ATTR: ['style', 'id', 'name'], FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea'] };

/** Replaces `el`'s content with the rendering of `text`. */
export function renderMarkdown(el, text) {
  el.innerHTML = DOMPurify.sanitize(marked.parse(text || ''), PURIFY);
  for (const code of el.querySelectorAll('pre code')) highlightBlock(code);
}

function highlightBlock(code) {
  const lang = [...code.classList].find(c => c.startsWith('language-'));
  const name = lang && lang.slice(9);
  if (name && !hljs.getLanguage(name)) code.classList.remove(lang);
  hljs.highlightElement(code);
}

/** A <code> element holding `text` highlighted as `language` (plain text when unknown). */
export function highlightedCode(text, language) {
  const code = document.createElement('code');
  code.textContent = text;
  if (language && hljs.getLanguage(language)) {
    code.innerHTML = hljs.highlight(text, { language, ignoreIllegals: true }).value;
    code.classList.add('hljs', 'language-' + language);
  }
  return code;
}
