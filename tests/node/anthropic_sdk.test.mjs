// warden's Anthropic Messages surface (POST /v1/messages, /v1/messages/count_tokens) driven by the
// official Node SDK, unchanged, against a warden whose upstream is the scripted fake
// (tests/fake/fake_upstream.py). Run by tests/integration/test_anthropic_node.py, which starts
// the processes and sets:
//   WARDEN_BASE       a warden without --api-key, e.g. http://127.0.0.1:PORT (the SDK adds /v1/...)
//   FAKE_BASE         the fake upstream, e.g. http://127.0.0.1:PORT (POST /script, GET /stats)
//   WARDEN_AUTH_BASE  a second warden started with --api-key WARDEN_AUTH_KEY
//   WARDEN_AUTH_KEY   that key
// By hand: node --test tests/node/anthropic_sdk.test.mjs (after `scripts/setup nodedeps`).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';

import Anthropic from '@anthropic-ai/sdk';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';

const BASE = process.env.WARDEN_BASE;
const FAKE = process.env.FAKE_BASE;
const AUTH_BASE = process.env.WARDEN_AUTH_BASE;
const AUTH_KEY = process.env.WARDEN_AUTH_KEY;
for (const [k, v] of Object.entries({ WARDEN_BASE: BASE, FAKE_BASE: FAKE, WARDEN_AUTH_BASE: AUTH_BASE, WARDEN_AUTH_KEY: AUTH_KEY })) {
  if (!v) throw new Error(`${k} is not set (run this through tests/integration/test_anthropic_node.py)`);
}

// maxRetries 0: a 5xx must surface as the SDK's error at once, not after retries
const client = new Anthropic({ baseURL: BASE, apiKey: 'x', maxRetries: 0, timeout: 30_000 });
const MODEL = 'claude-sonnet-4-5';

const WEATHER = {
  name: 'get_weather',
  description: 'Get the current weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const TIME = {
  name: 'get_time',
  description: 'The local time in a time zone',
  input_schema: { type: 'object', properties: { tz: { type: 'string' }, hours: { type: 'integer' } } },
};

/** Registers a scripted model on the fake; the returned prompt selects it. */
async function script(turns) {
  const name = 'anthropic-node-' + randomUUID().slice(0, 8);
  const r = await fetch(`${FAKE}/script`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, turns }),
  });
  assert.equal(r.status, 200, await r.text());
  return `scenario:script:${name}`;
}

/** The bodies the fake received for a scripted scenario (in order). */
async function upstreamRequests(prompt) {
  const stats = await (await fetch(`${FAKE}/stats`)).json();
  return stats.requests.filter((b) => (b.messages || []).some((m) => m.role === 'user' && m.content === prompt));
}

/** OpenAI message content (a string or a list of parts) as plain text. */
function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === 'string' ? p : p.text ?? '')).join('');
  return '';
}

const user = (text) => [{ role: 'user', content: text }];

function assertToolUse(block, name, input) {
  assert.equal(block.type, 'tool_use');
  assert.match(block.id, /^toolu_[A-Za-z0-9_-]+$/);
  assert.equal(block.name, name);
  assert.deepEqual(block.input, input);
}

async function rejection(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('the request succeeded; an error was expected');
}

function assertApiError(err, cls, status, type) {
  assert.ok(err instanceof cls, `expected ${cls.name}, got ${err?.constructor?.name}: ${err}`);
  assert.ok(err instanceof Anthropic.APIError);
  assert.equal(err.status, status);
  assert.equal(err.error?.type, 'error', JSON.stringify(err.error));
  assert.equal(err.error?.error?.type, type, JSON.stringify(err.error));
  assert.equal(typeof err.error.error.message, 'string');
  assert.ok(err.error.error.message.length > 0);
  assert.match(err.requestID ?? '', /^req_/, `request-id header: ${err.requestID}`);
  assert.equal(err.headers.get('request-id'), err.requestID);
  assert.equal(err.error.request_id, err.requestID, 'the body names the same request id as the header');
}

describe('messages.create', () => {
  test('text answer: one text block, end_turn, usage', async () => {
    const prompt = await script([{ content: 'Hello there, friend.' }]);
    const msg = await client.messages.create({
      model: MODEL, max_tokens: 64, system: 'Be brief.', temperature: 0.5, messages: user(prompt),
    });
    assert.equal(msg.type, 'message');
    assert.equal(msg.role, 'assistant');
    assert.match(msg.id, /^msg_/);
    assert.equal(typeof msg.model, 'string');
    assert.ok(msg.model.length > 0);
    assert.deepEqual(msg.content, [{ type: 'text', text: 'Hello there, friend.' }]);
    assert.equal(msg.stop_reason, 'end_turn');
    assert.equal(msg.stop_sequence, null);
    assert.equal(msg.usage.input_tokens, 7);   // the fake's usage: prompt 7, completion 5
    assert.equal(msg.usage.output_tokens, 5);

    const [sent] = await upstreamRequests(prompt);
    assert.ok(sent, 'the fake saw the request');
    const roles = sent.messages.map((m) => m.role);
    assert.deepEqual(roles, ['system', 'user']);
    assert.equal(textOf(sent.messages[0].content), 'Be brief.');
    assert.equal(sent.temperature, 0.5);
  });

  test('withResponse gives the request-id header', async () => {
    const prompt = await script([{ content: 'ok' }]);
    const { data, response, request_id } = await client.messages
      .create({ model: MODEL, max_tokens: 16, messages: user(prompt) })
      .withResponse();
    assert.equal(response.status, 200);
    assert.match(request_id ?? '', /^req_/);
    assert.equal(response.headers.get('request-id'), request_id);
    assert.equal(data.content[0].text, 'ok');
  });
});

describe('messages.stream helpers', () => {
  test("on('text') deltas add up to finalMessage()'s text", async () => {
    const answer = 'Streaming works, piece by piece.';
    const prompt = await script([{ content: answer }]);
    const stream = client.messages.stream({ model: MODEL, max_tokens: 64, messages: user(prompt) });
    const deltas = [];
    let connected = false;
    stream.on('connect', () => { connected = true; });
    stream.on('text', (delta, snapshot) => {
      deltas.push(delta);
      assert.equal(snapshot, deltas.join(''));
    });
    const final = await stream.finalMessage();
    assert.ok(connected);
    assert.ok(deltas.length > 1, `text came in ${deltas.length} delta(s)`);
    assert.equal(deltas.join(''), answer);
    assert.deepEqual(final.content, [{ type: 'text', text: answer }]);
    assert.equal(final.stop_reason, 'end_turn');
    assert.equal(final.stop_sequence, null);
    assert.equal(final.usage.output_tokens, 5);
    assert.equal(final.usage.input_tokens, 7);
    assert.match(final.id, /^msg_/);
    assert.equal(await stream.finalText(), answer);
    assert.match(stream.request_id ?? '', /^req_/);
  });

  test('async iteration yields the same events as the raw stream', async () => {
    const prompt = await script([{ content: 'abcdefgh' }]);
    const stream = client.messages.stream({ model: MODEL, max_tokens: 32, messages: user(prompt) });
    const types = [];
    for await (const ev of stream) types.push(ev.type);
    const t = types.filter((x) => x !== 'ping');
    assert.equal(t[0], 'message_start');
    assert.equal(t.at(-2), 'message_delta');
    assert.equal(t.at(-1), 'message_stop');
    assert.equal((await stream.finalMessage()).content[0].text, 'abcdefgh');
  });
});

describe('raw stream events (create with stream: true)', () => {
  test('text then two tool calls: events in order, blocks indexed 0, 1, 2', async () => {
    const prompt = await script([{
      content: 'Let me look.',
      tool_calls: [
        { name: 'get_weather', arguments: '{"city": "Paris"}' },
        { name: 'get_time', arguments: '{"tz": "Europe/Paris", "hours": 24}' },
      ],
    }]);
    const stream = await client.messages.create({
      model: MODEL, max_tokens: 64, stream: true, tools: [WEATHER, TIME], messages: user(prompt),
    });
    const events = [];
    for await (const ev of stream) if (ev.type !== 'ping') events.push(ev);

    // message_start: an empty assistant message
    const start = events.shift();
    assert.equal(start.type, 'message_start');
    assert.match(start.message.id, /^msg_/);
    assert.equal(start.message.type, 'message');
    assert.equal(start.message.role, 'assistant');
    assert.deepEqual(start.message.content, []);
    assert.equal(start.message.stop_reason, null);
    assert.equal(start.message.stop_sequence, null);

    const stop = events.pop();
    assert.deepEqual(stop, { type: 'message_stop' });
    const delta = events.pop();
    assert.equal(delta.type, 'message_delta');
    assert.deepEqual(delta.delta, { stop_reason: 'tool_use', stop_sequence: null });
    assert.equal(delta.usage.output_tokens, 5);

    // the rest: per block, start, deltas, stop; blocks numbered from 0 and never interleaved
    const blocks = [];
    let open = null;
    for (const ev of events) {
      if (ev.type === 'content_block_start') {
        assert.equal(open, null, `block ${ev.index} started while ${open?.index} is open`);
        assert.equal(ev.index, blocks.length);
        open = { index: ev.index, start: ev.content_block, deltas: [] };
      } else if (ev.type === 'content_block_delta') {
        assert.ok(open, 'a delta outside a block');
        assert.equal(ev.index, open.index);
        open.deltas.push(ev.delta);
      } else if (ev.type === 'content_block_stop') {
        assert.ok(open, 'a stop outside a block');
        assert.equal(ev.index, open.index);
        blocks.push(open);
        open = null;
      } else {
        assert.fail(`unexpected event ${JSON.stringify(ev)}`);
      }
    }
    assert.equal(open, null);
    assert.equal(blocks.length, 3);

    assert.deepEqual(blocks[0].start, { type: 'text', text: '' });
    assert.ok(blocks[0].deltas.every((d) => d.type === 'text_delta'));
    assert.equal(blocks[0].deltas.map((d) => d.text).join(''), 'Let me look.');

    const ids = new Set();
    for (const [i, name, input] of [[1, 'get_weather', { city: 'Paris' }], [2, 'get_time', { tz: 'Europe/Paris', hours: 24 }]]) {
      const b = blocks[i];
      assert.equal(b.start.type, 'tool_use');
      assert.match(b.start.id, /^toolu_/);
      assert.equal(b.start.name, name);
      assert.deepEqual(b.start.input, {});
      ids.add(b.start.id);
      assert.ok(b.deltas.length >= 1);
      assert.ok(b.deltas.every((d) => d.type === 'input_json_delta'), JSON.stringify(b.deltas));
      assert.deepEqual(JSON.parse(b.deltas.map((d) => d.partial_json).join('')), input);
    }
    assert.equal(ids.size, 2, 'each call has its own id');
  });

  test('a text-only stream: message_start, one text block, message_delta end_turn, message_stop', async () => {
    const prompt = await script([{ content: 'Just text.' }]);
    const stream = await client.messages.create({ model: MODEL, max_tokens: 64, stream: true, messages: user(prompt) });
    const events = [];
    for await (const ev of stream) if (ev.type !== 'ping') events.push(ev);
    const types = events.map((e) => e.type);
    const n = types.filter((t) => t === 'content_block_delta').length;
    assert.deepEqual(types, ['message_start', 'content_block_start', ...Array(n).fill('content_block_delta'),
      'content_block_stop', 'message_delta', 'message_stop']);
    assert.ok(n > 1);
    assert.ok(events.slice(1, -2).every((e) => e.index === 0));
    assert.equal(events.at(-2).delta.stop_reason, 'end_turn');
  });
});

describe('tool results', () => {
  test('a list of text blocks is joined with newlines; is_error and two results keep their ids and order', async () => {
    const prompt = await script([
      { tool_calls: [{ name: 'get_weather', arguments: '{"city": "Rome"}' }, { name: 'get_time', arguments: '{"tz": "Europe/Rome"}' }] },
      { content: 'Done.' },
    ]);
    const body = { model: MODEL, max_tokens: 64, tools: [WEATHER, TIME] };
    const first = await client.messages.create({ ...body, messages: user(prompt) });
    const [a, b] = first.content.filter((x) => x.type === 'tool_use');
    assertToolUse(a, 'get_weather', { city: 'Rome' });
    assertToolUse(b, 'get_time', { tz: 'Europe/Rome' });
    const messages = [...user(prompt), { role: 'assistant', content: first.content }, {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: a.id, content: [{ type: 'text', text: 'line one' }, { type: 'text', text: 'line two' }] },
        { type: 'tool_result', tool_use_id: b.id, content: 'clock broken', is_error: true },
      ],
    }];
    const second = await client.messages.create({ ...body, messages });
    assert.deepEqual(second.content, [{ type: 'text', text: 'Done.' }]);
    const msgs = (await upstreamRequests(prompt))[1].messages;
    const tools = msgs.filter((m) => m.role === 'tool');
    assert.deepEqual(tools.map((m) => m.tool_call_id), [a.id, b.id], JSON.stringify(msgs));
    assert.equal(textOf(tools[0].content), 'line one\nline two');
    assert.ok(textOf(tools[1].content).includes('clock broken'), JSON.stringify(tools[1]));
    assert.deepEqual(msgs.slice(-3).map((m) => m.role), ['assistant', 'tool', 'tool']);
  });
});

describe('stop reasons', () => {
  test('stop_sequences: the text ends before the match, stop_reason stop_sequence, even across chunks', async () => {
    // the fake streams 3 characters a chunk: "1, " "2, " "3, " "4, " "5": "3, 4" spans two chunks
    const prompt = await script([{ content: '1, 2, 3, 4, 5' }]);
    const stream = client.messages.stream({
      model: MODEL, max_tokens: 64, stop_sequences: ['never', '3, 4'], messages: user(prompt),
    });
    let streamed = '';
    stream.on('text', (d) => { streamed += d; });
    const final = await stream.finalMessage();
    assert.equal(final.stop_reason, 'stop_sequence');
    assert.equal(final.stop_sequence, '3, 4');
    assert.equal(streamed, '1, 2, ');
    assert.deepEqual(final.content, [{ type: 'text', text: '1, 2, ' }]);
    assert.ok(final.usage.output_tokens > 0);
    assert.ok(final.usage.input_tokens > 0, `usage after a stop sequence: ${JSON.stringify(final.usage)}`);
  });

  test('stop_sequences, not streamed', async () => {
    const prompt = await script([{ content: '1, 2, 3, 4, 5' }]);
    const msg = await client.messages.create({ model: MODEL, max_tokens: 64, stop_sequences: ['4'], messages: user(prompt) });
    assert.equal(msg.stop_reason, 'stop_sequence');
    assert.equal(msg.stop_sequence, '4');
    assert.deepEqual(msg.content, [{ type: 'text', text: '1, 2, 3, ' }]);
    assert.ok(msg.usage.input_tokens > 0, `usage after a stop sequence: ${JSON.stringify(msg.usage)}`);
  });

  test('finish "length" is stop_reason max_tokens', async () => {
    const prompt = await script([{ content: 'cut short', finish: 'length' }]);
    const msg = await client.messages.create({ model: MODEL, max_tokens: 5, messages: user(prompt) });
    assert.equal(msg.stop_reason, 'max_tokens');
    assert.equal(msg.stop_sequence, null);
    const final = await client.messages.stream({ model: MODEL, max_tokens: 5, messages: user(prompt) }).finalMessage();
    assert.equal(final.stop_reason, 'max_tokens');
  });
});

describe('client tools', () => {
  test('a single call: one tool_use block (no empty text block before it), stop_reason tool_use', async () => {
    const prompt = await script([{ tool_calls: [{ name: 'get_weather', arguments: '{"city": "Oslo"}' }] }]);
    const stream = client.messages.stream({ model: MODEL, max_tokens: 64, tools: [WEATHER], messages: user(prompt) });
    const json = [];
    stream.on('inputJson', (partial) => json.push(partial));
    const final = await stream.finalMessage();
    assert.equal(final.stop_reason, 'tool_use');
    assert.equal(final.content.length, 1, JSON.stringify(final.content));
    assertToolUse(final.content[0], 'get_weather', { city: 'Oslo' });
    assert.deepEqual(JSON.parse(json.join('')), { city: 'Oslo' });

    // the tools reached the upstream as OpenAI functions
    const [sent] = await upstreamRequests(prompt);
    assert.deepEqual(sent.tools.map((t) => [t.type, t.function.name]), [['function', 'get_weather']]);
    assert.deepEqual(sent.tools[0].function.parameters, WEATHER.input_schema);
  });

  test('a single call, not streamed', async () => {
    const prompt = await script([{ content: 'Checking.', tool_calls: [{ name: 'get_weather', arguments: '{"city": "Lima"}' }] }]);
    const msg = await client.messages.create({ model: MODEL, max_tokens: 64, tools: [WEATHER], messages: user(prompt) });
    assert.equal(msg.stop_reason, 'tool_use');
    assert.deepEqual(msg.content[0], { type: 'text', text: 'Checking.' });
    assert.equal(msg.content.length, 2);
    assertToolUse(msg.content[1], 'get_weather', { city: 'Lima' });
  });

  test('two parallel calls: two tool_use blocks with their own ids and parsed inputs', async () => {
    const prompt = await script([{
      content: 'Two lookups.',
      tool_calls: [
        { name: 'get_weather', arguments: '{"city": "Tokyo"}' },
        { name: 'get_time', arguments: '{"tz": "Asia/Tokyo", "hours": 12}' },
      ],
    }]);
    const final = await client.messages
      .stream({ model: MODEL, max_tokens: 64, tools: [WEATHER, TIME], messages: user(prompt) })
      .finalMessage();
    assert.equal(final.stop_reason, 'tool_use');
    assert.deepEqual(final.content.map((b) => b.type), ['text', 'tool_use', 'tool_use']);
    assert.equal(final.content[0].text, 'Two lookups.');
    assertToolUse(final.content[1], 'get_weather', { city: 'Tokyo' });
    assertToolUse(final.content[2], 'get_time', { tz: 'Asia/Tokyo', hours: 12 });
    assert.notEqual(final.content[1].id, final.content[2].id);
  });

  test('tool_result round trip: the result reaches the model and the answer comes back', async () => {
    const prompt = await script([
      { tool_calls: [{ name: 'get_weather', arguments: '{"city": "Paris"}' }] },
      { content: 'It is 18 degrees and sunny in Paris.' },
    ]);
    const messages = user(prompt);
    const first = await client.messages.create({ model: MODEL, max_tokens: 64, tools: [WEATHER], messages });
    assert.equal(first.stop_reason, 'tool_use');
    const call = first.content.find((b) => b.type === 'tool_use');
    assertToolUse(call, 'get_weather', { city: 'Paris' });

    messages.push({ role: 'assistant', content: first.content });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '18°C, sunny' }] });
    const second = await client.messages
      .stream({ model: MODEL, max_tokens: 64, tools: [WEATHER], messages })
      .finalMessage();
    assert.equal(second.stop_reason, 'end_turn');
    assert.deepEqual(second.content, [{ type: 'text', text: 'It is 18 degrees and sunny in Paris.' }]);

    // what the model was sent the second time: the call, then the result under the call's id
    const sent = await upstreamRequests(prompt);
    assert.equal(sent.length, 2);
    const msgs = sent[1].messages;
    const asst = msgs.at(-2);
    const tool = msgs.at(-1);
    assert.equal(asst.role, 'assistant', JSON.stringify(msgs));
    assert.equal(asst.tool_calls.length, 1);
    assert.equal(asst.tool_calls[0].id, call.id);
    assert.equal(asst.tool_calls[0].function.name, 'get_weather');
    assert.deepEqual(JSON.parse(asst.tool_calls[0].function.arguments), { city: 'Paris' });
    assert.equal(tool.role, 'tool', JSON.stringify(msgs));
    assert.equal(tool.tool_call_id, call.id);
    assert.equal(textOf(tool.content), '18°C, sunny');
  });
});

describe('thinking', () => {
  // needs the fake's script turn field "reasoning" (streamed as delta.reasoning_content, like
  // llama-server with a reasoning model)
  const turn = { reasoning: 'The user wants a greeting.', content: 'Hi!' };

  test('streamed: a thinking block before the text, thinking deltas', async () => {
    const prompt = await script([turn]);
    const stream = client.messages.stream({
      model: MODEL, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: user(prompt),
    });
    const thoughts = [];
    stream.on('thinking', (delta) => thoughts.push(delta));
    const final = await stream.finalMessage();
    assert.equal(thoughts.join(''), turn.reasoning);
    assert.deepEqual(final.content, [
      { type: 'thinking', thinking: turn.reasoning, signature: '' },
      { type: 'text', text: 'Hi!' },
    ]);
    assert.equal(final.stop_reason, 'end_turn');
    const [sent] = await upstreamRequests(prompt);
    assert.equal(sent.chat_template_kwargs?.enable_thinking, true, JSON.stringify(sent));
  });

  test('not streamed: the same blocks', async () => {
    const prompt = await script([turn]);
    const msg = await client.messages.create({
      model: MODEL, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: user(prompt),
    });
    assert.deepEqual(msg.content, [
      { type: 'thinking', thinking: turn.reasoning, signature: '' },
      { type: 'text', text: 'Hi!' },
    ]);
  });
  test('thinking passed back in the history reaches the model as reasoning_content', async () => {
    const prompt = await script([turn, { content: 'Second answer.' }]);
    const body = { model: MODEL, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 } };
    const first = await client.messages.create({ ...body, messages: user(prompt) });
    const messages = [...user(prompt), { role: 'assistant', content: first.content }];
    messages[1].content = [{ type: 'redacted_thinking', data: 'opaque' }, ...first.content];
    const second = await client.messages.create({ ...body, messages });
    assert.deepEqual(second.content.filter((b) => b.type === 'text'), [{ type: 'text', text: 'Second answer.' }]);
    const sent = (await upstreamRequests(prompt))[1];
    const asst = sent.messages.at(-1);
    assert.equal(asst.role, 'assistant', JSON.stringify(sent.messages));
    assert.equal(asst.reasoning_content, turn.reasoning);
    assert.equal(textOf(asst.content), 'Hi!');
    assert.ok(!JSON.stringify(asst).includes('opaque'), 'redacted_thinking is dropped');
  });
});

describe('count_tokens', () => {
  // The fake's /apply-template renders one line "<role>: <content as JSON>\n" per message (+ a
  // tools line) and its /tokenize gives one token per whitespace-separated word; what warden
  // sent it is recorded in /stats root_requests.
  async function rootRequests() {
    return (await (await fetch(`${FAKE}/stats`)).json()).root_requests ?? [];
  }
  const words = (text) => text.split(/\s+/).filter(Boolean).length;

  test('input_tokens is the token count of the upstream-rendered prompt', async () => {
    const before = (await rootRequests()).length;
    const body = { model: MODEL, system: 'You are terse.', tools: [WEATHER], messages: user('Hello there, count me') };
    const r = await client.messages.countTokens(body);
    assert.deepEqual(Object.keys(r), ['input_tokens']);
    assert.ok(Number.isInteger(r.input_tokens) && r.input_tokens > 0, JSON.stringify(r));

    const calls = (await rootRequests()).slice(before);
    assert.deepEqual(calls.map((c) => c.path), ['/apply-template', '/tokenize'], JSON.stringify(calls));
    const [templ, tok] = calls.map((c) => c.body);
    assert.deepEqual(templ.messages.map((m) => [m.role, textOf(m.content)]),
      [['system', 'You are terse.'], ['user', 'Hello there, count me']]);
    assert.deepEqual(templ.tools.map((t) => t.function.name), ['get_weather']);
    assert.deepEqual(templ.tools[0].function.parameters, WEATHER.input_schema);
    assert.equal(tok.add_special, true);  // as llama-server tokenizes a chat prompt
    assert.equal(tok.parse_special, true);
    assert.equal(typeof tok.content, 'string');
    assert.ok(tok.content.includes('Hello there, count me'), tok.content);
    assert.equal(r.input_tokens, words(tok.content), `counted ${JSON.stringify(tok.content)}`);

    // nothing was generated
    const gen = (await (await fetch(`${FAKE}/stats`)).json()).requests
      .filter((b) => (b.messages || []).some((m) => textOf(m.content) === 'Hello there, count me'));
    assert.equal(gen.length, 0, 'count_tokens must not ask for a completion');
  });

  test('more text, a system prompt and tools count more', async () => {
    const count = async (extra) => (await client.messages.countTokens({ model: MODEL, messages: user('Hello'), ...extra })).input_tokens;
    const base = await count({});
    assert.ok(base > 0);
    const longer = (await client.messages.countTokens({
      model: MODEL, messages: user('Hello, please tell me a long story about the sea and the ships on it'),
    })).input_tokens;
    assert.ok(longer > base, `${longer} > ${base}`);
    const withTools = await count({ tools: [WEATHER] });
    assert.ok(withTools > base, `${withTools} > ${base}`);
    const withSystem = await count({ system: 'You are terse.' });
    assert.ok(withSystem > base, `${withSystem} > ${base}`);
  });

  test('a bad body is a 400 in the Anthropic envelope', async () => {
    const err = await rejection(client.messages.countTokens({ model: MODEL, messages: [] }));
    assertApiError(err, Anthropic.BadRequestError, 400, 'invalid_request_error');
  });
});

describe('errors', () => {
  test('400: an invalid body is a BadRequestError', async () => {
    const err = await rejection(client.messages.create({ model: MODEL, max_tokens: 16, messages: [] }));
    assertApiError(err, Anthropic.BadRequestError, 400, 'invalid_request_error');
  });

  test('400: a wrong role is a BadRequestError, streaming too', async () => {
    const err = await rejection(client.messages
      .stream({ model: MODEL, max_tokens: 16, messages: [{ role: 'robot', content: 'hi' }] })
      .finalMessage());
    assertApiError(err, Anthropic.BadRequestError, 400, 'invalid_request_error');
  });

  test('401: a wrong key on a warden with --api-key is an AuthenticationError', async () => {
    const bad = new Anthropic({ baseURL: AUTH_BASE, apiKey: 'x', maxRetries: 0 });
    const err = await rejection(bad.messages.create({ model: MODEL, max_tokens: 16, messages: user('hi') }));
    assertApiError(err, Anthropic.AuthenticationError, 401, 'authentication_error');

    // and the right key (sent by the SDK as X-Api-Key) gets through
    const prompt = await script([{ content: 'authorized' }]);
    const good = new Anthropic({ baseURL: AUTH_BASE, apiKey: AUTH_KEY, maxRetries: 0 });
    const msg = await good.messages.create({ model: MODEL, max_tokens: 16, messages: user(prompt) });
    assert.equal(msg.content[0].text, 'authorized');
  });

  test('404: an unknown route under /v1/messages is a NotFoundError', async () => {
    const err = await rejection(client.post('/v1/messages/nope', { body: { model: MODEL } }));
    assertApiError(err, Anthropic.NotFoundError, 404, 'not_found_error');
  });

  test('502: the model server failing (HTTP 500) is an InternalServerError', async () => {
    const err = await rejection(client.messages.create({ model: MODEL, max_tokens: 16, messages: user('scenario:http500') }));
    assertApiError(err, Anthropic.InternalServerError, 502, 'api_error');
  });

  test('400 from the model server (context exceeded) is a BadRequestError', async () => {
    const err = await rejection(client.messages.create({ model: MODEL, max_tokens: 16, messages: user('scenario:http400') }));
    assertApiError(err, Anthropic.BadRequestError, 400, 'invalid_request_error');
  });

  test('503 from the model server (loading) is an overloaded_error', async () => {
    const err = await rejection(client.messages.create({ model: MODEL, max_tokens: 16, messages: user('scenario:http503') }));
    assertApiError(err, Anthropic.ServiceUnavailableError, 503, 'overloaded_error');
  });

  test('502 before a stream starts is a real status too', async () => {
    const err = await rejection(client.messages
      .stream({ model: MODEL, max_tokens: 16, messages: user('scenario:http500') })
      .finalMessage());
    assertApiError(err, Anthropic.InternalServerError, 502, 'api_error');
  });
});

// Last: if warden mishandles this it may take the process down, which must not hide the others.
describe('errors after the stream started', () => {
  test('an upstream failure after the stream started is one error event; the SDK throws it', async () => {
    const stream = await client.messages.create({ model: MODEL, max_tokens: 16, stream: true, messages: user('scenario:error') });
    const seen = [];
    const err = await rejection((async () => { for await (const ev of stream) seen.push(ev.type); })());
    assert.ok(err instanceof Anthropic.APIError, `${err}`);
    assert.equal(seen[0], 'message_start');
    assert.ok(!seen.includes('message_stop'), seen.join(' '));
    assert.equal(err.error?.type, 'error', JSON.stringify(err.error));
    assert.equal(err.error?.error?.type, 'api_error', JSON.stringify(err.error));
  });
});

describe('the beta tool runner, default settings', () => {
  // It sends thread {type:"create"} (beta message-threads); warden answers 400 with
  // error.details.error_code thread_unsupported_request, and the runner goes on resending the
  // whole history, so turn 2 pairs its tool_result with turn 1's tool_use.
  test('a two-turn tool run finishes', async () => {
    const ran = [];
    const weather = betaTool({
      name: 'get_weather',
      description: 'The weather in a city',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      run: async ({ city }) => {
        ran.push(city);
        return `sunny in ${city}`;
      },
    });
    const prompt = await script([
      { content: '', tool_calls: [{ name: 'get_weather', arguments: JSON.stringify({ city: 'Paris' }), id: 'call_n1' }] },
      { content: 'It is sunny in Paris.' },
    ]);
    const runner = client.beta.messages.toolRunner({
      model: MODEL, max_tokens: 64, tools: [weather], messages: [{ role: 'user', content: prompt }],
    });
    const final = await runner.runUntilDone();
    assert.deepEqual(ran, ['Paris']);
    assert.equal(final.stop_reason, 'end_turn');
    assert.equal(final.content[0].text, 'It is sunny in Paris.');
    const reqs = await upstreamRequests(prompt);
    assert.equal(reqs.length, 2);
    assert.deepEqual(reqs[1].messages.map((m) => m.role), ['user', 'assistant', 'tool']);
    assert.equal(reqs[1].messages[2].content, 'sunny in Paris');
  });
});
