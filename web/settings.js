// The settings drawer: the models (model_picker.js, pull_box.js), permission mode, enabled tools, the knowledge base, MCP servers,
// remembered decisions (rules) and the current chat's audit log.

import { $, h } from './dom.js';
import { apiJson } from './api.js';
import { MODES, TOOLS, saveSettings } from './store.js';
import { KbPanel } from './kb_panel.js';
import { McpPanel } from './mcp_panel.js';

const MODE_INFO = {
  ask: ['Ask', 'Every tool call waits for your Allow or Deny.'],
  auto: ['Auto', 'Only calls the risk classifier rates high risk wait for you.'],
  off: ['Off', 'Nothing waits; code still runs in the sandbox.'],
  full: ['Full access', 'Nothing waits and python/terminal run on this machine with no sandbox.'],
};

export class SettingsPanel {
  /** app: {settings, currentSession()} */
  constructor(app) {
    this.app = app;
    this.el = $('#settings');
    $('#open-settings').addEventListener('click', () => this.open());
    $('#close-settings').addEventListener('click', () => this.close());
    $('#refresh-rules').addEventListener('click', () => this.loadRules());
    $('#refresh-audit').addEventListener('click', () => this.loadAudit());
    document.addEventListener('keydown', ev => { if (ev.key === 'Escape' && !this.el.hidden) this.close(); });
    this.renderModes();
    this.renderTools();
    this.renderSystemPrompt();
    this.renderBadge();
    this.kb = new KbPanel(app);
    this.mcp = new McpPanel(app);
  }

  open() {
    this.el.hidden = false;
    if (this.app.models) this.app.models.refresh();
    this.kb.load();
    this.mcp.load();
    this.loadRules();
    this.loadAudit();
  }

  close() {
    this.el.hidden = true;
  }

  save() {
    saveSettings(this.app.settings);
    this.renderBadge();
  }

  renderModes() {
    const current = this.app.settings.permission_mode;
    $('#mode-options').replaceChildren(...MODES.map(mode => {
      const [title, help] = MODE_INFO[mode];
      const input = h('input', { type: 'radio', name: 'permission_mode', value: mode, checked: mode === current,
        onchange: () => { this.app.settings.permission_mode = mode; this.save(); this.renderModes(); } });
      return h('label', { className: `mode-option${mode === current ? ' selected' : ''}${mode === 'full' ? ' dangerous' : ''}`,
        dataset: { mode } }, input,
      h('span', {}, h('span', { className: 'mode-title' }, title),
        mode === 'full' ? h('span', { className: 'danger-tag' }, 'DANGEROUS: no sandbox') : null,
        h('div', { className: 'mode-help' }, help)));
    }));
  }

  renderSystemPrompt() {
    const box = $('#system-prompt');
    box.value = this.app.settings.system_prompt;
    box.oninput = () => { this.app.settings.system_prompt = box.value; this.save(); };
  }

  renderTools() {
    const enabled = new Set(this.app.settings.enabled_tools);
    $('#tool-options').replaceChildren(...TOOLS.map(tool => h('label', {},
      h('input', { type: 'checkbox', value: tool, checked: enabled.has(tool),
        onchange: ev => this.toggleTool(tool, ev.target.checked) }),
      h('code', {}, tool))));
  }

  toggleTool(tool, on) {
    const set = new Set(this.app.settings.enabled_tools);
    if (on) set.add(tool); else set.delete(tool);
    this.app.settings.enabled_tools = TOOLS.filter(t => set.has(t));
    this.save();
    this.renderBadge();
  }

  renderBadge() {
    const mode = this.app.settings.permission_mode;
    const badge = $('#mode-badge');
    const none = !this.app.settings.enabled_tools.length;
    badge.textContent = none ? 'tools: none (plain chat)'
      : mode === 'full' ? 'full access: no sandbox' : `tools: ${MODE_INFO[mode][0].toLowerCase()}`;
    badge.classList.toggle('danger', mode === 'full');
    badge.title = MODE_INFO[mode][1];
  }

  async loadRules() {
    const box = $('#rules-list');
    const sid = this.app.currentSession();
    await fill(box, async () => {
      const body = await apiJson('/api/permissions/rules?session_id=' + encodeURIComponent(sid));
      const rules = body.data || [];
      if (!rules.length) return [h('div', { className: 'muted' }, 'No remembered decisions for this chat.')];
      return rules.map(r => this.ruleItem(r));
    });
  }

  ruleItem(rule) {
    const what = rule.command_prefix ? `command starts with "${rule.command_prefix}"`
      : rule.path_prefix ? `path under "${rule.path_prefix}"`
        : rule.arguments ? 'exactly ' + JSON.stringify(rule.arguments) : 'any arguments';
    const scope = rule.scope === 'always' ? 'every chat' : 'this chat';
    const revoke = h('button', { type: 'button', className: 'btn btn-small', dataset: { rule: rule.id },
      onclick: () => this.revoke(rule.id, revoke) }, 'Revoke');
    return h('div', { className: 'rule-item', dataset: { ruleId: rule.id, tool: rule.tool } },
      h('div', { className: 'rule-desc' }, h('code', {}, rule.tool), ` · ${scope} · ${what}`,
        rule.expires_at_ms ? h('div', { className: 'muted' }, 'expires ' + new Date(rule.expires_at_ms).toLocaleString()) : null),
      revoke);
  }

  async revoke(id, button) {
    button.disabled = true;
    try {
      await apiJson('/api/permissions/rules/' + encodeURIComponent(id), { method: 'DELETE' });
    } catch (e) {
      button.disabled = false;
      button.after(h('div', { className: 'notice notice-error' }, 'Could not revoke: ' + e.message));
      return;
    }
    await this.loadRules();
  }

  async loadAudit() {
    const box = $('#audit-list');
    const sid = this.app.currentSession();
    await fill(box, async () => {
      const body = await apiJson('/api/audit?limit=200&session_id=' + encodeURIComponent(sid));
      const rows = (body.data || []).slice().reverse();
      if (!rows.length) return [h('div', { className: 'muted' }, 'No tool calls in this chat yet.')];
      return rows.map(auditItem);
    });
  }
}

/** Replaces box's children with what make() returns, or with the error it throws. */
async function fill(box, make) {
  box.replaceChildren(h('div', { className: 'muted' }, 'Loading…'));
  try {
    box.replaceChildren(...await make());
  } catch (e) {
    box.replaceChildren(h('div', { className: 'notice notice-error' }, String(e.message || e)));
  }
}

function auditItem(r) {
  const when = r.started_at ? new Date(r.started_at).toLocaleTimeString() : '';
  const args = typeof r.arguments === 'string' ? r.arguments : JSON.stringify(r.arguments);
  const risk = r.risk && r.risk.level ? h('span', { className: 'tag' }, r.risk.level + ' risk') : null;
  return h('div', { className: 'audit-item', dataset: { tool: r.tool, decidedBy: r.decided_by || '' } },
    h('div', { className: 'audit-top' }, h('code', {}, r.tool),
      h('span', { className: `tag ${r.allowed ? 'ok' : 'bad'}` }, r.allowed ? 'ran' : 'not run'),
      h('span', { className: 'muted' }, `by ${r.decided_by || '?'}`), risk,
      h('span', { className: 'muted' }, when)),
    h('div', { className: 'audit-args' }, args),
    r.reason ? h('div', { className: 'muted' }, r.reason) : null);
}
