// One tool call's card: the tool, its arguments (code highlighted), the risk, the approval buttons
// while the call waits for a person, live output, the result and who decided.
//
// The card's state lives in a plain object (`part`, stored with the chat in localStorage); the
// card renders it and updates it from the stream's control frames.

import { h } from './dom.js';
import { highlightedCode } from './markdown.js';
import { htmlFrame } from './sandbox_frame.js';

export const DECLINED = 'The user declined to run this tool call.';

const DECISIONS = [
  ['allow', 'Allow', 'btn-primary'],
  ['allow_session', 'Allow for this chat', ''],
  ['allow_always', 'Always allow', ''],
  ['deny', 'Deny', 'btn-danger'],
];

const LANGUAGE = { python: ['code', 'python'], terminal: ['command', 'bash'], render_html: ['code', 'xml'] };

export class ToolCard {
  /** part: the stored state; opts: {live, onDecide(part, decision) → Promise} */
  constructor(part, opts) {
    this.part = part;
    this.opts = opts;
    this.el = h('div', { className: 'tool-card' });
    this.render();
  }

  render() {
    const p = this.part;
    // the page frame is appended once and never moved: detaching an iframe reloads it
    this.main = this.main || this.el.appendChild(h('div', {}));
    this.main.replaceChildren(...[this.head(), this.argsSection(), this.riskSection(), this.approvalBar(),
      this.outputSection(), this.resultSection(), this.decidedLine()].filter(Boolean));
    if (!this.htmlEl && this.wantsPage()) {
      this.htmlEl = section('Rendered (sandboxed: no network, no access to this page)', htmlFrame(p.args.code), 'tool-html');
      this.el.append(this.htmlEl);
    }
    this.el.classList.toggle('awaiting', this.isAsking());
    Object.assign(this.el.dataset, {
      tool: p.tool, callId: p.id, state: this.state(), awaited: p.awaited ? '1' : '0', early: p.early ? '1' : '0',
      decidedBy: p.decided_by || '', allowed: p.allowed === undefined ? '' : String(p.allowed),
    });
  }

  isAsking() {
    const p = this.part;
    return Boolean(this.opts.live && p.awaiting && p.result === undefined && !p.sent_decision);
  }

  state() {
    const p = this.part;
    if (p.result !== undefined) return 'done';
    if (p.provisional) return 'preparing';
    if (p.awaiting && !p.sent_decision) return p.interrupted ? 'interrupted' : 'awaiting';
    return p.interrupted ? 'interrupted' : 'running';
  }

  head() {
    const p = this.part;
    const labels = { done: 'finished', preparing: 'preparing…', awaiting: 'waiting for you',
      running: 'running…', interrupted: 'interrupted' };
    return h('div', { className: 'tool-head' },
      h('span', { className: 'tool-name' }, p.tool || 'tool'),
      p.args && p.args.title ? h('span', { className: 'muted' }, p.args.title) : null,
      p.risk && p.risk.level ? h('span', { className: `risk risk-${p.risk.level}` }, `${p.risk.level} risk`) : null,
      h('span', { className: 'tool-state' }, this.notRun() ? 'not run' : labels[this.state()]));
  }

  /** Settled without running: declined, refused, expired, cancelled. */
  notRun() {
    return this.state() === 'done' && this.part.allowed === false;
  }

  argsSection() {
    const p = this.part;
    if (p.provisional) {
      return section('Arguments (streaming)', h('pre', {}, p.args_text || ''), 'tool-args');
    }
    const [key, lang] = LANGUAGE[p.tool] || [];
    const args = p.args || {};
    const only = key && typeof args[key] === 'string' && Object.keys(args).every(k => k === key || k === 'title');
    const code = h('pre', {}, only ? highlightedCode(args[key], lang) : highlightedCode(JSON.stringify(args, null, 2), 'json'));
    if (p.tool === 'render_html' && only) {
      // the page itself is shown below once it ran; its source stays one click away
      const fold = h('details', { className: 'source-fold', open: p.result === undefined },
        h('summary', {}, `HTML source (${args[key].length} characters)`), code);
      return section('Page', fold, 'tool-args');
    }
    return section(only ? key : 'Arguments', code, 'tool-args');
  }

  riskSection() {
    const reasons = (this.part.risk && this.part.risk.reasons) || [];
    if (!reasons.length) return null;
    return section('Why it may be risky', h('ul', { className: 'risk-reasons' }, reasons.map(r => h('li', {}, r))));
  }

  approvalBar() {
    if (!this.isAsking()) return null;
    const buttons = DECISIONS.map(([decision, label, cls]) => h('button', {
      type: 'button', className: `btn btn-small ${cls}`, dataset: { decision },
      onclick: () => this.decide(decision),
    }, label));
    return h('div', { className: 'approval' }, h('span', { className: 'approval-q' }, 'Run this?'), buttons);
  }

  async decide(decision) {
    this.part.sent_decision = decision;
    this.part.decision_error = '';
    this.render();
    try {
      await this.opts.onDecide(this.part, decision);
    } catch (e) {
      this.part.sent_decision = '';
      this.part.decision_error = String(e.message || e);
    }
    this.render();
  }

  outputSection() {
    const out = this.part.output;
    if (!out || this.part.result !== undefined && out === this.part.result) return null;
    return section('Output', h('pre', {}, out), 'tool-output');
  }

  resultSection() {
    const r = this.part.result;
    if (r === undefined) return null;
    return section('Result', h('pre', {}, r), 'tool-result');
  }

  wantsPage() {
    const p = this.part;
    return p.tool === 'render_html' && p.result !== undefined && rendered(p);
  }

  decidedLine() {
    const p = this.part;
    if (p.decision_error) return h('div', { className: 'decided denied' }, p.decision_error);
    const text = decidedText(p);
    if (!text) return null;
    const allowed = p.allowed !== undefined ? p.allowed : p.result !== DECLINED;
    return h('div', { className: `decided ${allowed ? 'allowed' : 'denied'}` }, text);
  }

  /** Applies one control frame ({type: 'tool_…', …}) to the card. */
  apply(frame) {
    const p = this.part;
    if (frame.type === 'tool_start') startFrame(p, frame);
    else if (frame.type === 'tool_args') p.args_text = (p.args_text || '') + (frame.text || '');
    else if (frame.type === 'tool_output') p.output = (p.output || '') + (frame.text || '');
    else if (frame.type === 'tool_end') endFrame(p, frame);
    this.render();
  }
}

function startFrame(p, f) {
  p.tool = f.tool_name || p.tool;
  p.provisional = Boolean(f.provenance && f.provenance.provisional);
  if (p.provisional) p.early = true;
  p.args = f.arguments && typeof f.arguments === 'object' ? f.arguments : {};
  if (f.risk) p.risk = f.risk;
  p.awaiting = Boolean(f.awaiting_confirmation);
  p.approval_id = f.approval_id || p.approval_id;
  if (p.awaiting) p.awaited = true;
  if (!p.provisional) p.args_text = '';
}

function endFrame(p, f) {
  p.provisional = false;
  p.result = typeof f.result === 'string' ? f.result : JSON.stringify(f.result);
  if (typeof f.decided_by === 'string' && f.decided_by) p.decided_by = f.decided_by;
  if (typeof f.allowed === 'boolean') p.allowed = f.allowed;
}

function rendered(p) {
  const allowed = p.allowed !== undefined ? p.allowed : p.result !== DECLINED;
  return allowed && p.args && typeof p.args.code === 'string' && !/^Error\b/.test(p.result);
}

function section(label, body, cls) {
  return h('div', { className: `tool-section ${cls || ''}` }, h('div', { className: 'tool-section-label' }, label), body);
}

const BY_TEXT = {
  user: a => a ? 'Allowed by you' : 'Declined by you',
  rule: a => a ? 'Allowed by a remembered rule: nobody was asked' : 'Refused by a rule',
  auto: a => a ? 'Ran without asking: low risk (auto mode)' : 'Refused (auto mode)',
  policy: a => a ? 'Ran without asking (permission mode)' : 'Refused by the permission policy',
  bypass: () => 'Ran without asking and without the sandbox (full access)',
  expired: () => 'Nobody answered in time: not run',
  client_gone: () => 'Not run: the client went away',
  cancel: () => 'Cancelled: not run',
};

/** "decided by …" for a settled card; '' while it is open. */
export function decidedText(p) {
  if (p.result === undefined) {
    if (p.sent_decision) return p.sent_decision === 'deny' ? 'Declining…' : 'Allowed by you, running…';
    return '';
  }
  const allowed = p.allowed !== undefined ? p.allowed : p.result !== DECLINED;
  if (p.decided_by && BY_TEXT[p.decided_by]) return BY_TEXT[p.decided_by](allowed);
  if (p.sent_decision) return p.sent_decision === 'deny' ? 'Declined by you' : 'Allowed by you';
  if (p.result === DECLINED) return 'Declined';
  return p.awaited ? '' : 'Ran without asking';
}
