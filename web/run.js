// One streamed request to /v1/chat/completions with warden's tool loop, read as SSE, fed to an
// AssistantView. Stop cancels the run server-side (/api/inference/cancel with this run's
// cancel_id) and, should the stream not end soon after, drops the connection.

import { randomId } from './dom.js';
import { apiFetch, apiJson, envelopeMessage, errorText } from './api.js';
import { sseData } from './sse.js';

const STOP_GRACE_MS = 5000;

// The page is going away (a reload, a closed tab): the stream breaking then is no error to show
// (a call waiting for a person stays open for the reloaded page's inbox, inbox.js).
let leaving = false;
window.addEventListener('pagehide', () => { leaving = true; });

export class ChatRun {
  /** opts: {chat, settings, model, history, view, onStatus(text)} */
  constructor(opts) {
    Object.assign(this, opts);
    this.cancelId = randomId('run-');
    this.abort = new AbortController();
    this.stopped = false;
    this.sawDone = false;
  }

  body() {
    const system = (this.settings.system_prompt || '').trim();
    const tools = this.settings.enabled_tools;
    const b = {
      messages: system ? [{ role: 'system', content: system }, ...this.history] : this.history,
      stream: true, enable_tools: tools.length > 0,  // no tool ticked: a plain chat
      session_id: this.chat.session_id, cancel_id: this.cancelId,
      permission_mode: this.settings.permission_mode,
    };
    if (tools.length) b.enabled_tools = tools;
    if (tools.length && this.settings.kb_id) {  // the chosen knowledge base: searched, and auto-injected
      b.rag_scope = { kb_id: this.settings.kb_id };
      b.enabled_tools = [...tools, 'search_knowledge_base'];
    }
    if (this.settings.mcp_enabled) b.mcp_enabled = true;  // the MCP servers' tools join (issue 26)
    if (this.model) b.model = this.model;
    return b;
  }

  /** Runs to the end; never throws (every failure becomes a notice in the view). */
  async run() {
    this.onStatus('Waiting for the model…');
    try {
      const resp = await apiFetch('/v1/chat/completions',
        { method: 'POST', body: JSON.stringify(this.body()), signal: this.abort.signal });
      if (!resp.ok) {
        this.view.notice('error', await errorText(resp), 'http');
        return;
      }
      for await (const data of sseData(resp.body)) {
        if (data === '[DONE]') { this.sawDone = true; break; }
        this.frame(data);
      }
      if (!this.sawDone && !this.stopped && !leaving) {
        this.view.notice('error', 'The connection closed before the answer was complete.', 'cut');
      }
    } catch (e) {
      if (!this.stopped && !leaving) this.view.notice('error', 'Request failed: ' + (e.message || e), 'network');
    } finally {
      this.ended = true;
      clearTimeout(this.graceTimer);
      if (this.stopped) {
        // the stream may end before cancel's answer arrives; wait for it (bounded)
        await Promise.race([this.cancelRequest, new Promise(r => setTimeout(r, STOP_GRACE_MS))]);
        this.stoppedNotice();
      }
      this.onStatus('');
      this.view.finish();
    }
  }

  stoppedNotice() {
    if (this.dropped) this.view.notice('info', 'Stopped: the answer ends here.', 'stopped-dropped');
    else if (this.cancelled) this.view.notice('info', 'Stopped: warden cancelled the run.', 'stopped');
    else this.view.notice('info', 'Stopped.', 'stopped');
  }

  drop() {
    if (this.ended) return;
    this.dropped = true;
    this.abort.abort();
  }

  frame(data) {
    let obj;
    try {
      obj = JSON.parse(data);
    } catch (e) {
      this.view.notice('error', 'warden sent a frame that is not JSON: ' + data.slice(0, 200), 'malformed');
      return;
    }
    if (obj.error) {
      this.view.notice('error', envelopeMessage(JSON.stringify(obj)), 'inband');
    } else if (obj.type === 'tool_status') {
      this.onStatus(obj.content || '');  // "" clears the status line
    } else if (obj.type === 'elicitation_request') {
      this.view.elicitation(obj);
    } else if (typeof obj.type === 'string' && obj.type.startsWith('tool_')) {
      this.view.control(obj);
    } else if (Array.isArray(obj.choices) && obj.choices.length) {
      this.choice(obj.choices[0]);
    }
  }

  choice(c) {
    const d = c.delta || {};
    if (typeof d.reasoning_content === 'string' && d.reasoning_content) {
      this.onStatus('Thinking…');
      this.view.addReasoning(d.reasoning_content);
    }
    if (typeof d.content === 'string' && d.content) {
      this.onStatus('Writing…');
      this.view.addText(d.content);
    }
    if (c.finish_reason === 'length') {
      this.view.notice('info', 'The answer was cut off: it reached the token limit.', 'length');
    }
  }

  /** Stop: cancel server-side, then drop the stream if it has not ended within the grace time. */
  stop() {
    if (!this.stopped) this.cancelRequest = this.cancel();
    return this.cancelRequest;
  }

  async cancel() {
    this.stopped = true;
    this.onStatus('Stopping…');
    this.graceTimer = setTimeout(() => this.drop(), STOP_GRACE_MS);
    try {
      const r = await apiJson('/api/inference/cancel', { method: 'POST', json: { cancel_id: this.cancelId } });
      this.cancelled = r.cancelled || 0;
      if (!this.cancelled) this.drop();  // nothing server-side to stop (yet): drop the stream
    } catch (e) {
      this.view.notice('error', 'Cancel failed: ' + e.message + ' (closing the connection instead)', 'cancel');
      this.drop();
    }
  }
}
