// The API monitor panel (issue 28 §5): the last model requests any client sent to this server
// (GET /api/inference/monitor, api/control/monitor.h), refreshed every second while the panel is
// open. Each row: when, endpoint, model, status, first-token and total time, tokens, stop reason
// or error, and the prompt and reply previews (already redacted by the server). Clear removes the
// finished entries this key may see.

import { $, h } from './dom.js';
import { apiFetch, apiJson } from './api.js';

const REFRESH_MS = 1000;

function ms(v) {
  if (v === null || v === undefined) return '–';
  return v < 1000 ? `${v} ms` : `${(v / 1000).toFixed(1)} s`;
}

function tokens(u) {
  if (!u) return '–';
  const p = u.prompt_tokens ?? '?';
  const c = u.completion_tokens ?? '?';
  return `${p} → ${c}`;
}

function when(unixMs) {
  return new Date(unixMs).toLocaleTimeString();
}

export class MonitorPanel {
  constructor() {
    this.el = $('#monitor');
    this.timer = null;
    $('#open-monitor').addEventListener('click', () => this.open());
    $('#close-monitor').addEventListener('click', () => this.close());
    $('#clear-monitor').addEventListener('click', () => this.clear());
  }

  open() {
    this.el.hidden = false;
    this.refresh();
    if (!this.timer) this.timer = setInterval(() => this.refresh(), REFRESH_MS);
  }

  close() {
    this.el.hidden = true;
    clearInterval(this.timer);
    this.timer = null;
  }

  async clear() {
    await apiFetch('/api/inference/monitor', { method: 'DELETE' });
    this.refresh();
  }

  async refresh() {
    let m;
    try {
      m = await apiJson('/api/inference/monitor');
    } catch (e) {
      $('#monitor-summary').textContent = `The monitor is not available: ${e.message}`;
      return;
    }
    this.render(m);
  }

  render(m) {
    const q = m.queue ? ` · queue ${m.queue.waiting} waiting, ${m.queue.busy}/${m.queue.slots} slots busy` : '';
    const model = m.active_model ? ` · ${m.active_model}` : '';
    $('#monitor-summary').textContent =
      `${m.status}${model} · ${m.active_requests} active${q}` + (m.logging_enabled ? '' : ' · recording is off');
    const rows = m.entries.map(e => h('tr', { className: `mon-row mon-${e.status}`, dataset: { id: e.id } },
      h('td', {}, when(e.started_at)),
      h('td', {}, e.method + ' ' + e.endpoint, e.stream ? h('span', { className: 'mon-tag' }, 'stream') : null),
      h('td', {}, e.model || '–'),
      h('td', { className: 'mon-status' }, e.status, e.http_status ? ` (${e.http_status})` : ''),
      h('td', {}, ms(e.first_token_ms)),
      h('td', {}, ms(e.duration_ms)),
      h('td', {}, tokens(e.usage)),
      h('td', { className: 'mon-text' }, e.error ? h('span', { className: 'mon-error-text' }, e.error) : (e.stop_reason || '–')),
      h('td', { className: 'mon-text', title: e.prompt_preview }, e.prompt_preview),
      h('td', { className: 'mon-text', title: e.reply_preview }, e.reply_preview)));
    const body = $('#monitor-rows');
    body.replaceChildren(...rows);
    $('#monitor-empty').hidden = rows.length > 0;
  }
}
