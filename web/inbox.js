// The person's inbox (issue 26): every question waiting for this browser's chats — tool calls
// to allow or deny, and MCP servers asking for input — read from /api/inference/approvals/stream
// (every pending question first, then approval_requested / approval_settled events). It shows
// what the open chat's own stream does not: calls of a tab that was reloaded, of another tab, of
// a background run. Answering a card sends /api/inference/tool-confirm; a settled event (answered
// here or anywhere else, expired, withdrawn) removes it. The stream reconnects with back-off.

import { $, h } from './dom.js';
import { apiFetch } from './api.js';
import { sseData } from './sse.js';
import { ElicitationCard } from './elicitation_card.js';
import { ToolCard } from './tool_card.js';

const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30000;

export class Inbox {
  /** app: {chats, current, switchTo(chat), decide(chat, part, decision), answer(chat, part, decision, content),
   *  shownLive(approvalId), settledLive(approvalId, outcome)} */
  constructor(app) {
    this.app = app;
    this.box = $('#inbox');
    this.list = $('#inbox-list');
    this.items = new Map();  // approval_id → {approval, el}
    this.retryMs = RETRY_MIN_MS;
    this.connect();
  }

  /** Reads the stream until it ends, then tries again after a growing pause. */
  async connect() {
    for (;;) {
      try {
        await this.read();
      } catch (e) {
        console.debug('warden: inbox stream', e);
      }
      this.box.dataset.connected = '0';
      await new Promise(r => setTimeout(r, this.retryMs));
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    }
  }

  async read() {
    const resp = await apiFetch('/api/inference/approvals/stream');
    if (!resp.ok) throw new Error(`inbox stream: HTTP ${resp.status}`);
    this.clear();  // the stream starts with every question still pending
    this.box.dataset.connected = '1';
    this.retryMs = RETRY_MIN_MS;
    for await (const data of sseData(resp.body)) this.event(data);
  }

  event(data) {
    let ev;
    try {
      ev = JSON.parse(data);
    } catch (e) {
      return;
    }
    if (ev.type === 'approval_requested' && ev.approval && ev.approval.approval_id) this.add(ev.approval);
    else if (ev.type === 'approval_settled') this.settle(ev.approval_id, ev.outcome);
  }

  clear() {
    for (const { el } of this.items.values()) el.remove();
    this.items.clear();
    this.render();
  }

  add(approval) {
    if (this.items.has(approval.approval_id)) return;
    const el = this.itemView(approval);
    this.items.set(approval.approval_id, { approval, el });
    this.list.append(el);
    this.render();
  }

  settle(approvalId, outcome) {
    const item = this.items.get(approvalId);
    if (item) {
      item.el.remove();
      this.items.delete(approvalId);
    }
    this.app.settledLive(approvalId, outcome);
    this.render();
  }

  /** Shows the questions of this browser's chats that no live answer on the page shows already. */
  render() {
    let shown = 0;
    for (const [id, { approval, el }] of this.items) {
      const visible = Boolean(this.chatOf(approval.session_id)) && !this.app.shownLive(id);
      el.hidden = !visible;
      if (visible) {
        shown += 1;
        this.renderWhere(approval, el);
      }
    }
    this.box.hidden = shown === 0;
    this.box.dataset.count = String(shown);
  }

  chatOf(sessionId) {
    const app = this.app;
    if (app.current.session_id === sessionId) return app.current;
    return app.chats.find(c => c.session_id === sessionId) || null;
  }

  renderWhere(approval, el) {
    const chat = this.chatOf(approval.session_id);
    const here = chat === this.app.current;
    const where = el.querySelector('.inbox-where');
    if (here) return where.replaceChildren('In this chat');
    where.replaceChildren(h('span', {}, 'In “', chat.title || 'New chat', '”'),
      h('button', { type: 'button', className: 'btn btn-small btn-ghost', onclick: () => this.app.switchTo(chat) }, 'Open'));
  }

  itemView(a) {
    const card = a.kind === 'elicitation' ? this.askCard(a) : this.toolCard(a);
    return h('div', { className: 'inbox-item', dataset: { approvalId: a.approval_id, kind: a.kind || 'tool_call',
      sessionId: a.session_id } }, h('div', { className: 'inbox-where muted' }), card.el);
  }

  toolCard(a) {
    const part = { kind: 'tool', id: a.tool_call_id, tool: a.tool, approval_id: a.approval_id,
      args: a.arguments && typeof a.arguments === 'object' ? a.arguments : {}, risk: a.risk || undefined,
      awaiting: true, awaited: true };
    return new ToolCard(part, { live: true, onDecide: (p, decision) => this.app.decide(this.chatFor(a), p, decision) });
  }

  askCard(a) {
    const e = a.elicitation || {};
    const part = { kind: 'elicitation', approval_id: a.approval_id, server: e.server, tool: a.tool,
      tool_call_id: a.tool_call_id, mode: e.mode === 'url' ? 'url' : 'form', message: e.message,
      schema: e.requestedSchema, url: e.url, sent: '', outcome: '' };
    return new ElicitationCard(part, { live: true,
      onAnswer: (p, decision, content) => this.app.answer(this.chatFor(a), p, decision, content) });
  }

  /** What tool-confirm needs of the chat: its session_id (the approval's own). */
  chatFor(a) {
    return { session_id: a.session_id };
  }
}
