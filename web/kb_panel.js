// The knowledge-base block of the settings drawer (issue 25): pick the knowledge base this
// browser's chats search (sent as rag_scope, with search_knowledge_base enabled), create one,
// upload files to it (as JSON: content_base64) and see or delete its documents.

import { $, h } from './dom.js';
import { apiJson } from './api.js';
import { saveSettings } from './store.js';

/** A File's bytes as standard base64. */
function fileBase64(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ''));
    r.onerror = () => reject(r.error);
    r.readAsDataURL(file);
  });
}

export class KbPanel {
  constructor(app) {
    this.app = app;
    $('#kb-select').addEventListener('change', ev => this.pick(ev.target.value));
    $('#kb-create').addEventListener('click', () => this.create());
    $('#kb-upload').addEventListener('change', ev => this.upload(ev.target.files));
  }

  notice(text, error) {
    $('#kb-status').replaceChildren(text ? h('div', { className: error ? 'notice notice-error' : 'muted' }, text) : '');
  }

  async load() {
    let kbs = [];
    try {
      kbs = (await apiJson('/api/kb')).data || [];
    } catch (e) {
      this.notice('Could not list knowledge bases: ' + e.message, true);
      return;
    }
    const current = this.app.settings.kb_id || '';
    if (current && !kbs.some(k => k.id === current)) this.pick('');
    $('#kb-select').replaceChildren(h('option', { value: '' }, 'none'),
      ...kbs.map(k => h('option', { value: k.id, selected: k.id === this.app.settings.kb_id },
        `${k.name} (${k.documents} document${k.documents === 1 ? '' : 's'})`)));
    $('#kb-upload').disabled = !this.app.settings.kb_id;
    await this.loadDocuments();
  }

  pick(id) {
    this.app.settings.kb_id = id;
    saveSettings(this.app.settings);
    $('#kb-upload').disabled = !id;
    this.loadDocuments();
  }

  async create() {
    const name = $('#kb-name').value.trim();
    if (!name) return this.notice('Give the knowledge base a name.', true);
    try {
      const kb = await apiJson('/api/kb', { method: 'POST', json: { name } });
      $('#kb-name').value = '';
      this.app.settings.kb_id = kb.id;
      saveSettings(this.app.settings);
      this.notice('');
    } catch (e) {
      return this.notice('Could not create it: ' + e.message, true);
    }
    await this.load();
  }

  async upload(files) {
    const id = this.app.settings.kb_id;
    for (const file of Array.from(files || [])) {
      this.notice(`Adding ${file.name}…`);
      try {
        const doc = await apiJson(`/api/kb/${encodeURIComponent(id)}/documents`,
          { method: 'POST', json: { name: file.name, content_base64: await fileBase64(file) } });
        this.notice(`Added ${doc.name}: ${doc.chunks} chunk${doc.chunks === 1 ? '' : 's'}` +
          (doc.embedded ? '.' : ' (searchable by words only: the model cannot embed).'));
      } catch (e) {
        this.notice(`Could not add ${file.name}: ${e.message}`, true);
      }
    }
    $('#kb-upload').value = '';
    await this.load();
  }

  async loadDocuments() {
    const box = $('#kb-documents');
    const id = this.app.settings.kb_id;
    if (!id) return box.replaceChildren(h('div', { className: 'muted' }, 'No knowledge base: chats do not search documents.'));
    try {
      const docs = (await apiJson(`/api/kb/${encodeURIComponent(id)}/documents`)).data || [];
      box.replaceChildren(...(docs.length ? docs.map(d => this.docItem(id, d))
        : [h('div', { className: 'muted' }, 'No documents yet: upload a PDF, HTML, Markdown or text file.')]));
    } catch (e) {
      box.replaceChildren(h('div', { className: 'notice notice-error' }, String(e.message || e)));
    }
  }

  docItem(kb, d) {
    const del = h('button', { type: 'button', className: 'btn btn-small', onclick: async () => {
      del.disabled = true;
      try {
        await apiJson(`/api/kb/${encodeURIComponent(kb)}/documents/${encodeURIComponent(d.id)}`, { method: 'DELETE' });
      } catch (e) {
        this.notice('Could not delete: ' + e.message, true);
      }
      await this.load();
    } }, 'Delete');
    return h('div', { className: 'kb-doc', dataset: { doc: d.id } },
      h('span', {}, h('code', {}, d.kind), ' ', d.name, h('span', { className: 'muted' }, ` · ${d.chunks} chunks`)), del);
  }
}
