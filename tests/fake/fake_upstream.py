"""A scripted OpenAI-compatible upstream for warden's integration tests.

It stands in for llama-server where the real one is hard to drive: it replays the recording of a
real llama-server stream (tests/golden/llama_server_stream.sse, checked against the live server by
tests/e2e/test_recording_matches_real.py), and it can stall, crash, send malformed frames or
errors on cue. The scenario is chosen by the last user message: "scenario:<name>".

Scenarios (streaming unless noted):
  replay      the golden recording, one frame per write (default)
  stall       role chunk, then silence for 1.2 s, then content, finish, [DONE]
  crash       two frames, then the connection is cut mid-body (no [DONE], no last chunk)
  malformed   one frame, then `data: {not json`
  error       one frame, then an in-band {"error":{...}} frame like llama-server's
  http400     400 with llama-server's error body (also non-streaming)
  http500     500 with a plain-text body (also non-streaming)
  http503     503 with llama-server's "Loading model" error body (also non-streaming)
  http401_echo 401 quoting the request's Authorization header, as a hosted provider refusing a key does
  http429     429 with Retry-After: 7 and OpenAI's rate-limit error body (also non-streaming)
  endless     a content frame every 20 ms until the client goes away (counts disconnects)
  hang        no answer at all for 60 s (streaming or not)
  script:NAME a scripted model: POST /script {"name": NAME, "turns": [turn, ...]} first (with
              "trigger": TEXT, a request whose last user message is exactly TEXT plays it too, so a
              UI test can type a plain question). The turn
              played is the number of assistant messages after the last user message naming the
              script (else the last user message), so a tool loop's second call gets turns[1]. A turn is {"content": str, "reasoning": str,
              "tool_calls": [{"name": str, "arguments": str, "id"?: str}], "finish": str,
              "delay": s, "piece": n (characters per content/reasoning chunk, default 3),
              "piece_delay": s (a pause before each content chunk),
              "cut": bool (end the body without the finish chunk and [DONE]),
              "interleave": bool (the calls' tool_call deltas in turns, index 0, 1, 0, 1, …,
              instead of one call after another; tool_call_deltas())}. Reasoning is
              streamed first as delta {"reasoning_content": piece} chunks (llama-server's shape
              with --reasoning-format deepseek), then content and tool calls the way
              llama-server streams them (frame shapes from the golden recording; tool_call
              deltas as llama-server sends them since ggml-org/llama.cpp #13800: the first delta
              of a call carries index, id, type and the name with empty arguments, the next ones
              carry argument fragments), then the finish chunk, the usage chunk and [DONE].
Non-streaming requests get tests/golden/llama_server_completion.json (or the script's turn, with
message.reasoning_content when the turn has reasoning).

Control: POST /mode {"chat": SCENARIO} makes every chat request play SCENARIO whatever it says
(an engine of a pool that fails: "http500", "hang"); {"chat": null} ends it.

llama-server's root endpoints (not under /v1), for token counting:
  POST /apply-template {messages, tools?, ...} → {"prompt": text}: a deterministic rendering,
      one line "<role>: <content as JSON text>\n" per message (json.dumps, keys sorted), then
      "tools: <tools as JSON text>\n" when tools are given (render_prompt() below).
  POST /tokenize {content, ...} → {"tokens": [one integer per whitespace-separated word]}.
  Both bodies are recorded in STATE["root_requests"] as {"path": ..., "body": ...} (not in
  "requests", which holds chat completions only). STATE["auth"] holds each chat completion's
  Authorization header (None when absent), in the order of "requests".

The legacy routes, in llama-server's shapes (the scenario is chosen by a prompt or input string
"scenario:<name>", the first one when a list is sent):
  POST /v1/completions: non-streaming {"id","object":"text_completion","created","model",
      "choices":[{"text","index","logprobs":null,"finish_reason"}],"usage"} (one choice per prompt
      of a list); streaming, chunks of the same shape with COMPLETION_TEXT in pieces of 4
      characters (finish_reason null), then a last chunk with text "", the finish_reason and the
      usage, then `data: [DONE]`. Scenarios: http400, http500, http503, hang (as for chat), crash
      (two chunks, then the connection is cut), stall (one chunk, 1.2 s of silence, the rest),
      endless (a chunk every 20 ms until the client goes away; counts disconnects).
  POST /v1/embeddings: {"model","object":"list","usage":{"prompt_tokens","total_tokens"},
      "data":[{"embedding":[EMBED_DIM floats],"index","object":"embedding"}]}, one vector per
      input: fake_embedding(input), deterministic, exactly representable as float32. Asking for
      anything but floats (encoding_format other than "float") is a 400. Scenarios: http400,
      http500, http503, reversed (the data list in reverse order, indexes kept), short (one vector
      too few).
  Their bodies are recorded in STATE["legacy_requests"] as {"path": ..., "body": ...}.

GET /v1/models lists "fake-model". GET /stats returns {"requests": [bodies], "root_requests":
[{path, body}], "legacy_requests": [{path, body}], "disconnects": n}; POST /reset clears them.
Run: python fake_upstream.py PORT  (PORT 0 = any; the chosen port is printed as "PORT <n>").
"""
import hashlib
import json
import pathlib
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GOLDEN = pathlib.Path(__file__).resolve().parent.parent / "golden"
STATE = {"requests": [], "root_requests": [], "legacy_requests": [], "disconnects": 0, "auth": []}
COMPLETION_TEXT = " upon a time there was a fake model."
EMBED_DIM = 8
SCRIPTS = {}
TRIGGERS = {}  # a last user message's exact text → the script it plays
MODE = {"chat": None}  # POST /mode: a scenario every chat request plays
LOCK = threading.Lock()


def golden_frames():
    text = (GOLDEN / "llama_server_stream.sse").read_text()
    return [f + "\n\n" for f in text.split("\n\n") if f.strip()]


def render_prompt(body):
    """/apply-template's rendering (tests recompute it to know the expected token count)."""
    out = ""
    for m in body.get("messages", []):
        out += f"{m.get('role')}: {json.dumps(m.get('content'), sort_keys=True)}\n"
    if body.get("tools"):
        out += "tools: " + json.dumps(body["tools"], sort_keys=True) + "\n"
    return out


def fake_embedding(item):
    """The fake's vector for one input (a string or a token list): EMBED_DIM values k/128."""
    digest = hashlib.sha256(json.dumps(item).encode()).digest()
    return [(b - 128) / 128 for b in digest[:EMBED_DIM]]


def legacy_scenario(value):
    """"<name>" when a prompt/input (or the first entry of a list) is "scenario:<name>"."""
    first = value[0] if isinstance(value, list) and value else value
    if isinstance(first, str) and first.startswith("scenario:"):
        return first.split(":", 1)[1]
    return ""


def completion_body(choices, usage=None):
    body = {"choices": choices, "created": 1, "model": "fake-model", "system_fingerprint": "fake",
            "object": "text_completion", "id": "cmpl-fake"}
    if usage:
        body["usage"] = usage
    return body


def chunk(text, content=None, finish=None, role=None, delta=None):
    delta = dict(delta or {})
    if role:
        delta = {"role": role, "content": None}
    if content is not None:
        delta["content"] = content
    body = {"choices": [{"finish_reason": finish, "index": 0, "delta": delta}], "created": 1,
            "id": "chatcmpl-fake", "model": "fake-model", "object": "chat.completion.chunk"}
    return "data: " + json.dumps(body) + "\n\n"


def tool_call_deltas(calls, turn_index, interleave=False):
    """The tool_call deltas of a turn's calls, each call's first delta (index, id, type, name, empty
    arguments) then its arguments in pieces of 7 characters; one call after another, or with
    `interleave` in turns (call 0's delta, call 1's, call 0's, …) as some servers send parallel calls."""
    per_call = []
    for i, c in enumerate(calls):
        cid = c.get("id", f"call_{turn_index}_{i}")
        ds = [{"index": i, "id": cid, "type": "function", "function": {"name": c["name"], "arguments": ""}}]
        a = c["arguments"]
        ds += [{"index": i, "function": {"arguments": a[k:k + 7]}} for k in range(0, len(a), 7)]
        per_call.append(ds)
    if not interleave:
        return [d for ds in per_call for d in ds]
    out = []
    for k in range(max((len(ds) for ds in per_call), default=0)):
        out += [ds[k] for ds in per_call if k < len(ds)]
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, status, obj, raw=None, headers=None):
        data = raw if raw is not None else json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if raw is None else "text/plain")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self):
        self.do_POST()

    def do_GET(self):
        if self.path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
        elif self.path == "/stats":
            with LOCK:
                self.send_json(200, STATE)
        else:
            self.send_json(404, {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}})

    def write_chunk(self, text):
        data = text.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path == "/script":
            with LOCK:
                SCRIPTS[body["name"]] = body["turns"]
                if isinstance(body.get("trigger"), str):
                    TRIGGERS[body["trigger"]] = body["name"]
            return self.send_json(200, {"ok": True})
        if self.path == "/mode":  # {"chat": SCENARIO or null}: every chat request plays it (an engine that fails)
            with LOCK:
                MODE["chat"] = body.get("chat")
            return self.send_json(200, {"ok": True})
        if self.path == "/reset":
            with LOCK:
                STATE["requests"].clear()
                STATE["root_requests"].clear()
                STATE["legacy_requests"].clear()
                STATE["auth"].clear()
                STATE["disconnects"] = 0
            return self.send_json(200, {"ok": True})
        if self.path in ("/apply-template", "/tokenize"):
            with LOCK:
                STATE["root_requests"].append({"path": self.path, "body": body})
            if self.path == "/apply-template":
                return self.send_json(200, {"prompt": render_prompt(body)})
            return self.send_json(200, {"tokens": list(range(len(str(body.get("content", "")).split())))})
        if self.path in ("/v1/completions", "/v1/embeddings"):
            with LOCK:
                STATE["legacy_requests"].append({"path": self.path, "body": body})
            if self.path == "/v1/embeddings":
                return self.embeddings(body)
            return self.completions(body)
        with LOCK:
            STATE["requests"].append(body)
            STATE["auth"].append(self.headers.get("Authorization"))  # parallel to "requests"
        scenario = "replay"
        last_user = None
        for m in body.get("messages", []):
            if m.get("role") == "user" and isinstance(m.get("content"), str):
                last_user = m["content"]
                if m["content"].startswith("scenario:"):
                    scenario = m["content"].split(":", 1)[1]
        with LOCK:
            triggered = TRIGGERS.get(last_user)
            forced = MODE["chat"]
        if triggered is not None:
            scenario = "script:" + triggered
        if forced:
            scenario = forced
        if scenario == "http400":
            return self.send_json(400, {"error": {"code": 400, "message": "request (431 tokens) exceeds the available context size (256 tokens), try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 431, "n_ctx": 256}})
        if scenario == "http500":
            return self.send_json(500, None, raw=b"upstream exploded")
        if scenario == "http401_echo":  # a hosted provider quoting the key it refused
            return self.send_json(401, {"error": {"message": "Incorrect API key provided: "
                                                             + str(self.headers.get("Authorization")),
                                                  "type": "invalid_request_error", "code": "invalid_api_key"}})
        if scenario == "http503":
            return self.send_json(503, {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}})
        if scenario == "http429":  # OpenAI's shape for a rate limit
            return self.send_json(429, {"error": {"message": "Rate limit reached for requests", "type": "requests",
                                                  "param": None, "code": "rate_limit_exceeded"}},
                                  headers={"Retry-After": "7"})
        if scenario == "hang":  # never answers (until the client goes away or 60 s pass)
            time.sleep(60)
            return
        if scenario.startswith("script:"):
            return self.play_script(body, scenario.split(":", 1)[1])
        if not body.get("stream"):
            return self.send_json(200, json.loads((GOLDEN / "llama_server_completion.json").read_text()))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            self.stream(scenario)
        except (BrokenPipeError, ConnectionResetError):
            with LOCK:
                STATE["disconnects"] += 1

    def send_status_scenario(self, scenario):
        """The http400/http500/http503 answers (as for chat); False for any other scenario."""
        if scenario == "http400":
            self.send_json(400, {"error": {"code": 400, "message": "request (431 tokens) exceeds the available context size (256 tokens), try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 431, "n_ctx": 256}})
        elif scenario == "http500":
            self.send_json(500, None, raw=b"upstream exploded")
        elif scenario == "http503":
            self.send_json(503, {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}})
        else:
            return False
        return True

    def embeddings(self, body):
        scenario = legacy_scenario(body.get("input"))
        if self.send_status_scenario(scenario):
            return
        if body.get("encoding_format", "float") != "float":
            return self.send_json(400, {"error": {"code": 400, "message": "the fake sends floats only", "type": "invalid_request_error"}})
        inp = body.get("input")
        if isinstance(inp, str) or (isinstance(inp, list) and inp and isinstance(inp[0], int)):
            inputs = [inp]
        else:
            inputs = list(inp or [])
        data = [{"embedding": fake_embedding(x), "index": i, "object": "embedding"} for i, x in enumerate(inputs)]
        if scenario == "reversed":
            data.reverse()
        elif scenario == "short":
            data = data[:-1]
        tokens = sum(len(x.split()) if isinstance(x, str) else len(x) for x in inputs)
        self.send_json(200, {"model": body.get("model", "fake-model"), "object": "list",
                             "usage": {"prompt_tokens": tokens, "total_tokens": tokens}, "data": data})

    def completions(self, body):
        prompt = body.get("prompt")
        scenario = legacy_scenario(prompt)
        if self.send_status_scenario(scenario):
            return
        if scenario == "hang":
            time.sleep(60)
            return
        prompts = prompt if isinstance(prompt, list) and prompt and not isinstance(prompt[0], int) else [prompt]
        usage = {"completion_tokens": 9, "prompt_tokens": 2, "total_tokens": 11}
        if not body.get("stream"):
            choices = [{"text": COMPLETION_TEXT, "index": i, "logprobs": None, "finish_reason": "length"}
                       for i in range(len(prompts))]
            return self.send_json(200, completion_body(choices, usage=usage))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            self.stream_completion(scenario, usage)
        except (BrokenPipeError, ConnectionResetError):
            with LOCK:
                STATE["disconnects"] += 1

    def stream_completion(self, scenario, usage):
        def piece(text, finish=None, usage=None):
            choice = {"text": text, "index": 0, "logprobs": None, "finish_reason": finish}
            return "data: " + json.dumps(completion_body([choice], usage=usage)) + "\n\n"
        pieces = [COMPLETION_TEXT[i:i + 4] for i in range(0, len(COMPLETION_TEXT), 4)]
        if scenario == "endless":
            n = 0
            while True:
                self.write_chunk(piece(f" t{n}"))
                n += 1
                time.sleep(0.02)
        for i, p in enumerate(pieces):
            self.write_chunk(piece(p))
            if scenario == "crash" and i == 1:
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if scenario == "stall" and i == 0:
                time.sleep(1.2)
        self.write_chunk(piece("", finish="length", usage=usage))
        self.write_chunk("data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def play_script(self, body, name):
        with LOCK:
            turns = SCRIPTS.get(name)
        if turns is None:
            return self.send_json(400, {"error": {"code": 400, "message": "no script " + name, "type": "invalid_request_error"}})
        msgs = body.get("messages", [])
        # Turns count from the user message that named the script (a loop's re-prompt is a later
        # user message, and the scripted model's next turn still follows on).
        users = [i for i, m in enumerate(msgs) if m.get("role") == "user"]
        named = [i for i in users if isinstance(msgs[i].get("content"), str) and name in msgs[i]["content"]]
        last_user = max(named or users or [0])
        idx = sum(1 for m in msgs[last_user:] if m.get("role") == "assistant")
        turn = turns[min(idx, len(turns) - 1)]
        if turn.get("delay"):
            time.sleep(turn["delay"])
        calls = turn.get("tool_calls") or []
        finish = turn.get("finish") or ("tool_calls" if calls else "stop")
        if not body.get("stream"):
            msg = {"role": "assistant", "content": turn.get("content", "")}
            if turn.get("reasoning"):
                msg["reasoning_content"] = turn["reasoning"]
            if calls:
                msg["tool_calls"] = [{"type": "function", "id": c.get("id", f"call_{idx}_{i}"),
                                      "function": {"name": c["name"], "arguments": c["arguments"]}}
                                     for i, c in enumerate(calls)]
            return self.send_json(200, {"choices": [{"finish_reason": finish, "index": 0, "message": msg}],
                                        "created": 1, "id": "chatcmpl-fake", "model": "fake-model",
                                        "object": "chat.completion",
                                        "usage": {"completion_tokens": 5, "prompt_tokens": 7, "total_tokens": 12}})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            self.write_chunk(chunk("", role="assistant"))
            step = turn.get("piece", 3)
            reasoning = turn.get("reasoning", "")
            for i in range(0, len(reasoning), step):
                self.write_chunk(chunk("", delta={"reasoning_content": reasoning[i:i + step]}))
            text = turn.get("content", "")
            for i in range(0, len(text), step):
                if turn.get("piece_delay"):
                    time.sleep(turn["piece_delay"])
                self.write_chunk(chunk("", content=text[i:i + step]))
            for d in tool_call_deltas(calls, idx, turn.get("interleave")):
                self.write_chunk(chunk("", delta={"tool_calls": [d]}))
            if turn.get("cut"):
                self.close_connection = True
                self.connection.shutdown(2)
                return
            self.write_chunk(chunk("", finish=finish))
            usage = {"choices": [], "created": 1, "id": "chatcmpl-fake", "model": "fake-model",
                     "object": "chat.completion.chunk",
                     "usage": {"completion_tokens": 5, "prompt_tokens": 7, "total_tokens": 12}}
            self.write_chunk("data: " + json.dumps(usage) + "\n\n")
            self.write_chunk("data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            with LOCK:
                STATE["disconnects"] += 1

    def stream(self, scenario):
        if scenario == "replay":
            for f in golden_frames():
                self.write_chunk(f)
                time.sleep(0.005)
        elif scenario == "stall":
            self.write_chunk(chunk("", role="assistant"))
            time.sleep(1.2)
            self.write_chunk(chunk("", content="late"))
            self.write_chunk(chunk("", finish="stop"))
            self.write_chunk("data: [DONE]\n\n")
        elif scenario == "crash":
            self.write_chunk(chunk("", role="assistant"))
            self.write_chunk(chunk("", content="partial"))
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        elif scenario == "malformed":
            self.write_chunk(chunk("", content="ok"))
            self.write_chunk("data: {not json\n\n")
            self.write_chunk("data: [DONE]\n\n")
        elif scenario == "error":
            self.write_chunk(chunk("", content="ok"))
            self.write_chunk('data: {"error":{"code":500,"message":"slot crashed","type":"server_error"}}\n\n')
        elif scenario == "endless":
            n = 0
            while True:
                self.write_chunk(chunk("", content=f" t{n}"))
                n += 1
                time.sleep(0.02)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def main():
    args = sys.argv[1:]
    if args and args[0] in ("-h", "--help"):
        print(f"usage: {sys.argv[0]} [PORT]   (0 or none: any free port; prints PORT <n> once listening)\n")
        print(__doc__)
        return
    if len(args) > 1 or (args and not args[0].isdigit()):
        sys.exit(f"usage: {sys.argv[0]} [PORT]   (--help: the scenarios and control routes)")
    port = int(args[0]) if args else 0
    ThreadingHTTPServer.request_queue_size = 1024  # the benchmark opens hundreds at once
    srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    srv.daemon_threads = True
    print("PORT", srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
