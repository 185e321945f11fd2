// Calls to warden's API: JSON bodies, the API key (asked for once when a call answers 401, kept in
// sessionStorage) and error envelopes turned into readable messages.

import { $ } from './dom.js';

const KEY_STORE = 'warden.api_key';
let pendingKeyPrompt = null;

export class ApiError extends Error {
  constructor(message, status, param) {
    super(message);
    this.status = status;
    this.param = param || '';  // the request field the error names (e.g. "content.name"), if any
  }
}

function authHeaders() {
  const key = sessionStorage.getItem(KEY_STORE);
  return key ? { Authorization: 'Bearer ' + key } : {};
}

/** fetch() with the key; on 401 asks for a key (once for all concurrent callers) and retries. */
export async function apiFetch(path, opts = {}) {
  for (let attempt = 0; ; attempt++) {
    const headers = Object.assign({}, opts.headers || {}, authHeaders());
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    const resp = await fetch(path, Object.assign({}, opts, { headers }));
    if (resp.status !== 401 || attempt >= 5) return resp;
    const hadKey = sessionStorage.getItem(KEY_STORE) !== null;
    await askForKey(hadKey ? 'That key was refused. Try again.' : null, headers.Authorization);
  }
}

/** JSON call: resolves to the parsed body, rejects with ApiError carrying the server's message. */
export async function apiJson(path, opts = {}) {
  const init = Object.assign({}, opts);
  if (opts.json !== undefined) {
    init.body = JSON.stringify(opts.json);
    delete init.json;
  }
  const resp = await apiFetch(path, init);
  if (!resp.ok) {
    const text = await resp.text().catch(() => '');
    throw new ApiError(`${resp.status}: ${envelopeMessage(text) || resp.statusText || 'request failed'}`,
      resp.status, envelopeParam(text));
  }
  return resp.json();
}

/** The message of an error response (OpenAI or Anthropic envelope, or the raw text). */
export async function errorText(resp) {
  const text = await resp.text().catch(() => '');
  return `${resp.status}: ${envelopeMessage(text) || resp.statusText || 'request failed'}`;
}

export function envelopeMessage(text) {
  try {
    const body = JSON.parse(text);
    const err = body.error || body;
    if (typeof err === 'string') return err;
    if (err && typeof err.message === 'string') return err.message;
  } catch (e) { /* not JSON */ }
  return (text || '').slice(0, 500);
}

/** The `param` of an error envelope ('' when there is none). */
export function envelopeParam(text) {
  try {
    const err = JSON.parse(text).error;
    if (err && typeof err.param === 'string') return err.param;
  } catch (e) { /* not JSON */ }
  return '';
}

/** Shows the key form; resolves once a key is stored. Concurrent callers share one form. */
function askForKey(reason, triedAuth) {
  const current = sessionStorage.getItem(KEY_STORE);
  if (current !== null && triedAuth !== 'Bearer ' + current) return Promise.resolve(); // changed meanwhile
  if (!pendingKeyPrompt) {
    pendingKeyPrompt = showKeyForm(reason).finally(() => { pendingKeyPrompt = null; });
  }
  return pendingKeyPrompt;
}

function showKeyForm(reason) {
  const overlay = $('#key-overlay');
  const form = $('#key-form');
  const input = $('#key-input');
  const why = $('#key-reason');
  if (reason) {
    why.textContent = reason;
    why.classList.add('key-error');
  }
  overlay.hidden = false;
  overlay.dataset.shown = String(Number(overlay.dataset.shown || 0) + 1);
  input.value = '';
  input.focus();
  return new Promise(resolve => {
    form.onsubmit = ev => {
      ev.preventDefault();
      const key = input.value.trim();
      if (!key) return;
      sessionStorage.setItem(KEY_STORE, key);
      overlay.hidden = true;
      form.onsubmit = null;
      resolve();
    };
  });
}
