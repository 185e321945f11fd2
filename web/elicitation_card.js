// An MCP server asking the person for input during a tool call (MCP "elicitation", issue 26): the
// server's message and a small form built from its requested_schema (the spec's primitive types
// only: text, number, integer, boolean, one-of), or, in URL mode, the URL to visit as plain text.
// Accept sends the form's content (warden checks it against the schema: a 400 names the field,
// and its message is shown next to it); Decline and Cancel send no content.
//
// Everything the server sent is untrusted: it is set as textContent only, and a URL is never
// opened nor made a link (copy it, or select it).
//
// The card's state lives in a plain object (`part`, stored with the chat in localStorage):
// {kind: 'elicitation', approval_id, session_id, server, tool, mode, message, schema, url,
//  sent: ''|'accept'|'decline'|'cancel', outcome: '' | why it closed}.

import { h } from './dom.js';

const OUTCOMES = {
  accept: 'Answered: sent to the server',
  decline: 'Declined: the server was told no',
  cancel: 'Cancelled: the server was told you dismissed it',
};

/** The fields of a requested_schema: [{name, spec, required}], primitive types only. */
export function schemaFields(schema) {
  const props = schema && typeof schema.properties === 'object' && schema.properties ? schema.properties : {};
  const required = new Set(Array.isArray(schema && schema.required) ? schema.required : []);
  return Object.entries(props).filter(([, spec]) => spec && typeof spec === 'object')
    .map(([name, spec]) => ({ name, spec, required: required.has(name) }));
}

export class ElicitationCard {
  /** part: the stored state; opts: {live, onAnswer(part, decision, content) → Promise} */
  constructor(part, opts) {
    this.part = part;
    this.opts = opts;
    this.inputs = new Map();  // field name → {spec, input, error}
    this.el = h('div', { className: 'elicit-card', dataset: { approvalId: part.approval_id || '' } });
    this.build();
    this.update();
  }

  isOpen() {
    return Boolean(this.opts.live && !this.part.sent && !this.part.outcome);
  }

  build() {
    const p = this.part;
    this.status = h('div', { className: 'elicit-status' });
    this.buttons = h('div', { className: 'elicit-actions' }, ...this.actionButtons());
    this.el.append(
      h('div', { className: 'tool-head' },
        h('span', { className: 'tool-name' }, p.server || 'MCP server'),
        h('span', { className: 'muted' }, 'asks for your input'),
        p.tool ? h('span', { className: 'muted' }, `(during ${p.tool})`) : null),
      h('div', { className: 'elicit-message' }, p.message || ''),
      p.mode === 'url' ? this.urlView() : this.formView(),
      this.buttons, this.status);
  }

  actionButtons() {
    const accept = this.part.mode === 'url' ? "I've done it" : 'Accept';
    return [['accept', accept, 'btn-primary'], ['decline', 'Decline', ''], ['cancel', 'Cancel', '']]
      .map(([decision, label, cls]) => h('button', { type: 'button', className: `btn btn-small ${cls}`,
        dataset: { decision }, onclick: () => this.answer(decision) }, label));
  }

  urlView() {
    const url = typeof this.part.url === 'string' ? this.part.url : '';
    const text = h('code', { className: 'elicit-url' }, url);
    const copied = h('span', { className: 'muted' });
    const copy = h('button', { type: 'button', className: 'btn btn-small', onclick: () => copyText(text, url, copied) }, 'Copy');
    return h('div', { className: 'elicit-url-box' },
      h('div', { className: 'muted' }, 'The server asks you to visit this address (warden does not open it):'),
      text, h('div', { className: 'elicit-url-actions' }, copy, copied));
  }

  formView() {
    const fields = schemaFields(this.part.schema);
    const form = h('form', { className: 'elicit-form', onsubmit: ev => { ev.preventDefault(); this.answer('accept'); } },
      ...fields.map(f => this.fieldView(f)));
    if (!fields.length) form.append(h('div', { className: 'muted' }, 'No fields: Accept answers yes.'));
    return form;
  }

  fieldView({ name, spec, required }) {
    const input = fieldInput(spec, required);
    input.name = name;
    input.dataset.field = name;
    const error = h('div', { className: 'elicit-error', dataset: { errorFor: name } });
    this.inputs.set(name, { spec, input, error, required });
    const label = h('span', { className: 'elicit-label' }, typeof spec.title === 'string' && spec.title ? spec.title : name,
      required ? h('span', { className: 'required', title: 'required' }, ' *') : null);
    const help = typeof spec.description === 'string' && spec.description ? h('div', { className: 'muted' }, spec.description) : null;
    const cls = `elicit-field${spec.type === 'boolean' ? ' elicit-bool' : ''}`;
    return h('div', { className: cls, dataset: { field: name } },
      spec.type === 'boolean' ? h('label', {}, input, label) : h('label', {}, label, input), help, error);
  }

  /** The form's content: filled fields only (a checkbox always), numbers as numbers. Throws
   *  {field, message} for a value that cannot be sent. */
  content() {
    const out = {};
    for (const [name, { spec, input, required }] of this.inputs) {
      if (spec.type === 'boolean') { out[name] = input.checked; continue; }
      const raw = input.value;
      if (raw === '') {
        if (required) throw { field: name, message: 'Required.' };
        continue;
      }
      if (spec.type === 'integer' || spec.type === 'number') {
        const n = Number(raw);
        if (!Number.isFinite(n) || (spec.type === 'integer' && !Number.isInteger(n))) {
          throw { field: name, message: spec.type === 'integer' ? 'A whole number.' : 'A number.' };
        }
        out[name] = n;
      } else {
        out[name] = raw;
      }
    }
    return out;
  }

  async answer(decision) {
    if (!this.isOpen()) return;
    this.clearErrors();
    let content;
    if (decision === 'accept' && this.part.mode !== 'url') {
      try {
        content = this.content();
      } catch (e) {
        return this.showError(e.field, e.message);
      }
    }
    this.part.sent = decision;
    this.update();
    try {
      await this.opts.onAnswer(this.part, decision, content);
    } catch (e) {
      this.part.sent = '';
      const field = (e.param || '').replace(/^content\./, '');
      this.showError(e.param && this.inputs.has(field) ? field : '', String(e.message || e));
    }
    this.update();
  }

  clearErrors() {
    for (const { error } of this.inputs.values()) error.textContent = '';
    this.status.textContent = '';
    this.status.classList.remove('denied');
  }

  /** The message next to the field it names, or under the card. */
  showError(field, message) {
    const target = field && this.inputs.get(field);
    const box = target ? target.error : this.status;
    box.textContent = message;
    if (!target) this.status.classList.add('denied');
    this.el.dataset.error = field || 'card';
  }

  /** The question closed elsewhere (answered in another tab, expired, the run ended). */
  settle(outcome) {
    if (!this.part.outcome) this.part.outcome = outcome || 'closed';
    this.update();
  }

  update() {
    const p = this.part;
    const open = this.isOpen();
    this.el.classList.toggle('awaiting', open);
    this.el.dataset.state = open ? 'awaiting' : p.sent && !p.outcome ? 'sent' : 'done';
    this.el.dataset.sent = p.sent || '';
    for (const b of this.buttons.querySelectorAll('button')) b.disabled = !open;
    this.buttons.hidden = !open;
    for (const { input } of this.inputs.values()) input.disabled = !open;
    const said = p.sent ? OUTCOMES[p.sent] : p.outcome ? closedText(p.outcome)
      : open ? '' : 'Not answerable here (an open question is listed under “Waiting for you”)';
    if (said && !this.status.classList.contains('denied')) this.status.textContent = said;
  }
}

function closedText(outcome) {
  if (outcome === 'expired') return 'Nobody answered in time: the server was told no';
  if (outcome === 'withdrawn' || outcome === 'cancelled') return 'Closed: the call no longer waits for this';
  if (outcome === 'allowed' || outcome === 'denied') return 'Answered elsewhere';
  return 'Closed';
}

/** The input for one field: a select for an enum, a checkbox, a number box, or a text box. */
function fieldInput(spec, required) {
  const num = v => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  if (Array.isArray(spec.enum)) {
    const names = Array.isArray(spec.enumNames) ? spec.enumNames : [];
    const opts = spec.enum.map((v, i) => h('option', { value: String(v) }, String(names[i] ?? v)));
    return h('select', {}, required ? null : h('option', { value: '' }, '(none)'), ...opts);
  }
  if (spec.type === 'boolean') return h('input', { type: 'checkbox', checked: spec.default === true });
  if (spec.type === 'integer' || spec.type === 'number') {
    return h('input', { type: 'number', step: spec.type === 'integer' ? '1' : 'any', min: num(spec.minimum),
      max: num(spec.maximum), value: num(spec.default) ?? '' });
  }
  const type = { email: 'email', uri: 'url', date: 'date' }[spec.format] || 'text';
  const input = h('input', { type, value: typeof spec.default === 'string' ? spec.default : '', required: Boolean(required) });
  if (num(spec.minLength) !== undefined) input.minLength = spec.minLength;
  if (num(spec.maxLength) !== undefined) input.maxLength = spec.maxLength;
  return input;
}

/** Copies `url` (navigator.clipboard), or selects the text for a manual copy when it cannot. */
async function copyText(el, url, said) {
  try {
    await navigator.clipboard.writeText(url);
    said.textContent = 'Copied.';
  } catch (e) {
    const range = document.createRange();
    range.selectNodeContents(el);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    said.textContent = 'Selected: press Ctrl+C to copy.';
  }
}
