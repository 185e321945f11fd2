// Vercel's AI SDK (`ai` with `@ai-sdk/anthropic`, pinned in tests/node/package.json) against warden
// on the real default model: generateObject sends `output_config.format` (a JSON schema) on
// /v1/messages, warden constrains the answer to it (a grammar on llama-server), and the SDK parses
// the object. Run by tests/e2e/test_ai_sdk_real.py, which starts warden and sets WARDEN_BASE.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createAnthropic } from '@ai-sdk/anthropic';
import { generateObject } from 'ai';
import { z } from 'zod';

const BASE = process.env.WARDEN_BASE;
if (!BASE) throw new Error('WARDEN_BASE is not set (run this through tests/e2e/test_ai_sdk_real.py)');
globalThis.AI_SDK_LOG_WARNINGS = false;

test('generateObject returns a parsed object that matches the schema', async () => {
  const anthropic = createAnthropic({ baseURL: `${BASE}/v1`, apiKey: 'unused' });
  const { object } = await generateObject({
    model: anthropic('claude-sonnet-4-5'),
    schema: z.object({ name: z.string(), age: z.number() }),
    prompt: 'Give the name and age of Alice, who is 30.',
    maxOutputTokens: 200,
    // Greedy: at the default temperature the 135M model sometimes spells a name for 200 tokens
    // ("J.S.N.N.S.E.M.A.I.A…", cut by max_tokens: no object), one run in a few.
    temperature: 0,
  });
  assert.equal(typeof object.name, 'string');
  assert.equal(typeof object.age, 'number');
});
