// Drives warden's web UI in headless Chromium for tests/browser/test_web_ui.py.
//
// A small command server: reads one JSON command per line on stdin ({"cmd", "id", ...}), answers
// one JSON line on stdout ({"ok": true, "id", ...result} or {"ok": false, "id", "error"});
// diagnostics go to stderr.
// Every wait is bounded by the command's `timeout_ms` (default 20 s). Commands:
//   open {page, url, color_scheme?}        new browser context + page, waits for the app to start
//   send {page, text}                      types a message and presses Enter
//   wait_card {page, state}                the last answer's first card in that state → card info
//   decide {page, decision}                clicks that button on the card waiting for a person
//   scroll_args {page}                     scrolls the waiting card's arguments box to its end, a
//                                          box height at a time, as a person reading it would
//   wait_idle {page}                       the run is over → the last answer (text, cards, notices)
//   wait_text {page, contains}             the last answer's text contains it
//   click {page, selector}; fill {page, selector, value}; wait_visible / wait_hidden {page, selector}
//   select {page, selector, value}         picks that option of a <select> (fires its change event)
//   evaluate {page, expression}            the value of a script expression in the UI page (awaited)
//   reload {page}                          reloads the page, waits for the app to start again
//   count {page, selector}                 how many elements match
//   new_chat {page}; settings {page} → the rules and audit entries the settings drawer lists
//   listen_messages {page}                 records every message the UI page receives from now on
//   messages {page}                        those messages
//   frame_report {page, index, selector}   waits for `selector` in the index-th sandbox frame
//                                          and returns its textContent
//   wait_frame_gone {page, index}          the index-th sandbox frame left /ui/sandbox.html
//   parent_state {page}                    url, title, body text of the UI page
//   screenshot {page, path}; close {page}
//   console {page} → console errors and page errors (all frames), CSP violations (the UI page's)
import { createInterface } from 'node:readline';
import { chromium } from '../node/node_modules/playwright-core/index.mjs';

const CHROMIUM = process.env.WARDEN_CHROMIUM || '/usr/bin/chromium';
const pages = new Map();   // name → {context, page, console: [], popups: 0}
let browser = null;

async function launch() {
  browser ??= await chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
      '--disable-extensions', '--disable-background-networking', '--disable-component-update',
      '--no-proxy-server', '--disable-features=Translate,MediaRouter,OptimizationHints'],
  });
  return browser;
}

function get(name) {
  const p = pages.get(name);
  if (!p) throw new Error(`no page named ${name}`);
  return p;
}

const lastAnswer = '.msg-assistant:last-of-type';

// ---- commands ----

const commands = {
  async open({ page: name, url, color_scheme, timeout_ms }) {
    const context = await (await launch()).newContext({
      viewport: { width: 1280, height: 820 }, colorScheme: color_scheme || 'light' });
    await context.addInitScript(() => {
      // CSP violations of each document (read back from the UI page only: the sandbox frame's
      // own, provoked by test_web_ui.py, stay in the frame)
      window.__csp = [];
      document.addEventListener('securitypolicyviolation', e => window.__csp.push(
        { directive: e.violatedDirective, blocked: e.blockedURI, source: e.sourceFile, line: e.lineNumber }));
    });
    const page = await context.newPage();
    const entry = { context, page, console: [], popups: 0 };
    page.on('console', m => {
      if (m.type() === 'error' || m.type() === 'warning') {
        entry.console.push({ type: m.type(), text: m.text(), url: m.location().url || '' });
      }
    });
    page.on('pageerror', e => entry.console.push({ type: 'pageerror', text: String(e), url: '' }));
    context.on('page', () => { entry.popups += 1; });
    pages.set(name, entry);
    await page.goto(url, { timeout: timeout_ms });
    await page.waitForSelector('body[data-ready="1"]', { timeout: timeout_ms });
    return { title: await page.title(), popups_before: entry.popups };
  },

  async send({ page: name, text, timeout_ms }) {
    const { page } = get(name);
    const before = await page.locator('.msg-assistant').count();
    await page.fill('#prompt', text, { timeout: timeout_ms });
    await page.press('#prompt', 'Enter', { timeout: timeout_ms });
    await page.waitForFunction(n => document.querySelectorAll('.msg-assistant').length > n, before,
      { timeout: timeout_ms });
    return {};
  },

  async wait_card({ page: name, state, timeout_ms }) {
    const { page } = get(name);
    const sel = `${lastAnswer} .tool-card[data-state="${state}"]`;
    await page.waitForSelector(sel, { timeout: timeout_ms });
    return { card: await cardInfo(page.locator(sel).first()) };
  },

  async decide({ page: name, decision, timeout_ms }) {
    const { page } = get(name);
    await page.click(`${lastAnswer} .tool-card[data-state="awaiting"] button[data-decision="${decision}"]`,
      { timeout: timeout_ms });
    return {};
  },

  async scroll_args({ page: name, timeout_ms }) {
    const { page } = get(name);
    const box = page.locator(`${lastAnswer} .tool-card[data-state="awaiting"] .tool-args pre`).first();
    await box.waitFor({ timeout: timeout_ms });
    const steps = await box.evaluate(async el => {
      let n = 0;
      while (el.scrollTop + el.clientHeight < el.scrollHeight - 1 && n < 1000) {
        el.scrollTop += el.clientHeight;
        n += 1;
        await new Promise(r => requestAnimationFrame(r));
      }
      return n;
    });
    return { steps };
  },

  async wait_idle({ page: name, timeout_ms }) {
    const { page } = get(name);
    await page.waitForSelector(`body[data-busy="0"] ${lastAnswer}[data-finished="1"]`, { timeout: timeout_ms });
    return answerInfo(page);
  },

  async wait_text({ page: name, contains, timeout_ms }) {
    const { page } = get(name);
    await page.waitForFunction(t => {
      const answers = document.querySelectorAll('.msg-assistant');
      const last = answers[answers.length - 1];
      return last && [...last.querySelectorAll('.answer')].some(el => el.textContent.includes(t));
    }, contains, { timeout: timeout_ms });
    return {};
  },

  async click({ page: name, selector, timeout_ms }) {
    await get(name).page.click(selector, { timeout: timeout_ms });
    return {};
  },

  async fill({ page: name, selector, value, timeout_ms }) {
    await get(name).page.fill(selector, value, { timeout: timeout_ms });
    return {};
  },

  async select({ page: name, selector, value, timeout_ms }) {
    await get(name).page.selectOption(selector, value, { timeout: timeout_ms });
    return {};
  },

  async evaluate({ page: name, expression }) {
    return { value: await get(name).page.evaluate(expression) };
  },

  async upload({ page: name, selector, path, timeout_ms }) {
    await get(name).page.setInputFiles(selector, path, { timeout: timeout_ms });
    return {};
  },

  async text({ page: name, selector, timeout_ms }) {
    return { value: await get(name).page.locator(selector).first().innerText({ timeout: timeout_ms }) };
  },

  async wait_visible({ page: name, selector, timeout_ms }) {
    await get(name).page.waitForSelector(selector, { state: 'visible', timeout: timeout_ms });
    return {};
  },

  async wait_hidden({ page: name, selector, timeout_ms }) {
    await get(name).page.waitForSelector(selector, { state: 'hidden', timeout: timeout_ms });
    return {};
  },

  async attr({ page: name, selector, attribute, timeout_ms }) {
    const el = get(name).page.locator(selector).first();
    return { value: await el.getAttribute(attribute, { timeout: timeout_ms }) };
  },

  async reload({ page: name, timeout_ms }) {
    const { page } = get(name);
    await page.reload({ timeout: timeout_ms });
    await page.waitForSelector('body[data-ready="1"]', { timeout: timeout_ms });
    return {};
  },

  async count({ page: name, selector }) {
    return { value: await get(name).page.locator(selector).count() };
  },

  async new_chat({ page: name, timeout_ms }) {
    const { page } = get(name);
    await page.click('#new-chat', { timeout: timeout_ms });
    await page.waitForSelector('.empty-state', { timeout: timeout_ms });
    return {};
  },

  async settings({ page: name, timeout_ms }) {
    const { page } = get(name);
    if (await page.isHidden('#settings')) await page.click('#open-settings', { timeout: timeout_ms });
    else await Promise.all([page.click('#refresh-rules'), page.click('#refresh-audit')]);
    // both lists are filled when neither shows "Loading…"
    await page.waitForFunction(() => ['#rules-list', '#audit-list'].every(s => {
      const el = document.querySelector(s);
      return el.children.length && !el.textContent.includes('Loading');
    }), null, { timeout: timeout_ms });
    return page.evaluate(() => ({
      rules: [...document.querySelectorAll('#rules-list .rule-item')].map(r => ({
        id: r.dataset.ruleId, tool: r.dataset.tool, text: r.textContent })),
      rules_text: document.querySelector('#rules-list').textContent,
      audit: [...document.querySelectorAll('#audit-list .audit-item')].map(r => ({
        tool: r.dataset.tool, decided_by: r.dataset.decidedBy, text: r.textContent })),
      audit_text: document.querySelector('#audit-list').textContent,
    }));
  },

  async listen_messages({ page: name }) {
    await get(name).page.evaluate(() => {
      window.__testMessages = [];
      window.addEventListener('message', e => {
        window.__testMessages.push({ data: e.data, fromFrame: e.source !== window });
      });
    });
    return {};
  },

  async messages({ page: name, count, timeout_ms }) {
    const { page } = get(name);
    if (count) {
      await page.waitForFunction(n => window.__testMessages.length >= n, count, { timeout: timeout_ms });
    }
    return { messages: await page.evaluate(() => window.__testMessages) };
  },

  async frame_report({ page: name, index, selector, timeout_ms }) {
    const frame = await sandboxFrame(get(name).page, index, timeout_ms);
    const handle = await frame.waitForSelector(selector, { timeout: timeout_ms });
    return { text: await handle.textContent(), url: frame.url() };
  },

  async wait_frame_gone({ page: name, index, timeout_ms }) {
    const { page } = get(name);
    const deadline = Date.now() + timeout_ms;
    for (;;) {
      const frames = sandboxFrames(page);
      const f = frames[index];
      if (!f || !f.url().endsWith('/ui/sandbox.html')) return { url: f ? f.url() : null };
      if (Date.now() > deadline) return { url: f.url(), timed_out: true };
      await page.waitForEvent('framenavigated', { timeout: Math.max(1, deadline - Date.now()) }).catch(() => {});
    }
  },

  async parent_state({ page: name }) {
    const entry = get(name);
    const state = await entry.page.evaluate(() => ({
      url: location.href, title: document.title,
      body_children: [...document.body.children].map(el => el.tagName + '#' + el.id),
      app_children: [...document.querySelector('#app').children].map(el => el.tagName + '#' + el.id),
      escaped: document.documentElement.outerHTML.includes('ESCAPED'),  // test_web_ui.py's marker
    }));
    return Object.assign(state, { popups: entry.popups, pages: entry.context.pages().length });
  },

  async screenshot({ page: name, path }) {
    const { page } = get(name);
    await page.evaluate(() => document.activeElement && document.activeElement.blur());
    await page.screenshot({ path, animations: 'disabled', caret: 'hide' });
    return { path };
  },

  async console({ page: name }) {
    const { page, console: entries } = get(name);
    return { entries, csp: await page.evaluate(() => window.__csp) };
  },

  async storage({ page: name }) {
    return get(name).page.evaluate(() => ({
      api_key: sessionStorage.getItem('warden.api_key'),
      session_id: window.wardenApp.current.session_id,
      chats: JSON.parse(localStorage.getItem('warden.chats') || '[]').length,
    }));
  },

  async close({ page: name }) {
    const entry = pages.get(name);
    if (entry) await entry.context.close();
    pages.delete(name);
    return {};
  },
};

function sandboxFrames(page) {
  return page.frames().filter(f => f !== page.mainFrame() && f.parentFrame() === page.mainFrame());
}

async function sandboxFrame(page, index, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const f = sandboxFrames(page)[index];
    if (f) return f;
    if (Date.now() > deadline) throw new Error(`no sandbox frame #${index} within ${timeoutMs} ms`);
    await page.waitForEvent('frameattached', { timeout: Math.max(1, deadline - Date.now()) }).catch(() => {});
  }
}

async function cardInfo(card) {
  return card.evaluate(el => ({
    tool: el.dataset.tool, state: el.dataset.state, awaited: el.dataset.awaited === '1', early: el.dataset.early === '1',
    decided_by: el.dataset.decidedBy, allowed: el.dataset.allowed,
    buttons: [...el.querySelectorAll('button[data-decision]')].map(b => b.dataset.decision),
    disabled: [...el.querySelectorAll('button[data-decision]')].filter(b => b.disabled).map(b => b.dataset.decision),
    seen: el.dataset.seen === '1',
    hint: (el.querySelector('.approval-hint') || {}).textContent || '',
    lines: (el.querySelector('.tool-lines') || {}).textContent || '',
    args: (el.querySelector('.tool-args pre') || {}).textContent || '',
    output: (el.querySelector('.tool-output pre') || {}).textContent || '',
    result: (el.querySelector('.tool-result pre') || {}).textContent ?? null,
    decided: (el.querySelector('.decided') || {}).textContent || '',
    risk: (el.querySelector('.risk') || {}).textContent || '',
    has_frame: Boolean(el.querySelector('iframe')),
  }));
}

async function answerInfo(page) {
  const last = page.locator(lastAnswer);
  const cards = [];
  for (const c of await last.locator('.tool-card').all()) cards.push(await cardInfo(c));
  const info = await last.evaluate(el => ({
    text: [...el.querySelectorAll('.answer')].map(a => a.textContent).join('\n'),
    html: [...el.querySelectorAll('.answer')].map(a => a.innerHTML).join('\n'),
    reasoning: [...el.querySelectorAll('details.reasoning')].map(d => ({
      open: d.open, text: d.querySelector('.reasoning-text').textContent })),
    notices: [...el.querySelectorAll('.notice')].map(n => ({ code: n.dataset.notice, text: n.textContent })),
    status: document.querySelector('#status-line').textContent,
  }));
  return Object.assign(info, { cards });
}

// ---- the command loop ----

async function handle(cmd) {
  const fn = commands[cmd.cmd];
  if (!fn) throw new Error(`unknown command ${cmd.cmd}`);
  cmd.timeout_ms = cmd.timeout_ms || 20000;
  return fn(cmd);
}

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  let out, cmd = {};
  try {
    cmd = JSON.parse(line);
    out = Object.assign({ ok: true }, await handle(cmd));
  } catch (e) {
    out = { ok: false, error: String(e && e.stack || e) };
  }
  out.id = cmd.id;
  process.stdout.write(JSON.stringify(out) + '\n');
}
if (browser) await browser.close();
