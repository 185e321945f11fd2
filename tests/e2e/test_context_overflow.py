"""End to end: context overflow policies (issue 27 §6) on the real llama-server and default model,
loaded with a 1024-token context and one slot, on every surface: OpenAI chat (stream, non-stream,
the tool loop), Anthropic Messages (the official SDK and the raw stream) and Responses. A
conversation of ~2,000 tokens with a tool-call group in its middle does not fit:
  - `error` (the default) is a 400 context_length_exceeded naming both counts;
  - truncate_oldest / truncate_middle answer, with a `context_truncated` report listing what went;
    system messages and the last user turn stay, a tool call and its result go together, and the
    prompt that was sent is the size the report says (the model's own token count, usage)."""
import json

import pytest

from conftest import anthropic_client, openai_client, request, sse_frames, warden_on_model

N_CTX = 1024
FILLER = ("The lighthouse keeper wrote down the weather, the ships that passed, the colour of the sea "
          "and the birds on the rocks, every hour of every day, in a book that nobody ever read. ")


@pytest.fixture(scope="module")
def w():
    w = warden_on_model("--ctx", str(N_CTX), "--parallel", "1")
    yield w
    w.stop()


def openai_conversation():
    """system, 6 exchanges of ~160 tokens (exchange 3 holds a tool call and its result), last question."""
    msgs = [{"role": "system", "content": "You are terse."}]
    for i in range(6):
        msgs.append({"role": "user", "content": f"Note {i}: " + FILLER * 5})
        if i == 3:
            msgs.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_7", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "tide"}'}}]})
            msgs.append({"role": "tool", "tool_call_id": "call_7", "content": "High tide at 6. " + FILLER})
        msgs.append({"role": "assistant", "content": f"Noted {i}."})
    msgs.append({"role": "user", "content": "What is 2 + 2? Answer with one number."})
    return msgs


TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "Looks a word up.",
                                           "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]


def post(w, path, body, headers=None):
    st, _, raw = request(w.port, "POST", path, body, headers=headers, timeout=300)
    return st, raw


def check_report(t, msgs, policy):
    """The report's shape and the rules: system and the last user turn stay; tool groups whole."""
    assert t["policy"] == policy
    assert t["n_ctx"] == N_CTX
    assert t["prompt_tokens_before"] > N_CTX >= t["prompt_tokens_after"] > 0
    assert t["dropped_messages"] == len(t["dropped"]) > 0
    idx = [d["index"] for d in t["dropped"]]
    assert 0 not in idx, "the system message was dropped"
    assert len(msgs) - 1 not in idx, "the last user turn was dropped"
    for d in t["dropped"]:
        assert d["role"] == msgs[d["index"]]["role"]
    calls = {c for d in t["dropped"] if d["role"] == "assistant" for c in d.get("tool_call_ids", [])}
    results = {c for d in t["dropped"] if d["role"] == "tool" for c in d.get("tool_call_ids", [])}
    assert calls == results, f"a tool-call group was split: calls {calls}, results {results}"
    return idx


def test_error_policy_is_a_400_with_the_counts_on_every_surface(w):
    st, raw = post(w, "/v1/chat/completions", {"model": "m", "max_tokens": 4, "messages": openai_conversation()})
    assert st == 400, raw
    err = json.loads(raw)["error"]
    assert err["code"] == "context_length_exceeded" and err["param"] == "messages"
    assert f"context size is {N_CTX} tokens" in err["message"] and "prompt tokens" in err["message"]
    assert "truncate_oldest" in err["message"]  # says what to do

    st, raw = post(w, "/v1/messages", {"model": "m", "max_tokens": 4, "system": "You are terse.",
                                       "messages": [{"role": "user", "content": FILLER * 30}]},
                   headers={"anthropic-version": "2023-06-01"})
    assert st == 400, raw
    body = json.loads(raw)
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert f"context size is {N_CTX} tokens" in body["error"]["message"]

    st, raw = post(w, "/v1/responses", {"model": "m", "max_output_tokens": 16, "input": FILLER * 30})
    assert st == 400, raw
    err = json.loads(raw)["error"]
    assert err["code"] == "context_length_exceeded" and err["param"] == "input", err
    assert f"context size is {N_CTX} tokens" in err["message"]


def test_openai_stream_truncate_oldest_reports_and_sends_what_it_says(w):
    msgs = openai_conversation()
    st, raw = post(w, "/v1/chat/completions", {"model": "m", "max_tokens": 8, "temperature": 0, "stream": True,
                                               "stream_options": {"include_usage": True}, "tools": TOOLS,
                                               "context_overflow": "truncate_oldest", "messages": msgs})
    assert st == 200, raw
    chunks = [json.loads(d) for k, d in sse_frames(raw) if k == "data" and d != "[DONE]"]
    reports = [c for c in chunks if "context_truncated" in c]
    assert len(reports) == 1, chunks[:3]
    assert reports[0]["choices"] == [] and reports[0]["object"] == "chat.completion.chunk"
    t = reports[0]["context_truncated"]
    idx = check_report(t, msgs, "truncate_oldest")
    assert min(idx) == 1, "truncate_oldest starts with the oldest exchange"
    assert all(i + 1 in idx or msgs[i + 1]["role"] == "user" or i + 1 == len(msgs) - 1 for i in idx)  # whole exchanges
    usage = [c["usage"] for c in chunks if c.get("usage")][-1]
    assert usage["prompt_tokens"] == t["prompt_tokens_after"], (usage, t)  # the model's own count
    answer = [i for i, c in enumerate(chunks) if c.get("choices") and (c["choices"][0]["delta"].get("content") or
                                                                        c["choices"][0]["finish_reason"])]
    assert chunks.index(reports[0]) < answer[0]  # before the answer
    assert any(c["choices"][0]["finish_reason"] for c in chunks if c.get("choices"))


def test_openai_sdk_truncate_middle_keeps_the_opening_exchange(w):
    msgs = openai_conversation()
    c = openai_client(w)
    r = c.chat.completions.create(model="m", max_tokens=8, temperature=0, messages=msgs, tools=TOOLS,
                                  extra_body={"context_overflow": "truncate_middle"})
    t = r.model_extra["context_truncated"]
    idx = check_report(t, msgs, "truncate_middle")
    assert 1 not in idx and 2 not in idx, "the opening exchange stays while others can go"
    assert min(idx) == 3
    assert r.usage.prompt_tokens == t["prompt_tokens_after"]
    assert r.choices[0].finish_reason in ("stop", "length", "tool_calls")


def test_tool_loop_turns_are_fitted_too(w):
    msgs = openai_conversation()
    st, raw = post(w, "/v1/chat/completions", {"model": "m", "max_tokens": 8, "temperature": 0, "stream": True,
                                               "enable_tools": True, "enabled_tools": ["python"],
                                               "context_overflow": "truncate_oldest", "messages": msgs})
    assert st == 200, raw
    chunks = [json.loads(d) for k, d in sse_frames(raw) if k == "data" and d != "[DONE]"]
    reports = [c["context_truncated"] for c in chunks if "context_truncated" in c]
    assert reports, [c for c in chunks][:5]
    check_report(reports[0], msgs, "truncate_oldest")
    assert not any("error" in c for c in chunks), chunks[-3:]


def anthropic_conversation():
    msgs = []
    for i in range(6):
        msgs.append({"role": "user", "content": f"Note {i}: " + FILLER * 5})
        if i == 3:
            msgs.append({"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_7", "name": "lookup", "input": {"q": "tide"}}]})
            msgs.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_7", "content": "High tide at 6. " + FILLER}]})
        msgs.append({"role": "assistant", "content": f"Noted {i}."})
    msgs.append({"role": "user", "content": "What is 2 + 2? Answer with one number."})
    return msgs


ANTHROPIC_TOOLS = [{"name": "lookup", "description": "Looks a word up.",
                    "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}}]


def check_anthropic_report(t, policy):
    assert t["policy"] == policy and t["n_ctx"] == N_CTX
    assert t["prompt_tokens_before"] > N_CTX >= t["prompt_tokens_after"]
    roles = [d["role"] for d in t["dropped"]]
    assert "system" not in roles
    calls = {c for d in t["dropped"] if d["role"] == "assistant" for c in d.get("tool_call_ids", [])}
    results = {c for d in t["dropped"] if d["role"] == "tool" for c in d.get("tool_call_ids", [])}
    assert calls == results


def test_anthropic_sdk_and_stream_truncate(w):
    c = anthropic_client(w)
    m = c.messages.create(model="m", max_tokens=8, system="You are terse.", messages=anthropic_conversation(),
                          tools=ANTHROPIC_TOOLS, extra_body={"context_overflow": "truncate_oldest"})
    t = m.model_extra["context_truncated"] if hasattr(m, "model_extra") and m.model_extra else m.to_dict()["context_truncated"]
    check_anthropic_report(t, "truncate_oldest")
    assert m.usage.input_tokens == t["prompt_tokens_after"]
    assert m.stop_reason in ("end_turn", "max_tokens", "tool_use")

    # The SDK's stream reads past warden's extra event; the raw stream shows it after message_start.
    with c.messages.stream(model="m", max_tokens=8, system="You are terse.", messages=anthropic_conversation(),
                           extra_body={"context_overflow": "truncate_middle"}) as s:
        final = s.get_final_message()
    assert final.stop_reason in ("end_turn", "max_tokens")
    st, raw = post(w, "/v1/messages", {"model": "m", "max_tokens": 8, "stream": True, "system": "You are terse.",
                                       "messages": anthropic_conversation(), "context_overflow": "truncate_middle"},
                   headers={"anthropic-version": "2023-06-01"})
    assert st == 200, raw
    events = [b.split("\n", 1)[0][len("event: "):] for b in raw.decode().split("\n\n") if b.startswith("event: ")]
    assert events[0] == "message_start" and events[1] == "context_truncated" and events[-1] == "message_stop", events
    data = [json.loads(b.split("data: ", 1)[1]) for b in raw.decode().split("\n\n") if b.startswith("event: context_truncated")]
    check_anthropic_report(data[0], "truncate_middle")


def responses_conversation():
    items = []
    for i in range(6):
        items.append({"role": "user", "content": f"Note {i}: " + FILLER * 5})
        if i == 3:
            items.append({"type": "function_call", "call_id": "call_7", "name": "lookup", "arguments": '{"q": "tide"}'})
            items.append({"type": "function_call_output", "call_id": "call_7", "output": "High tide at 6. " + FILLER})
        items.append({"role": "assistant", "content": f"Noted {i}."})
    items.append({"role": "user", "content": "What is 2 + 2? Answer with one number."})
    return items


RESPONSES_TOOLS = [{"type": "function", "name": "lookup", "description": "Looks a word up.",
                    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}]


def test_responses_truncation_auto_and_context_overflow(w):
    st, raw = post(w, "/v1/responses", {"model": "m", "max_output_tokens": 16, "stream": True, "truncation": "auto",
                                        "instructions": "You are terse.", "input": responses_conversation(),
                                        "tools": RESPONSES_TOOLS})
    assert st == 200, raw
    events = [json.loads(d) for k, d in sse_frames(raw) if k == "data"]
    trunc = [e for e in events if e["type"] == "context_truncated"]
    assert len(trunc) == 1, [e["type"] for e in events]
    assert trunc[0]["policy"] == "truncate_middle"
    calls = {c for d in trunc[0]["dropped"] if d["role"] == "assistant" for c in d.get("tool_call_ids", [])}
    assert calls == {c for d in trunc[0]["dropped"] if d["role"] == "tool" for c in d.get("tool_call_ids", [])}
    done = [e for e in events if e["type"] in ("response.completed", "response.incomplete")]
    assert done and done[0]["response"]["truncation"] == "auto"
    assert done[0]["response"]["context_truncated"]["prompt_tokens_after"] == trunc[0]["prompt_tokens_after"]

    c = openai_client(w)
    r = c.responses.create(model="m", max_output_tokens=16, input=responses_conversation(), tools=RESPONSES_TOOLS,
                           extra_body={"context_overflow": "truncate_oldest"})
    t = r.model_extra["context_truncated"]
    assert t["policy"] == "truncate_oldest" and t["prompt_tokens_after"] <= N_CTX
    assert r.usage.input_tokens == t["prompt_tokens_after"]
    assert r.truncation == "auto"  # the response says it may truncate, whichever field asked


def test_a_last_turn_that_cannot_fit_and_a_bad_policy_are_clear_errors(w):
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"},
            {"role": "user", "content": FILLER * 30}]
    st, raw = post(w, "/v1/chat/completions", {"model": "m", "max_tokens": 4, "messages": msgs,
                                               "context_overflow": "truncate_oldest"})
    assert st == 400, raw
    err = json.loads(raw)["error"]
    assert err["code"] == "context_length_exceeded" and "last user turn" in err["message"], err
    st, raw = post(w, "/v1/chat/completions", {"model": "m", "messages": msgs, "context_overflow": "squeeze"})
    assert st == 400 and json.loads(raw)["error"]["param"] == "context_overflow", raw
    st, raw = post(w, "/v1/responses", {"model": "m", "input": "hi", "truncation": "sometimes"})
    assert st == 400 and json.loads(raw)["error"]["param"] == "truncation", raw
    # The server keeps serving after all of it.
    st, raw = post(w, "/v1/chat/completions", {"model": "m", "max_tokens": 4,
                                               "messages": [{"role": "user", "content": "Say hi."}]})
    assert st == 200, raw


def test_any_length_with_a_short_last_turn_fits(w):
    """The newcomer's and the breaker's finding: at some sizes the fit gave up after a few exchanges
    and said nothing more could go. Every size must fit now, both policies."""
    for n, max_tokens, policy in ((18, 16, "truncate_oldest"), (23, 16, "truncate_middle"), (21, 8, "truncate_oldest"),
                                  (17, None, "truncate_middle")):
        msgs = [{"role": "system", "content": "You are terse."}]
        for i in range(n):
            msgs += [{"role": "user", "content": f"Note {i}: " + FILLER * (1 + i % 2)},
                     {"role": "assistant", "content": f"Noted {i}."}]
        msgs.append({"role": "user", "content": "What is the capital of France?"})
        body = {"model": "m", "temperature": 0, "messages": msgs, "context_overflow": policy}
        if max_tokens:
            body["max_tokens"] = max_tokens
        else:
            body["n_predict"] = 8  # llama.cpp's own limit: warden keeps its default reserve, the answer stays short
        st, raw = post(w, "/v1/chat/completions", body)
        assert st == 200, (n, max_tokens, policy, raw[:400])
        r = json.loads(raw)
        t = r["context_truncated"]
        check_report(t, msgs, policy)
        assert r["usage"]["prompt_tokens"] == t["prompt_tokens_after"]


def test_an_anthropic_message_of_tool_results_and_text_is_dropped_whole(w):
    msgs = []
    for i in range(8):
        msgs += [{"role": "user", "content": f"Q{i}: " + FILLER * 2},
                 {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "lookup", "input": {"q": "x"}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "res " + FILLER},
                                              {"type": "text", "text": f"TXT{i} and also"}]},
                 {"role": "assistant", "content": f"ok{i}"}]
    msgs.append({"role": "user", "content": "last?"})
    st, raw = post(w, "/v1/messages", {"model": "m", "max_tokens": 8, "system": "S", "messages": msgs, "tools": ANTHROPIC_TOOLS,
                                       "context_overflow": "truncate_oldest"}, headers={"anthropic-version": "2023-06-01"})
    assert st == 200, raw
    t = json.loads(raw)["context_truncated"]
    previews = [d["preview"] for d in t["dropped"]]
    for i in range(8):
        dropped_result = any(d["role"] == "tool" and f"t{i}" in d.get("tool_call_ids", []) for d in t["dropped"])
        dropped_text = any(p.startswith(f"TXT{i} ") for p in previews)
        assert dropped_result == dropped_text, (i, t["dropped"])
