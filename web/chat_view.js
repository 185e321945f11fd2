// How messages look: the user's bubble, and the assistant's answer as a list of parts (Markdown
// text, folded reasoning, tool cards, notices) that a live run appends to.

import { h } from './dom.js';
import { renderMarkdown } from './markdown.js';
import { ElicitationCard } from './elicitation_card.js';
import { ToolCard } from './tool_card.js';

export function userView(msg) {
  return h('div', { className: 'msg msg-user' }, h('div', { className: 'bubble' }, msg.content));
}

export class AssistantView {
  /** msg: {role: 'assistant', parts: []}; opts: {live, onDecide, onAnswer, onChange} */
  constructor(msg, opts) {
    this.msg = msg;
    this.opts = opts;
    this.cards = new Map();     // tool_call_id → ToolCard
    this.asks = new Map();      // approval_id → ElicitationCard
    this.textEls = new Map();   // text part → its element
    this.dirty = new Set();
    this.flushTimer = null;
    this.body = h('div', { className: 'body' });
    this.el = h('div', { className: 'msg msg-assistant' },
      h('div', { className: 'msg-label' }, msg.model || 'assistant'), this.body);
    for (const part of msg.parts) this.body.append(this.partView(part));
    if (opts.live) this.el.dataset.running = '1';
  }

  partView(part) {
    if (part.kind === 'text') {
      const el = h('div', { className: 'md answer' });
      this.textEls.set(part, el);
      renderMarkdown(el, part.text);
      return el;
    }
    if (part.kind === 'reasoning') return reasoningView(part);
    if (part.kind === 'elicitation') {
      const card = new ElicitationCard(part, this.opts);
      this.asks.set(part.approval_id, card);
      return card.el;
    }
    if (part.kind === 'tool') {
      const card = new ToolCard(part, this.opts);
      this.cards.set(part.id, card);
      return card.el;
    }
    return h('div', { className: `notice notice-${part.level}`, dataset: { notice: part.code || part.level } }, part.text);
  }

  addPart(part) {
    this.msg.parts.push(part);
    this.body.append(this.partView(part));
    if (part.kind !== 'text') this.flush();  // the text before it is complete
    return part;
  }

  lastPart(kind) {
    const last = this.msg.parts[this.msg.parts.length - 1];
    return last && last.kind === kind ? last : null;
  }

  addText(text) {
    const part = this.lastPart('text') || this.addPart({ kind: 'text', text: '' });
    part.text += text;
    this.markDirty(part);
  }

  addReasoning(text) {
    let part = this.lastPart('reasoning');
    if (!part) {
      part = this.addPart({ kind: 'reasoning', text: '' });
      this.reasoningEl = this.body.lastElementChild;
    }
    part.text += text;
    this.reasoningEl.querySelector('.reasoning-text').textContent = part.text;
  }

  /** A tool_start / tool_args / tool_output / tool_end frame. */
  control(frame) {
    const id = frame.tool_call_id || '';
    let card = this.cards.get(id);
    if (!card) {
      this.addPart({ kind: 'tool', id, tool: frame.tool_name, args: {} });
      card = this.cards.get(id);
    }
    card.apply(frame);
    if (frame.approval_id && this.opts.onChange) this.opts.onChange();  // the inbox hides what this card asks
  }

  /** An elicitation_request frame: an MCP server asks for input during a call. */
  elicitation(f) {
    if (this.asks.has(f.approval_id)) return;
    this.addPart({ kind: 'elicitation', approval_id: f.approval_id, server: f.server, tool: f.tool_name,
      tool_call_id: f.tool_call_id, mode: f.mode === 'url' ? 'url' : 'form', message: f.message,
      schema: f.requested_schema, url: f.url, sent: '', outcome: '' });
  }

  /** Whether this live answer shows the question `approvalId` with its own buttons. */
  shows(approvalId) {
    if (!this.opts.live || !approvalId) return false;
    const ask = this.asks.get(approvalId);
    if (ask) return ask.isOpen();
    for (const card of this.cards.values()) if (card.part.approval_id === approvalId && card.isAsking()) return true;
    return false;
  }

  /** The inbox heard that `approvalId` was settled (perhaps answered elsewhere). */
  settled(approvalId, outcome) {
    const ask = this.asks.get(approvalId);
    if (ask) ask.settle(outcome);
  }

  notice(level, text, code) {
    this.addPart({ kind: 'notice', level, text, code });
  }

  markDirty(part) {
    this.dirty.add(part);
    if (!this.flushTimer) this.flushTimer = setTimeout(() => this.flush(), 40);
  }

  flush() {
    clearTimeout(this.flushTimer);
    this.flushTimer = null;
    for (const part of this.dirty) renderMarkdown(this.textEls.get(part), part.text);
    this.dirty.clear();
    const last = this.msg.parts[this.msg.parts.length - 1];
    for (const [part, el] of this.textEls) el.classList.toggle('typing', this.opts.live && part === last);
    if (this.opts.onChange) this.opts.onChange();
  }

  /** The run is over: last rendering, cards that never finished marked interrupted. */
  finish() {
    this.opts = Object.assign({}, this.opts, { live: false });
    this.flush();
    for (const card of this.cards.values()) {
      if (card.part.result === undefined) card.part.interrupted = true;
      card.opts = Object.assign({}, card.opts, { live: false });
      card.render();
    }
    for (const ask of this.asks.values()) {
      ask.opts = Object.assign({}, ask.opts, { live: false });
      ask.settle(ask.part.sent ? '' : 'closed');
    }
    delete this.el.dataset.running;
    this.el.dataset.finished = '1';
  }
}

function reasoningView(part) {
  return h('details', { className: 'reasoning' },
    h('summary', {}, 'Reasoning'),
    h('div', { className: 'reasoning-text' }, part.text));
}
