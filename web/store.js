// What the UI remembers in localStorage: the chats (id, title, session_id, messages) and the
// settings (permission mode, enabled tools, model).

import { randomId } from './dom.js';

const CHATS = 'warden.chats';
const SETTINGS = 'warden.settings';
export const TOOLS = ['python', 'terminal', 'edit_file', 'web_search', 'render_html'];
export const MODES = ['ask', 'auto', 'off', 'full'];
export const DEFAULT_SYSTEM_PROMPT = 'You are a helpful assistant.';

function load(key, fallback) {
  try {
    const v = JSON.parse(localStorage.getItem(key));
    return v ?? fallback;
  } catch (e) {
    return fallback;
  }
}

function save(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch (e) {
    console.warn('warden: could not save to localStorage', e);
  }
}

export function loadSettings() {
  const s = load(SETTINGS, {});
  return {
    permission_mode: MODES.includes(s.permission_mode) ? s.permission_mode : 'ask',
    enabled_tools: Array.isArray(s.enabled_tools) ? s.enabled_tools.filter(t => TOOLS.includes(t)) : [...TOOLS],
    model: typeof s.model === 'string' ? s.model : '',
    mcp_enabled: s.mcp_enabled === true,  // offer the MCP servers' tools (issue 26)
    kb_id: typeof s.kb_id === 'string' ? s.kb_id : '',  // the knowledge base chats search ('' = none)
    // sent first in every run; small models answer far better with one
    system_prompt: typeof s.system_prompt === 'string' ? s.system_prompt : DEFAULT_SYSTEM_PROMPT,
  };
}

export function saveSettings(settings) {
  save(SETTINGS, settings);
}

/** Chats, most recently used first. */
export function loadChats() {
  const chats = load(CHATS, []);
  return Array.isArray(chats) ? chats.filter(c => c && c.id && Array.isArray(c.messages)) : [];
}

export function saveChats(chats) {
  save(CHATS, chats);
}

export function newChat() {
  // session_id: [A-Za-z0-9_-]{1,64}
  return { id: randomId('c'), session_id: randomId('chat-'), title: '', messages: [], updated: Date.now() };
}

export function titleFrom(text) {
  const line = (text || '').trim().split('\n')[0];
  return line.length > 48 ? line.slice(0, 47) + '…' : line || 'New chat';
}
