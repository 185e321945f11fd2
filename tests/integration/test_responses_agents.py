"""The Responses surface driven by the OpenAI Agents SDK (`openai-agents`, pinned in
tests/requirements.txt), unchanged: an Agent with one @function_tool on OpenAIResponsesModel, run
to a final answer by Runner.run and Runner.run_streamed against warden in front of the scripted
fake upstream (turn 1: the model calls get_weather; turn 2: it answers in text).

Each test checks what the agent returned, that the tool ran with the model's arguments, what the
SDK sent warden (recorded by an httpx event hook) and what warden sent the model (GET /stats on
the fake). Tracing is disabled so nothing tries to reach the network."""
import asyncio
import json
import uuid

from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled
from openai import AsyncOpenAI, DefaultAsyncHttpxClient

from conftest import request, on_fake

MODEL = "gpt-5"  # any name: warden serves its one model
WEATHER = "Sunny, 24 degrees C, light wind from the west"  # the tool's answer; must reach the model

set_tracing_disabled(True)


WARDEN = on_fake("--sse-ping-interval", "600000")  # the module's `warden` fixture (conftest.py)


def script(fake, turns):
    name = "agents-" + uuid.uuid4().hex[:10]
    st, _, _ = request(fake.port, "POST", "/script", {"name": name, "turns": turns})
    assert st == 200
    return f"scenario:script:{name}"


def upstream_requests(fake, prompt):
    _, _, body = request(fake.port, "GET", "/stats")
    reqs = json.loads(body)["requests"]
    return [r for r in reqs if any(m.get("role") == "user" and m.get("content") == prompt for m in r.get("messages", []))]


def make_agent(warden, calls):
    """An agent whose get_weather records its calls; the SDK's requests to warden go to `sent`."""
    sent = []

    async def record(req):
        if req.method == "POST":
            sent.append({"path": req.url.path, "body": json.loads(req.content or b"{}")})

    http = DefaultAsyncHttpxClient(event_hooks={"request": [record]}, timeout=60)
    client = AsyncOpenAI(base_url=warden.base + "/v1", api_key="unused", max_retries=0, http_client=http)

    @function_tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city.

        Args:
            city: The city's name.
        """
        calls.append(city)
        return WEATHER

    agent = Agent(name="Weather agent", instructions="Answer weather questions with the get_weather tool.",
                  tools=[get_weather], model=OpenAIResponsesModel(model=MODEL, openai_client=client))
    return agent, sent, http


def turns():
    return [
        {"tool_calls": [{"name": "get_weather", "arguments": '{"city": "Paris"}', "id": "call_agent_w1"}],
         "finish": "tool_calls"},
        {"content": "It is sunny in Paris, 24 degrees."},
    ]


def check_what_reached_the_model(fake, prompt, sent):
    # two calls to warden: the first turn, then the turn with the tool's output
    assert [s["path"] for s in sent] == ["/v1/responses", "/v1/responses"], sent
    first = sent[0]["body"]
    assert first["tools"][0]["type"] == "function" and first["tools"][0]["name"] == "get_weather"
    reqs = upstream_requests(fake, prompt)
    assert len(reqs) == 2, reqs
    # the tool definition reached the model
    assert reqs[0]["tools"][0]["function"]["name"] == "get_weather"
    assert "city" in reqs[0]["tools"][0]["function"]["parameters"]["properties"]
    msgs = reqs[1]["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool"], msgs
    assert msgs[0]["content"] == "Answer weather questions with the get_weather tool."
    assert msgs[2]["tool_calls"][0]["id"] == "call_agent_w1"
    assert msgs[2]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert json.loads(msgs[2]["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert msgs[3]["tool_call_id"] == "call_agent_w1"
    assert msgs[3]["content"] == WEATHER


def test_runner_run_tool_then_answer(warden, fake_upstream):
    prompt = script(fake_upstream, turns())
    calls = []

    async def run():
        agent, sent, http = make_agent(warden, calls)
        try:
            return await Runner.run(agent, prompt, max_turns=4), sent
        finally:
            await http.aclose()

    result, sent = asyncio.run(run())
    assert result.final_output == "It is sunny in Paris, 24 degrees."
    assert calls == ["Paris"]
    kinds = [i.type for i in result.new_items]
    assert kinds == ["tool_call_item", "tool_call_output_item", "message_output_item"], kinds
    assert result.new_items[1].output == WEATHER
    assert len(result.raw_responses) == 2
    assert all(r.response_id and r.response_id.startswith("resp_") for r in result.raw_responses)
    assert result.context_wrapper.usage.requests == 2
    assert result.context_wrapper.usage.input_tokens > 0 and result.context_wrapper.usage.output_tokens > 0
    assert all(s["body"].get("stream") in (None, False) for s in sent)
    check_what_reached_the_model(fake_upstream, prompt, sent)


def test_runner_run_streamed_tool_then_answer(warden, fake_upstream):
    prompt = script(fake_upstream, turns())
    calls = []
    deltas, items = [], []

    async def run():
        agent, sent, http = make_agent(warden, calls)
        try:
            result = Runner.run_streamed(agent, prompt, max_turns=4)
            async for ev in result.stream_events():
                if ev.type == "raw_response_event" and ev.data.type == "response.output_text.delta":
                    deltas.append(ev.data.delta)
                elif ev.type == "run_item_stream_event":
                    items.append(ev.item.type)
            return result, sent
        finally:
            await http.aclose()

    result, sent = asyncio.run(run())
    assert result.final_output == "It is sunny in Paris, 24 degrees."
    assert "".join(deltas) == "It is sunny in Paris, 24 degrees."
    assert calls == ["Paris"]
    assert items == ["tool_call_item", "tool_call_output_item", "message_output_item"], items
    assert all(s["body"].get("stream") is True for s in sent)
    check_what_reached_the_model(fake_upstream, prompt, sent)


def test_runner_continues_with_previous_response_id(warden, fake_upstream):
    """A second run that sends only its new input and the first run's last_response_id: warden
    rebuilds the conversation from what it stored."""
    prompt = script(fake_upstream, turns())
    prompt2 = script(fake_upstream, [{"content": "Still sunny."}])
    calls = []

    async def run():
        agent, sent, http = make_agent(warden, calls)
        try:
            first = await Runner.run(agent, prompt, max_turns=4)
            second = await Runner.run(agent, prompt2, previous_response_id=first.last_response_id, max_turns=4)
            return first, second, sent
        finally:
            await http.aclose()

    first, second, sent = asyncio.run(run())
    assert first.final_output == "It is sunny in Paris, 24 degrees."
    assert second.final_output == "Still sunny."
    assert calls == ["Paris"]
    last = sent[-1]["body"]
    assert last["previous_response_id"] == first.last_response_id
    assert last["input"] == [{"content": prompt2, "role": "user"}], last["input"]
    msgs = upstream_requests(fake_upstream, prompt2)[-1]["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "assistant", "user"], msgs
    assert msgs[1]["content"] == prompt and msgs[3]["content"] == WEATHER
    assert msgs[4]["content"] == "It is sunny in Paris, 24 degrees." and msgs[5]["content"] == prompt2


# --- warden's own tools through the SDK's HostedMCPTool ------------------------------------------

import pytest  # noqa: E402
from agents import HostedMCPTool  # noqa: E402


@pytest.mark.parametrize("approve", [True, False])
def test_hosted_mcp_tool_answers_wardens_approval(warden, fake_upstream, approve):
    """A hosted `mcp` tool naming warden switches warden's tools on; warden's mcp_approval_request
    reaches the SDK's on_approval_request, and the SDK's mcp_approval_response (sent with the
    whole history, not chained) resolves it: allow runs python once, deny declines."""
    prompt = script(fake_upstream, [
        {"tool_calls": [{"name": "python", "arguments": json.dumps({"code": "print(6*7)"}), "id": "call_h1"}],
         "finish": "tool_calls"},
        {"content": "Done."}])
    asked = []

    def on_approval(req):
        asked.append((req.data.name, json.loads(req.data.arguments)))
        return {"approve": approve, **({} if approve else {"reason": "not now"})}

    async def run():
        sent = []

        async def record(r):
            if r.method == "POST":
                sent.append(json.loads(r.content or b"{}"))

        http = DefaultAsyncHttpxClient(event_hooks={"request": [record]}, timeout=60)
        client = AsyncOpenAI(base_url=warden.base + "/v1", api_key="unused", max_retries=0, http_client=http)
        tool = HostedMCPTool(tool_config={"type": "mcp", "server_label": "warden", "server_url": "http://warden.invalid",
                                          "require_approval": "always", "allowed_tools": ["python"]},
                             on_approval_request=on_approval)
        agent = Agent(name="Calc", instructions="Use python.", tools=[tool],
                      model=OpenAIResponsesModel(model=MODEL, openai_client=client))
        try:
            return await Runner.run(agent, prompt, max_turns=4), sent
        finally:
            await http.aclose()

    result, sent = asyncio.run(run())
    assert asked == [("python", {"code": "print(6*7)"})]
    assert result.final_output == "Done."
    assert len(sent) == 2 and "previous_response_id" not in sent[1], sent[1].keys()  # the history, resent
    answers = [i for i in sent[1]["input"] if i.get("type") == "mcp_approval_response"]
    assert len(answers) == 1 and answers[0]["approve"] is approve
    reqs = upstream_requests(fake_upstream, prompt)
    assert len(reqs) == 2
    tool_msg = reqs[1]["messages"][-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_h1"
    if approve:
        assert tool_msg["content"].startswith("42\n")  # ran once, in warden's sandbox
    else:
        assert tool_msg["content"] == "The user declined to run this tool call."
