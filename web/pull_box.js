// The "Pull a model" box of the settings drawer (issue 27): a URL or a Hugging Face
// "owner/repo:file.gguf" goes to POST /api/models/pull (stream: true); its progress frames move a
// bar (percent, MB of MB, MB/s); Cancel deletes the pull (DELETE /api/models/pulls/{id}; its partial
// file stays for a resume); once it is done the model list is read again.

import { $, h } from './dom.js';
import { apiFetch, apiJson, envelopeMessage, errorText } from './api.js';
import { sseEvents } from './sse.js';
import { mb } from './model_picker.js';

export class PullBox {
  /** picker: the ModelPicker (its refresh() runs once a pull is done) */
  constructor(picker) {
    this.picker = picker;
    this.id = null;
    $('#pull-form').addEventListener('submit', ev => { ev.preventDefault(); this.start(); });
    $('#pull-cancel').addEventListener('click', () => this.cancel());
  }

  say(text, error) {
    $('#pull-status').replaceChildren(text ? h('div', { className: error ? 'notice notice-error' : 'muted' }, text) : '');
  }

  busy(on) {
    $('#pull-start').disabled = on;
    $('#pull-source').disabled = on;
    $('#pull-cancel').hidden = !on;
    $('#pull-form').dataset.state = on ? 'pulling' : 'idle';
  }

  async start() {
    const source = $('#pull-source').value.trim();
    if (!source) return this.say('Give a URL or owner/repo:file.gguf.', true);
    const body = /^https?:\/\//i.test(source) ? { url: source } : { hf: source };
    body.stream = true;
    this.id = null;
    this.cancelled = false;
    this.abort = new AbortController();
    this.busy(true);
    this.show(0, 0, 0);
    this.say('Starting the download…');
    let outcome = null;
    try {
      const resp = await apiFetch('/api/models/pull', { method: 'POST', body: JSON.stringify(body), signal: this.abort.signal });
      if (!resp.ok) outcome = { error: await errorText(resp) };
      else {
        for await (const ev of sseEvents(resp.body)) {
          const data = JSON.parse(ev.data);
          if (ev.event === 'progress') this.progress(data);
          else if (ev.event === 'done') outcome = { done: data };
          else if (ev.event === 'error') outcome = { error: envelopeMessage(ev.data) };
        }
      }
    } catch (e) {
      if (!this.cancelled) outcome = { error: 'Pull failed: ' + (e.message || e) };
    }
    this.finish(outcome || { error: 'The connection closed before the download was complete.' });
  }

  progress(p) {
    if (p.id) this.id = p.id;
    this.show(p.downloaded_bytes || 0, p.total_bytes || 0, p.bytes_per_s || 0);
    this.say(`Downloading ${p.model || ''}…`);
  }

  /** The bar and its words: "42% · 12.3 / 29 MB · 4.1 MB/s" (no total: an indeterminate bar). */
  show(done, total, rate) {
    const bar = $('#pull-bar');
    $('#pull-progress').hidden = false;
    if (total > 0) {
      bar.max = total;
      bar.value = Math.min(done, total);
    } else bar.removeAttribute('value');
    const pct = total > 0 ? Math.floor(100 * done / total) : null;
    bar.dataset.percent = pct === null ? '' : String(pct);
    $('#pull-text').textContent = [pct === null ? '' : pct + '%',
      `${mb(done)}${total > 0 ? ' / ' + mb(total) : ''} MB`, rate > 0 ? mb(rate) + ' MB/s' : ''].filter(Boolean).join(' · ');
  }

  async finish(outcome) {
    this.busy(false);
    $('#pull-form').dataset.outcome = outcome.done ? 'done' : this.cancelled ? 'cancelled' : 'error';
    if (outcome.done) {
      const bar = $('#pull-bar');
      bar.value = bar.max;
      bar.dataset.percent = '100';
      $('#pull-source').value = '';
      this.say(`Pulled ${outcome.done.model || 'the model'}: it is in the list, ready to load.`);
      await this.picker.refresh();
    } else if (this.cancelled) {
      this.say(this.id ? 'Cancelled. Pulling the same file again resumes the download.'
        : 'Stopped watching: the download may go on in warden.');
    } else {
      this.say(outcome.error, true);
    }
  }

  async cancel() {
    this.cancelled = true;
    if (!this.id) return this.abort.abort();  // no id yet: dropping the request ends it
    try {
      await apiJson('/api/models/pulls/' + encodeURIComponent(this.id), { method: 'DELETE' });
    } catch (e) {
      this.say('Could not cancel: ' + e.message, true);
    }
  }
}
