// warden's OpenAI surfaces (POST /v1/responses with GET/DELETE /v1/responses/{id} and input_items,
// POST /v1/completions, POST /v1/embeddings) driven by the official `openai` Node SDK, unchanged,
// against a warden whose upstream is the scripted fake (tests/fake/fake_upstream.py). Run by
// tests/integration/test_openai_node.py, which starts the processes and sets:
//   WARDEN_BASE  a warden without --api-key, e.g. http://127.0.0.1:PORT (the test adds /v1)
//   FAKE_BASE    the fake upstream, e.g. http://127.0.0.1:PORT (POST /script, GET /stats)
// By hand: node --test tests/node/openai_sdk.test.mjs (after `scripts/setup nodedeps`).
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';

import OpenAI from 'openai';

const BASE = process.env.WARDEN_BASE;
const FAKE = process.env.FAKE_BASE;
for (const [k, v] of Object.entries({ WARDEN_BASE: BASE, FAKE_BASE: FAKE })) {
  if (!v) throw new Error(`${k} is not set (run this through tests/integration/test_openai_node.py)`);
}

// maxRetries 0: a 5xx must surface as the SDK's error at once, not after retries
const client = new OpenAI({ baseURL: `${BASE}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 30_000 });
const MODEL = 'gpt-5'; // any name: warden serves its one model

// the fake's legacy answers (tests/fake/fake_upstream.py)
const COMPLETION_TEXT = ' upon a time there was a fake model.';
const EMBED_DIM = 8;

const WEATHER = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

/** Registers a scripted model on the fake; the returned prompt selects it. */
async function script(turns) {
  const name = 'openai-node-' + randomUUID().slice(0, 8);
  const r = await fetch(`${FAKE}/script`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, turns }),
  });
  assert.equal(r.status, 200, await r.text());
  return `scenario:script:${name}`;
}

async function stats() {
  return (await fetch(`${FAKE}/stats`)).json();
}

/** The chat bodies the fake received for a scripted scenario (in order). */
async function upstreamRequests(prompt) {
  return (await stats()).requests.filter((b) => (b.messages || []).some((m) => m.role === 'user' && m.content === prompt));
}

/** The fake's vector for one input: fake_embedding() in tests/fake/fake_upstream.py. */
function fakeEmbedding(input) {
  const digest = createHash('sha256').update(JSON.stringify(input)).digest();
  return [...digest.subarray(0, EMBED_DIM)].map((b) => (b - 128) / 128);
}

async function rejection(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('the request succeeded; an error was expected');
}

/** The text of every output_text part of every message item (what the SDK's output_text is). */
function textOfOutput(output) {
  return output
    .filter((o) => o.type === 'message')
    .flatMap((o) => o.content)
    .filter((c) => c.type === 'output_text')
    .map((c) => c.text)
    .join('');
}

describe('responses: text', () => {
  test('create, not streamed: a completed response with output_text and usage', async () => {
    const prompt = await script([{ content: 'Hello from the fake.' }]);
    const r = await client.responses.create({ model: MODEL, input: prompt, instructions: 'Be brief.' });
    assert.match(r.id, /^resp_/);
    assert.equal(r.object, 'response');
    assert.equal(r.status, 'completed');
    assert.equal(r.output_text, 'Hello from the fake.');
    assert.deepEqual(r.output.map((o) => o.type), ['message']);
    assert.equal(r.output[0].role, 'assistant');
    assert.equal(r.output[0].content[0].type, 'output_text');
    assert.ok(r.usage.input_tokens > 0 && r.usage.output_tokens > 0, JSON.stringify(r.usage));
    assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
    assert.equal(r.instructions, 'Be brief.');
    const sent = (await upstreamRequests(prompt)).at(-1);
    assert.deepEqual(sent.messages[0], { role: 'system', content: 'Be brief.' });
    assert.equal(sent.messages[1].role, 'user');
  });

  test('create, streamed: for await over the events, in order, deltas make the text', async () => {
    const prompt = await script([{ content: 'Streaming works fine.' }]);
    const stream = await client.responses.create({ model: MODEL, input: prompt, stream: true });
    const events = [];
    for await (const ev of stream) events.push(ev);
    const types = events.map((e) => e.type);
    assert.deepEqual(types.slice(0, 4), ['response.created', 'response.in_progress', 'response.output_item.added',
      'response.content_part.added'], types.join(' '));
    assert.deepEqual(types.slice(-4), ['response.output_text.done', 'response.content_part.done',
      'response.output_item.done', 'response.completed'], types.join(' '));
    assert.ok(types.includes('response.output_text.delta'), types.join(' '));
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
    const deltas = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    assert.equal(deltas, 'Streaming works fine.');
    assert.equal(events[0].response.status, 'in_progress');
    const textDone = events.find((e) => e.type === 'response.output_text.done');
    assert.equal(textDone.text, deltas);
    const done = events.at(-1).response;
    assert.equal(done.status, 'completed');
    assert.equal(textOfOutput(done.output), deltas);
    assert.equal(done.id, events[0].response.id);
  });

  test('responses.stream(): the SDK helper assembles the same final response', async () => {
    const prompt = await script([{ content: 'Again, streamed.' }]);
    const s = client.responses.stream({ model: MODEL, input: prompt });
    let text = '';
    s.on('response.output_text.delta', (e) => { text += e.delta; });
    const final = await s.finalResponse();
    assert.equal(text, 'Again, streamed.');
    assert.equal(final.output_text, 'Again, streamed.');
    assert.equal(final.status, 'completed');
  });
});

describe('responses: function tools', () => {
  test('function_call → function_call_output with previous_response_id', async () => {
    const prompt = await script([
      { tool_calls: [{ name: 'get_weather', arguments: '{"city": "Paris"}', id: 'call_w1' }], finish: 'tool_calls' },
      { content: 'It is sunny in Paris.' },
    ]);
    const r1 = await client.responses.create({ model: MODEL, input: prompt, tools: [WEATHER] });
    assert.equal(r1.status, 'completed');
    const calls = r1.output.filter((o) => o.type === 'function_call');
    assert.equal(calls.length, 1, JSON.stringify(r1.output));
    assert.equal(calls[0].name, 'get_weather');
    assert.equal(calls[0].call_id, 'call_w1');
    assert.match(calls[0].id, /^fc_/);
    assert.deepEqual(JSON.parse(calls[0].arguments), { city: 'Paris' });
    assert.equal(r1.output_text, '');
    let sent = (await upstreamRequests(prompt)).at(-1);
    assert.equal(sent.tools[0].function.name, 'get_weather');
    assert.deepEqual(sent.tools[0].function.parameters, WEATHER.parameters);

    const r2 = await client.responses.create({
      model: MODEL,
      previous_response_id: r1.id,
      tools: [WEATHER],
      input: [{ type: 'function_call_output', call_id: calls[0].call_id, output: 'sunny, 24C' }],
    });
    assert.equal(r2.status, 'completed');
    assert.equal(r2.output_text, 'It is sunny in Paris.');
    assert.equal(r2.previous_response_id, r1.id);
    const reqs = await upstreamRequests(prompt);
    assert.equal(reqs.length, 2);
    const msgs = reqs[1].messages;
    assert.deepEqual(msgs.map((m) => m.role), ['user', 'assistant', 'tool']);
    assert.equal(msgs[1].tool_calls[0].id, 'call_w1');
    assert.equal(msgs[1].tool_calls[0].function.name, 'get_weather');
    assert.deepEqual(JSON.parse(msgs[1].tool_calls[0].function.arguments), { city: 'Paris' });
    assert.equal(msgs[2].tool_call_id, 'call_w1');
    assert.equal(msgs[2].content, 'sunny, 24C');
  });

  test('a streamed function call: argument deltas and the done item', async () => {
    const prompt = await script([
      { tool_calls: [{ name: 'get_weather', arguments: '{"city": "Oslo"}', id: 'call_s1' }], finish: 'tool_calls' },
    ]);
    const stream = await client.responses.create({ model: MODEL, input: prompt, tools: [WEATHER], stream: true });
    const events = [];
    for await (const ev of stream) events.push(ev);
    const args = events.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e.delta).join('');
    assert.deepEqual(JSON.parse(args), { city: 'Oslo' });
    const argsDone = events.filter((e) => e.type === 'response.function_call_arguments.done');
    assert.equal(argsDone.length, 1);
    assert.equal(argsDone[0].arguments, args);
    const items = events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item);
    const call = items.find((i) => i.type === 'function_call');
    assert.ok(call, JSON.stringify(items));
    assert.equal(call.call_id, 'call_s1');
    assert.equal(call.name, 'get_weather');
    assert.equal(events.at(-1).type, 'response.completed');
  });
});

describe('responses: stored state', () => {
  test('retrieve, input_items.list, delete; then retrieve is a NotFoundError', async () => {
    const prompt = await script([{ content: 'Stored.' }]);
    const r = await client.responses.create({
      model: MODEL,
      input: [{ role: 'user', content: 'first' }, { role: 'user', content: prompt }],
    });
    const got = await client.responses.retrieve(r.id);
    assert.equal(got.id, r.id);
    assert.equal(got.status, 'completed');
    assert.equal(got.output_text, 'Stored.');

    const items = await client.responses.inputItems.list(r.id);
    assert.deepEqual(items.data.map((i) => i.content[0].text), [prompt, 'first']); // newest first
    assert.ok(items.data.every((i) => i.type === 'message' && /^msg_/.test(i.id)), JSON.stringify(items.data));
    const asc = await client.responses.inputItems.list(r.id, { order: 'asc', limit: 1 });
    assert.deepEqual(asc.data.map((i) => i.content[0].text), ['first']);
    assert.equal(asc.has_more, true);
    // the SDK's cursor pagination walks to the end
    const all = [];
    for await (const item of client.responses.inputItems.list(r.id, { order: 'asc', limit: 1 })) all.push(item.content[0].text);
    assert.deepEqual(all, ['first', prompt]);

    await client.responses.delete(r.id);
    const err = await rejection(client.responses.retrieve(r.id));
    assert.ok(err instanceof OpenAI.NotFoundError, `expected NotFoundError, got ${err?.constructor?.name}: ${err}`);
    assert.equal(err.status, 404);
    const again = await rejection(client.responses.delete(r.id));
    assert.ok(again instanceof OpenAI.NotFoundError, `${again}`);
    const chained = await rejection(client.responses.create({ model: MODEL, input: 'again', previous_response_id: r.id }));
    assert.ok(chained instanceof OpenAI.NotFoundError, `${chained}`);
  });

  test('a bad request is a BadRequestError with param', async () => {
    const err = await rejection(client.responses.create({ model: MODEL, input: 'hi', temperature: 3 }));
    assert.ok(err instanceof OpenAI.BadRequestError, `${err}`);
    assert.equal(err.status, 400);
    assert.equal(err.param, 'temperature');
    assert.equal(err.type, 'invalid_request_error');
  });
});

describe('responses: approvals', () => {
  test('mcp_approval_request, then mcp_approval_response approve:true runs python', async () => {
    const prompt = await script([
      { tool_calls: [{ name: 'python', arguments: JSON.stringify({ code: 'print(6*7)' }), id: 'call_node_py1' }], finish: 'tool_calls' },
      { content: 'The answer is 42.' },
    ]);
    const r1 = await client.responses.create({
      model: MODEL,
      input: prompt,
      // warden's own fields: the JS SDK sends unknown body keys as they are
      enable_tools: true,
      enabled_tools: ['python'],
      permission_mode: 'ask',
    });
    assert.equal(r1.status, 'completed');
    const asks = r1.output.filter((o) => o.type === 'mcp_approval_request');
    assert.equal(asks.length, 1, JSON.stringify(r1.output));
    assert.equal(asks[0].name, 'python');
    assert.equal(asks[0].server_label, 'warden');
    assert.match(asks[0].id, /^mcpr_/);
    assert.deepEqual(JSON.parse(asks[0].arguments), { code: 'print(6*7)' });
    assert.equal((await upstreamRequests(prompt)).length, 1, 'nothing ran before the answer');

    const r2 = await client.responses.create({
      model: MODEL,
      previous_response_id: r1.id,
      input: [{ type: 'mcp_approval_response', approval_request_id: asks[0].id, approve: true }],
    });
    assert.equal(r2.status, 'completed');
    const mcp = r2.output.filter((o) => o.type === 'mcp_call');
    assert.equal(mcp.length, 1, JSON.stringify(r2.output));
    assert.equal(mcp[0].name, 'python');
    assert.match(mcp[0].output, /42/);
    assert.equal(r2.output_text, 'The answer is 42.');
    const msgs = (await upstreamRequests(prompt)).at(-1).messages;
    // warden's loop adds its prompt nudge (agent/loop_guidance.h) as a system message
    assert.deepEqual(msgs.map((m) => m.role), ['system', 'user', 'assistant', 'tool']);
    assert.match(msgs[0].content, /^The current date is /);
    assert.match(msgs[3].content, /42/);
  });
});

describe('legacy endpoints', () => {
  test('completions.create, not streamed and streamed', async () => {
    const r = await client.completions.create({ model: 'm', prompt: 'Once', max_tokens: 9 });
    assert.equal(r.object, 'text_completion');
    assert.equal(r.choices[0].text, COMPLETION_TEXT);
    assert.equal(r.choices[0].finish_reason, 'length');
    assert.equal(r.usage.total_tokens, 11);
    const before = (await stats()).legacy_requests.length;
    let text = '';
    let finish = null;
    for await (const chunk of await client.completions.create({ model: 'm', prompt: 'Once', max_tokens: 9, stream: true })) {
      text += chunk.choices[0]?.text ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(text, COMPLETION_TEXT);
    assert.equal(finish, 'length');
    const sent = (await stats()).legacy_requests.slice(before);
    assert.equal(sent.length, 1);
    assert.equal(sent[0].path, '/v1/completions');
    assert.equal(sent[0].body.stream, true);
  });

  test('embeddings.create, float: one vector per input, the fake\'s values', async () => {
    const inputs = ['The sea is blue.', 'Taxes are due.'];
    const r = await client.embeddings.create({ model: 'm', input: inputs, encoding_format: 'float' });
    assert.equal(r.object, 'list');
    assert.deepEqual(r.data.map((d) => d.index), [0, 1]);
    for (const [i, d] of r.data.entries()) {
      assert.equal(d.object, 'embedding');
      assert.equal(d.embedding.length, EMBED_DIM);
      assert.deepEqual(d.embedding, fakeEmbedding(inputs[i]));
    }
    assert.ok(r.usage.prompt_tokens > 0);
  });

  test('embeddings.create with the SDK\'s default (base64, decoded by the SDK) gives the same floats', async () => {
    const r = await client.embeddings.create({ model: 'm', input: 'The sea is blue.' });
    assert.equal(r.data.length, 1);
    assert.deepEqual(Array.from(r.data[0].embedding), fakeEmbedding('The sea is blue.'));
  });
});

// Tool calls a model writes as text (engine/healing.h) reach the client's own tools as
// structured calls: two Hermes calls with CJK and escaped quotes, split into 3-character chunks.
describe('calls written as text are healed', () => {
  const TOOLS = ['get-weather', 'search.web_query'];
  const TEXT = 'Let me check.\n<tool_call>\n{"name": "get-weather", "arguments": {"city": "東京", "note": "say \\"hi\\""}}\n</tool_call>\n' +
    '<tool_call>\n{"name": "search.web_query", "arguments": {"q": "天気 \\"today\\"", "opts": {"n": 2}}}\n</tool_call>';
  const WANT = [['get-weather', { city: '東京', note: 'say "hi"' }], ['search.web_query', { q: '天気 "today"', opts: { n: 2 } }]];
  const chatTools = TOOLS.map((name) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: {} } } }));

  test('chat, not streamed: two tool_calls, no markup in the text', async () => {
    const prompt = await script([{ content: TEXT, piece: 3 }]);
    const r = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: prompt }], tools: chatTools });
    const m = r.choices[0].message;
    assert.equal(r.choices[0].finish_reason, 'tool_calls');
    assert.equal(m.content.trim(), 'Let me check.');
    assert.deepEqual(m.tool_calls.map((t) => [t.function.name, JSON.parse(t.function.arguments)]), WANT);
    assert.equal(new Set(m.tool_calls.map((t) => t.id)).size, 2);
  });

  test('chat, streamed: the same calls by index', async () => {
    const prompt = await script([{ content: TEXT, piece: 3 }]);
    const stream = await client.chat.completions.create({
      model: MODEL, messages: [{ role: 'user', content: prompt }], tools: chatTools, stream: true,
    });
    let text = '';
    let finish = null;
    const calls = {};
    for await (const ch of stream) {
      if (!ch.choices?.length) continue;
      const d = ch.choices[0].delta;
      text += d.content ?? '';
      for (const t of d.tool_calls ?? []) {
        const c = (calls[t.index] ??= { name: '', args: '' });
        c.name += t.function?.name ?? '';
        c.args += t.function?.arguments ?? '';
      }
      finish = ch.choices[0].finish_reason ?? finish;
    }
    assert.equal(finish, 'tool_calls');
    assert.ok(!text.includes('<tool_call>'), text);
    assert.deepEqual(Object.values(calls).map((c) => [c.name, JSON.parse(c.args)]), WANT);
  });

  test('responses: two completed function_call items', async () => {
    const prompt = await script([{ content: TEXT, piece: 3 }]);
    const r = await client.responses.create({
      model: MODEL, input: prompt,
      tools: TOOLS.map((name) => ({ type: 'function', name, parameters: { type: 'object', properties: {} } })),
    });
    const calls = r.output.filter((o) => o.type === 'function_call');
    assert.deepEqual(calls.map((c) => [c.name, JSON.parse(c.arguments)]), WANT);
    assert.ok(calls.every((c) => c.status === 'completed'));
    assert.ok(!r.output_text.includes('<tool_call>'), r.output_text);
  });
});
