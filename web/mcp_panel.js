// The MCP block of the settings drawer (issue 26): whether this browser's chats offer the MCP
// servers' tools (sent as mcp_enabled), the servers warden knows (id, transport, state, tool
// count, error) with Tools / Test / Refresh / Enable-Disable / Delete, and a form to add one
// (stdio: a command and its arguments; http: a URL and the variable holding its bearer token).
// Everything a server reports (names, descriptions, errors) is shown as text only.

import { $, h } from './dom.js';
import { apiJson } from './api.js';
import { saveSettings } from './store.js';

const serverPath = id => '/api/mcp/servers/' + encodeURIComponent(id);

/** The lines of a textarea, trimmed, without the empty ones. */
const lines = text => text.split('\n').map(l => l.trim()).filter(Boolean);

export class McpPanel {
  constructor(app) {
    this.app = app;
    $('#mcp-use').checked = app.settings.mcp_enabled;
    $('#mcp-use').addEventListener('change', ev => this.use(ev.target.checked));
    $('#mcp-reload').addEventListener('click', () => this.load());
    $('#mcp-transport').addEventListener('change', () => this.showTransport());
    $('#mcp-add').addEventListener('submit', ev => { ev.preventDefault(); this.add(); });
    this.showTransport();
  }

  use(on) {
    this.app.settings.mcp_enabled = on;
    saveSettings(this.app.settings);
  }

  notice(text, error) {
    $('#mcp-status').replaceChildren(text ? h('div', { className: error ? 'notice notice-error' : 'muted' }, text) : '');
  }

  showTransport() {
    const http = $('#mcp-transport').value === 'http';
    $('#mcp-stdio').hidden = http;
    $('#mcp-http').hidden = !http;
  }

  async load() {
    const box = $('#mcp-servers');
    try {
      const servers = (await apiJson('/api/mcp/servers')).data || [];
      box.replaceChildren(...(servers.length ? servers.map(s => this.serverItem(s))
        : [h('div', { className: 'muted' }, 'No MCP servers yet: add one below.')]));
      box.dataset.loaded = '1';
    } catch (e) {
      box.replaceChildren(h('div', { className: 'notice notice-error' }, 'Could not list the MCP servers: ' + e.message));
    }
  }

  serverItem(s) {
    const st = s.status || {};
    const result = h('div', { className: 'mcp-result' });
    const act = (label, fn) => h('button', { type: 'button', className: 'btn btn-small', dataset: { action: label.toLowerCase() },
      onclick: ev => this.act(ev.target, result, fn) }, label);
    return h('div', { className: 'mcp-server', dataset: { server: s.id, state: st.state || '' } },
      h('div', { className: 'mcp-server-top' }, h('code', {}, s.id),
        s.name && s.name !== s.id ? h('span', {}, s.name) : null,
        h('span', { className: 'tag' }, s.transport || ''),
        h('span', { className: `tag state-${st.state || ''}` }, st.state || '?'),
        h('span', { className: 'muted mcp-tool-count' }, `${st.tool_count ?? 0} tool${st.tool_count === 1 ? '' : 's'}`),
        s.trusted ? h('span', { className: 'tag' }, 'trusted') : null,
        s.network ? h('span', { className: 'tag' }, 'network') : null),
      st.error ? h('div', { className: 'notice notice-error mcp-error' }, st.error) : null,
      h('div', { className: 'mcp-server-actions' },
        act('Tools', () => this.showTools(s.id, result)),
        act('Test', () => this.test(s.id, result)),
        act('Refresh', () => this.refresh(s.id)),
        act(s.enabled === false ? 'Enable' : 'Disable', () => this.toggle(s)),
        act('Delete', () => this.remove(s.id))),
      result);
  }

  /** Runs one server action with its button disabled; an error is shown under the server. */
  async act(button, result, fn) {
    button.disabled = true;
    try {
      await fn();
    } catch (e) {
      result.replaceChildren(h('div', { className: 'notice notice-error' }, String(e.message || e)));
    } finally {
      button.disabled = false;
    }
  }

  async showTools(id, result) {
    if (result.dataset.showing === 'tools') {
      delete result.dataset.showing;
      return result.replaceChildren();
    }
    const detail = await apiJson(serverPath(id));
    result.dataset.showing = 'tools';
    result.replaceChildren(toolList(detail.tools || []));
  }

  async test(id, result) {
    result.replaceChildren(h('div', { className: 'muted' }, 'Testing…'));
    const r = await apiJson(serverPath(id) + '/test', { method: 'POST', json: {} });
    result.dataset.showing = 'test';
    result.replaceChildren(h('div', { className: 'notice notice-info mcp-test' },
      `Connected: ${r.state || 'ready'}, protocol ${r.protocol_version || '?'}, ${(r.tools || []).length} tools`),
    toolList(r.tools || []));
  }

  async refresh(id) {
    await apiJson(serverPath(id) + '/refresh', { method: 'POST', json: {} });
    await this.load();
  }

  async toggle(s) {
    const entry = Object.assign({}, s, { enabled: s.enabled === false });
    delete entry.status;
    delete entry.tools;
    await apiJson(serverPath(s.id), { method: 'PUT', json: entry });
    await this.load();
  }

  async remove(id) {
    await apiJson(serverPath(id), { method: 'DELETE' });
    await this.load();
  }

  /** The add form's entry. */
  entry() {
    const e = { id: $('#mcp-id').value.trim(), trusted: $('#mcp-trusted').checked, network: $('#mcp-network').checked };
    if ($('#mcp-transport').value === 'http') {
      Object.assign(e, { transport: 'http', url: $('#mcp-url').value.trim() });
      const env = $('#mcp-token-env').value.trim();
      if (env) e.bearer_token_env = env;
    } else {
      Object.assign(e, { transport: 'stdio', command: $('#mcp-command').value.trim(), args: lines($('#mcp-args').value) });
      const ro = lines($('#mcp-ro-paths').value);
      if (ro.length) e.read_only_paths = ro;
    }
    return e;
  }

  async add() {
    const e = this.entry();
    try {
      await apiJson('/api/mcp/servers', { method: 'POST', json: e });
    } catch (err) {
      return this.notice('Could not add it: ' + err.message, true);
    }
    $('#mcp-add').reset();
    this.showTransport();
    this.notice(`Added ${e.id}: starting it now (Refresh shows its state).`);
    await this.load();
  }
}

function toolList(tools) {
  if (!tools.length) return h('div', { className: 'muted' }, 'No tools listed (yet): Refresh or Test connects and lists them.');
  return h('div', { className: 'mcp-tools' }, ...tools.map(t => h('div', { className: 'mcp-tool', dataset: { tool: t.name || '' } },
    h('code', {}, t.name || t.tool || '?'),
    t.executable === false ? h('span', { className: 'tag bad' }, 'not offered') : null,
    t.description ? h('div', { className: 'muted' }, t.description) : null,
    t.executable === false && t.excluded_reason ? h('div', { className: 'muted' }, 'Why: ' + t.excluded_reason) : null)));
}
