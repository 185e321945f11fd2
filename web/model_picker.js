// The model picker (issue 27): the topbar's select lists the model library (GET /api/models; the
// loaded one marked, unreadable files disabled with their error as the tooltip); choosing a model
// loads it (POST /api/inference/load, stream: true) with its progress beside the select; the
// settings drawer's Models block shows the status (state, context per slot, warnings), the library
// and Unload. With a remote --upstream (/api/models answers 503) it lists /v1/models as before.

import { $, h } from './dom.js';
import { apiFetch, apiJson, envelopeMessage, errorText } from './api.js';
import { sseEvents } from './sse.js';
import { saveSettings } from './store.js';

const BUSY_STATES = ['loading', 'draining', 'restarting'];
const POLL_MS = 2000;

export class ModelPicker {
  /** app: {settings} */
  constructor(app) {
    this.app = app;
    this.select = $('#model-select');
    this.models = [];
    this.status = null;
    this.managed = false;   // warden runs the model itself (load / unload apply)
    this.loading = null;    // the id being loaded by this page
    this.select.addEventListener('change', () => this.picked(this.select.value));
    $('#model-unload').addEventListener('click', () => this.unload());
  }

  loaded() {
    const m = this.models.find(x => x.loaded);
    return m ? m.id : '';
  }

  /** Lists the models and reads the status again; never throws. */
  async refresh() {
    try {
      this.models = (await apiJson('/api/models')).data || [];
      this.managed = true;
    } catch (e) {
      this.managed = false;
      if (e.status !== 503) return this.listFailed(e);
      try {
        this.models = ((await apiJson('/v1/models')).data || []).map(m => ({ id: m.id }));
      } catch (e2) {
        return this.listFailed(e2);
      }
    }
    if (this.managed) await this.readStatus();
    this.render();
  }

  listFailed(e) {
    this.select.replaceChildren(h('option', { value: '' }, 'no model list'));
    this.setState('failed', 'Could not list the models: ' + e.message);
  }

  async readStatus() {
    clearTimeout(this.poll);
    try {
      this.status = await apiJson('/api/inference/status');
    } catch (e) {
      this.status = { state: 'failed', message: 'Could not read the status: ' + e.message, warnings: [] };
    }
    if (!this.loading && BUSY_STATES.includes(this.status.state)) {
      this.poll = setTimeout(() => this.refresh(), POLL_MS);  // another client's load, or a restart
    }
  }

  render() {
    const loaded = this.loaded();
    const options = this.models.map(m => h('option', {
      value: m.id, disabled: Boolean(m.error), title: m.error || describe(m),
      dataset: { loaded: m.loaded ? '1' : '0', unusable: m.error ? '1' : '0' },
    }, m.id + (m.loaded ? '  ● loaded' : '') + (m.error ? '  (unusable)' : '')));
    if (this.managed && !loaded) options.unshift(h('option', { value: '' }, '(no model loaded)'));
    this.select.replaceChildren(...options);
    if (this.managed) {
      this.select.value = this.loading || loaded;
      this.app.settings.model = loaded;  // new chats go to the loaded model
      saveSettings(this.app.settings);
    } else if (this.models.some(m => m.id === this.app.settings.model)) {
      this.select.value = this.app.settings.model;
    }
    this.select.disabled = Boolean(this.loading);
    this.select.dataset.loaded = '1';
    if (!this.loading) this.showStatus();
    this.renderBlock();
  }

  showStatus() {
    const s = this.status;
    if (!this.managed || !s) return this.setState('', '');
    if (s.state === 'ready') {
      const ctx = s.n_ctx_slot ? `${s.n_ctx_slot.toLocaleString('en')} tokens a slot` : '';
      return this.setState('ready', ['ready', ctx].filter(Boolean).join(' · '), s.warnings && s.warnings.length);
    }
    if (s.state === 'unloaded') return this.setState('unloaded', 'no model loaded');
    this.setState(s.state, s.state + (s.message ? ': ' + s.message : ''));
  }

  /** The chip beside the select: a spinner while busy, the error in red. */
  setState(state, text, warn) {
    const chip = $('#model-state');
    chip.dataset.state = state;
    chip.className = 'model-state' + (BUSY_STATES.includes(state) ? ' busy' : '') +
      (state === 'failed' ? ' error' : '') + (warn ? ' warn' : '');
    chip.replaceChildren(BUSY_STATES.includes(state) ? h('span', { className: 'spinner', 'aria-hidden': 'true' }) : '',
      h('span', { className: 'model-state-text' }, text));
    chip.title = text;
  }

  picked(id) {
    if (!this.managed) {
      this.app.settings.model = id;
      saveSettings(this.app.settings);
      return;
    }
    if (id && id !== this.loaded()) this.load(id);
  }

  /** Loads (swaps to) `id`, showing each progress frame; the error frame's message on failure. */
  async load(id) {
    if (this.loading) return;
    this.loading = id;
    this.progress = 0;
    this.render();
    this.setState('loading', `Loading ${id}…`);
    let failure = null;
    let done = false;
    try {
      const resp = await apiFetch('/api/inference/load',
        { method: 'POST', body: JSON.stringify({ model: id, stream: true }) });
      if (!resp.ok) failure = await errorText(resp);
      else {
        for await (const ev of sseEvents(resp.body)) {
          if (ev.event === 'progress') this.progressFrame(id, JSON.parse(ev.data));
          else if (ev.event === 'error') failure = envelopeMessage(ev.data);
          else if (ev.event === 'done') done = true;
        }
        if (!done && !failure) failure = 'The connection closed before the model was loaded.';
      }
    } catch (e) {
      failure = 'Load failed: ' + (e.message || e);
    }
    this.loading = null;
    await this.refresh();
    if (failure) this.setState('failed', `Could not load ${id}: ${failure}`);
    this.loadOutcome(id, failure);
  }

  progressFrame(id, p) {
    this.progress += 1;
    const secs = typeof p.elapsed_ms === 'number' ? ` (${(p.elapsed_ms / 1000).toFixed(1)} s)` : '';
    const what = p.message || 'loading';
    this.setState('loading', (what.includes(id) ? what : `${id}: ${what}`) + secs);
    $('#model-state').dataset.progress = String(this.progress);
  }

  loadOutcome(id, failure) {
    const box = $('#model-outcome');
    box.dataset.model = id;
    box.dataset.outcome = failure ? 'error' : 'ok';
    box.replaceChildren(failure ? h('div', { className: 'notice notice-error' }, `Could not load ${id}: ${failure}`) : '');
  }

  async unload() {
    $('#model-unload').disabled = true;
    try {
      await apiJson('/api/inference/unload', { method: 'POST', json: {} });
      $('#model-outcome').replaceChildren();
    } catch (e) {
      $('#model-outcome').replaceChildren(h('div', { className: 'notice notice-error' }, 'Could not unload: ' + e.message));
    }
    await this.refresh();
  }

  /** The settings drawer's Models block: the status and the library. */
  renderBlock() {
    $('#models-block').hidden = !this.managed;
    if (!this.managed) return;
    const s = this.status || {};
    const box = $('#model-status');
    box.dataset.state = s.state || '';
    box.dataset.model = s.model || '';
    box.replaceChildren(...[
      h('div', {}, h('strong', {}, s.model || 'no model'), ' · ', h('span', { className: 'tag' }, s.state || '?')),
      s.n_ctx_slot ? h('div', { className: 'muted' }, `context: ${s.n_ctx_slot.toLocaleString('en')} tokens a slot` +
        (s.context_length && s.context_length !== s.n_ctx_slot ? ` (asked ${s.context_length.toLocaleString('en')})` : '') +
        (s.slots_total ? ` · slots ${s.slots_busy || 0}/${s.slots_total} busy` : '')) : null,
      s.message && s.state !== 'ready' ? h('div', { className: 'muted' }, s.message) : null,
      ...(s.warnings || []).map(w => h('div', { className: 'notice notice-warn model-warning' }, String(w)))].filter(Boolean));
    $('#model-unload').disabled = Boolean(this.loading) || !this.loaded();
    $('#model-list').replaceChildren(...this.models.map(m => this.row(m)));
  }

  row(m) {
    const action = m.error ? h('span', { className: 'tag bad' }, 'unusable')
      : m.loaded ? h('span', { className: 'tag ok' }, 'loaded')
        : h('button', { type: 'button', className: 'btn btn-small', disabled: Boolean(this.loading),
          onclick: () => this.load(m.id) }, 'Load');
    return h('div', { className: 'model-row' + (m.error ? ' unusable' : ''), title: m.error || '',
      dataset: { model: m.id, loaded: m.loaded ? '1' : '0', unusable: m.error ? '1' : '0' } },
    h('div', { className: 'model-row-main' }, h('code', {}, m.id),
      h('div', { className: 'muted model-meta' }, m.error || describe(m))),
    action);
  }
}

/** "llama · Q4_1 · 135M · 98 MB · 8,192 ctx · tools" */
function describe(m) {
  const caps = Object.entries(m.capabilities || {}).filter(([k, v]) => v && k !== 'chat').map(([k]) => k);
  return [m.architecture, m.quantization, m.parameters, m.size_bytes ? mb(m.size_bytes) + ' MB' : '',
    m.context_length ? m.context_length.toLocaleString('en') + ' ctx' : '', ...caps].filter(Boolean).join(' · ');
}

export function mb(bytes) {
  return (bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0);
}
