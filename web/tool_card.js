// One tool call's card: the tool, its arguments (code highlighted), the risk, the approval buttons
// while the call waits for a person, live output, the result and who decided.
//
// The card's state lives in a plain object (`part`, stored with the chat in localStorage); the
// card renders it and updates it from the stream's control frames.
//
// The whole call is shown before it can be allowed (issue 22): the arguments are shown the way
// `warden chat` shows them (client/chat_format.h: "\r\n" and lone "\r" end lines, other control
// characters appear as escapes, and runs of blank lines are squeezed into one "⋯ N blank lines"
// line), the head says how many lines the call has, and while the call waits the Allow buttons
// stay disabled until the arguments box has been seen to its end (it fits, or it was scrolled
// through). The risk badge of a high call reads "not known to be safe: <reasons>".

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

/** edit_file's arguments as the change it asks for, before anything is read or written: the
 *  path, then old_string's lines with "-" and new_string's with "+" ("(new file)" when
 *  old_string is empty: it creates the file). The result, once it ran, carries the file's diff. */
export function editChange(args) {
  const lines = t => (typeof t === 'string' && t !== '' ? lineEnds(t).replace(/\n$/, '').split('\n') : []);
  const head = `${String(args.path ?? '?')}${args.replace_all === true ? '  (every occurrence)' : ''}`;
  const old = typeof args.old_string === 'string' ? args.old_string : '';
  const removed = old === '' ? ['(new file)'] : lines(old).map(l => '-' + l);
  return [head, ...removed, ...lines(args.new_string).map(l => '+' + l)].join('\n');
}

/** The decisions that let the call run: enabled only once the whole call was seen. */
const ALLOWS = new Set(['allow', 'allow_session', 'allow_always']);

/** Line ends as `warden chat` takes them: "\r\n" and a lone "\r" end a line. */
function lineEnds(text) {
  return text.replace(/\r\n?/g, '\n');
}

/** How many lines `text` has (a final newline does not start another). */
export function lineCount(text) {
  const t = lineEnds(text);
  if (!t) return 0;
  return t.split('\n').length - (t.endsWith('\n') ? 1 : 0);
}

/** Control characters other than newline and tab shown as escapes (\x1b, \u009b), as in `warden chat`. */
function visibleControls(text) {
  return text.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, c => {
    const n = c.charCodeAt(0);
    return n < 0x80 ? '\\x' + n.toString(16).padStart(2, '0') : '\\u' + n.toString(16).padStart(4, '0');
  });
}

/** Runs of two or more blank (spaces and tabs only) lines become one "⋯ N blank lines" line
 *  (client/chat_format.cpp's squeeze_blank_lines), so padding cannot push the end of a call out
 *  of sight. */
export function squeezeBlankLines(text) {
  const out = [];
  let blanks = 0;
  const flush = () => {
    if (blanks === 1) out.push('');
    else if (blanks > 1) out.push(`⋯ ${blanks} blank lines`);
    blanks = 0;
  };
  const lines = text.split('\n');
  const trailing = text.endsWith('\n');
  if (trailing) lines.pop();
  for (const line of lines) {
    if (/^[ \t]*$/.test(line)) blanks += 1;
    else {
      flush();
      out.push(line);
    }
  }
  flush();
  return out.join('\n') + (trailing && out.length ? '\n' : '');
}

/** The arguments text as the card shows it. */
export function cardText(text) {
  return squeezeBlankLines(visibleControls(lineEnds(text)));
}

/** The risk badge's words: "low risk", or "not known to be safe: <reasons>" for a high call. */
export function riskText(risk) {
  if (risk.level !== 'high') return `${risk.level} risk`;
  const reasons = (risk.reasons || []).filter(r => typeof r === 'string' && r);
  return reasons.length ? `not known to be safe: ${reasons.join('; ')}` : 'not known to be safe';
}

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
    this.argsBox = null;
    this.main.replaceChildren(...[this.head(), this.argsSection(), this.approvalBar(),
      this.outputSection(), this.resultSection(), this.decidedLine()].filter(Boolean));
    this.watchArgs();
    if (!this.htmlEl && this.wantsPage()) {
      this.htmlEl = section('Rendered (sandboxed: no network, no access to this page)', htmlFrame(p.args.code), 'tool-html');
      this.el.append(this.htmlEl);
    }
    this.el.classList.toggle('awaiting', this.isAsking());
    Object.assign(this.el.dataset, {
      tool: p.tool, callId: p.id, state: this.state(), awaited: p.awaited ? '1' : '0', early: p.early ? '1' : '0',
      decidedBy: p.decided_by || '', allowed: p.allowed === undefined ? '' : String(p.allowed),
      seen: this.seenAll ? '1' : '0',
    });
  }

  /** While the card asks: marks the call seen once its arguments box showed its end (it fits,
   *  or it was scrolled to the bottom), then enables the Allow buttons. */
  watchArgs() {
    if (this.resizeWatch) this.resizeWatch.disconnect();
    this.resizeWatch = null;
    const box = this.argsBox;
    if (this.seenAll || !box || !this.isAsking()) return;
    const check = () => {
      // a box that is not laid out (hidden, folded, not yet in the page) shows nothing
      if (this.seenAll || !box.isConnected || box.clientHeight === 0) return;
      const bottom = box.scrollTop + box.clientHeight >= box.scrollHeight - 2;
      const right = box.scrollLeft + box.clientWidth >= box.scrollWidth - 2;
      if (bottom && right) this.markSeen();
    };
    box.addEventListener('scroll', check, { passive: true });
    this.resizeWatch = new ResizeObserver(check);
    this.resizeWatch.observe(box);
  }

  markSeen() {
    this.seenAll = true;
    if (this.resizeWatch) this.resizeWatch.disconnect();
    this.resizeWatch = null;
    this.el.dataset.seen = '1';
    for (const b of this.el.querySelectorAll('.approval button[data-decision]')) b.disabled = false;
    const hint = this.el.querySelector('.approval-hint');
    if (hint) hint.remove();
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
    const lines = p.provisional ? 0 : lineCount(this.argsText().text);
    return h('div', { className: 'tool-head' },
      h('span', { className: 'tool-name' }, p.tool || 'tool'),
      p.args && p.args.title ? h('span', { className: 'muted' }, p.args.title) : null,
      lines ? h('span', { className: 'tool-lines' }, lines === 1 ? '1 line' : `${lines} lines`) : null,
      p.risk && p.risk.level ? h('span', { className: `risk risk-${p.risk.level}` }, riskText(p.risk)) : null,
      h('span', { className: 'tool-state' }, this.notRun() ? 'not run' : labels[this.state()]));
  }

  /** What the arguments box shows: {key, lang, text} — the code argument alone when it is the
   *  only one (besides a title), else the arguments as JSON. */
  argsText() {
    const p = this.part;
    const [key, lang] = LANGUAGE[p.tool] || [];
    const args = p.args || {};
    if (p.tool === 'edit_file' && typeof args.path === 'string') {
      return { key: 'Change', lang: 'diff', text: editChange(args), only: true };
    }
    const only = key && typeof args[key] === 'string' && Object.keys(args).every(k => k === key || k === 'title');
    return only ? { key, lang, text: args[key], only } : { key: 'Arguments', lang: 'json', text: JSON.stringify(args, null, 2), only };
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
    const { key, lang, text, only } = this.argsText();
    const code = h('pre', {}, highlightedCode(cardText(text), lang));
    this.argsBox = code;
    if (p.tool === 'render_html' && only) {
      // the page itself is shown below once it ran; its source stays one click away
      const fold = h('details', { className: 'source-fold', open: p.result === undefined },
        h('summary', {}, `HTML source (${text.length} characters)`), code);
      return section('Page', fold, 'tool-args');
    }
    return section(key, code, 'tool-args');
  }

  approvalBar() {
    if (!this.isAsking()) return null;
    const buttons = DECISIONS.map(([decision, label, cls]) => h('button', {
      type: 'button', className: `btn btn-small ${cls}`, dataset: { decision },
      disabled: ALLOWS.has(decision) && !this.seenAll,
      onclick: () => this.decide(decision),
    }, label));
    const hint = this.seenAll ? null
      : h('span', { className: 'approval-hint' }, 'Scroll to the end of the call to enable Allow');
    return h('div', { className: 'approval' }, h('span', { className: 'approval-q' }, 'Run this?'), hint, buttons);
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
