// warden's web UI: chats kept in localStorage, streamed answers with tool cards, settings.

import { $, h, stickToBottom } from './dom.js';
import { apiJson } from './api.js';
import { AssistantView, userView } from './chat_view.js';
import { Inbox } from './inbox.js';
import { ModelPicker } from './model_picker.js';
import { MonitorPanel } from './monitor_panel.js';
import { PullBox } from './pull_box.js';
import { ChatRun } from './run.js';
import { SettingsPanel } from './settings.js';
import { loadChats, loadSettings, newChat, saveChats, titleFrom } from './store.js';

class App {
  constructor() {
    this.settings = loadSettings();
    this.chats = loadChats();
    this.current = this.chats[0] || newChat();
    this.running = null;
    this.messagesBox = $('#messages');
    this.settingsPanel = new SettingsPanel(this);
    this.models = new ModelPicker(this);
    this.pull = new PullBox(this.models);
    this.bind();
    this.renderChatList();
    this.renderMessages();
    this.models.refresh();
    this.inbox = new Inbox(this);
    this.monitor = new MonitorPanel();
  }

  currentSession() {
    return this.current.session_id;
  }

  bind() {
    $('#composer').addEventListener('submit', ev => { ev.preventDefault(); this.send(); });
    $('#prompt').addEventListener('keydown', ev => {
      if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); this.send(); }
    });
    $('#prompt').addEventListener('input', () => autoGrow($('#prompt')));
    $('#stop').addEventListener('click', () => this.running && this.running.stop());
    $('#new-chat').addEventListener('click', () => this.switchTo(newChat()));
    window.addEventListener('pagehide', () => this.persist());  // keep a half-streamed answer
  }

  status(text) {
    $('#status-line').textContent = text;
  }

  // ---- chats ----

  switchTo(chat) {
    if (this.running) return;
    this.current = chat;
    this.renderChatList();
    this.renderMessages();
    this.inbox.render();
    if (!$('#settings').hidden) this.settingsPanel.open();
    $('#prompt').focus();
  }

  persist() {
    if (this.current.messages.length && !this.chats.includes(this.current)) this.chats.unshift(this.current);
    this.chats.sort((a, b) => b.updated - a.updated);
    saveChats(this.chats);
    this.renderChatList();
  }

  deleteChat(chat) {
    if (this.running) return;
    this.chats = this.chats.filter(c => c !== chat);
    saveChats(this.chats);
    if (chat === this.current) this.switchTo(this.chats[0] || newChat());
    else this.renderChatList();
  }

  renderChatList() {
    const items = this.chats.map(chat => h('div', {
      className: 'chat-item' + (chat === this.current ? ' active' : ''), dataset: { chatId: chat.id },
      onclick: () => this.switchTo(chat),
    }, h('span', { className: 'title' }, chat.title || 'New chat'),
    h('button', { type: 'button', className: 'del', title: 'Delete this chat', 'aria-label': 'Delete chat',
      onclick: ev => { ev.stopPropagation(); this.deleteChat(chat); } }, '×')));
    $('#chat-list').replaceChildren(...(items.length ? items : [h('div', { className: 'chat-list-empty' }, 'No chats yet')]));
  }

  renderMessages() {
    const box = this.messagesBox;
    if (!this.current.messages.length) {
      box.replaceChildren(emptyState());
      return;
    }
    box.replaceChildren(...this.current.messages.map(m => m.role === 'user' ? userView(m)
      : new AssistantView(m, { live: false }).el));
    stickToBottom(box, true);
  }

  // ---- sending ----

  history() {
    return this.current.messages.map(m => m.role === 'user' ? { role: 'user', content: m.content }
      : { role: 'assistant', content: answerText(m) }).filter(m => m.content);
  }

  async send() {
    const input = $('#prompt');
    const text = input.value.trim();
    if (!text || this.running) return;
    input.value = '';
    autoGrow(input);
    const chat = this.current;
    if (!chat.messages.length) this.messagesBox.replaceChildren();
    const user = { role: 'user', content: text };
    chat.messages.push(user);
    if (!chat.title) chat.title = titleFrom(text);
    const history = this.history();
    const msg = { role: 'assistant', parts: [], model: $('#model-select').value || '' };
    chat.messages.push(msg);
    chat.updated = Date.now();
    this.persist();
    this.messagesBox.append(userView(user));
    await this.runAnswer(chat, history, msg);
  }

  async runAnswer(chat, history, msg) {
    const box = this.messagesBox;
    const view = new AssistantView(msg, {
      live: true, onDecide: (part, decision) => this.decide(chat, part, decision),
      onAnswer: (part, decision, content) => this.answer(chat, part, decision, content),
      onChange: () => { stickToBottom(box); this.inbox.render(); },
    });
    box.append(view.el);
    stickToBottom(box, true);
    this.running = new ChatRun({ chat, settings: this.settings, model: msg.model, history, view,
      onStatus: t => this.status(t) });
    this.setBusy(true);
    try {
      await this.running.run();
    } finally {
      this.running = null;
      this.setBusy(false);
      chat.updated = Date.now();
      this.persist();
      this.inbox.render();
      stickToBottom(box);
    }
  }

  decide(chat, part, decision) {
    return confirm({ approval_id: part.approval_id, decision, session_id: chat.session_id });
  }

  /** An MCP server's question answered: accept (with the form's content), decline or cancel. */
  answer(chat, part, decision, content) {
    const body = { approval_id: part.approval_id, decision, session_id: chat.session_id };
    if (content !== undefined) body.content = content;
    return confirm(body);
  }

  /** Whether the running answer shows this question with its own buttons (the inbox then hides it). */
  shownLive(approvalId) {
    return Boolean(this.running && this.running.view.shows(approvalId));
  }

  settledLive(approvalId, outcome) {
    if (this.running) this.running.view.settled(approvalId, outcome);
  }

  setBusy(busy) {
    $('#send').hidden = busy;
    $('#stop').hidden = !busy;
    $('#new-chat').disabled = busy;
    document.body.dataset.busy = busy ? '1' : '0';
  }
}

function confirm(body) {
  return apiJson('/api/inference/tool-confirm', { method: 'POST', json: body }).catch(e => {
    if (e.status === 404) throw new Error('This question is no longer open (answered, expired or cancelled).');
    throw e;
  });
}

function answerText(m) {
  return (m.parts || []).filter(p => p.kind === 'text').map(p => p.text).join('\n\n');
}

function autoGrow(el) {
  el.style.height = 'auto';
  el.style.height = Math.min(el.scrollHeight + 2, 220) + 'px';
}

function emptyState() {
  return h('div', { className: 'empty-state' },
    h('h1', {}, 'What can I help with?'),
    h('p', {}, 'Answers stream from your local model. When the model wants to run Python, a shell command or ',
      'show a web page, you see the call first and decide: allow it once, for this chat, always, or deny it.'));
}

window.wardenApp = new App();
document.body.dataset.ready = '1';
