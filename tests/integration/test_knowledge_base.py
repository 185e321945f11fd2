"""Knowledge bases (issue 25, reference §2.10, §4.10) on the scripted fake upstream: /api/kb and
its documents (text, HTML, PDF as base64), lexical and hybrid search, search_knowledge_base in the
tool loop with its citation map and its cap of 3 searches an answer, RAG auto-inject, and a 5 MB
document ingested while a chat streams.

The fake's embeddings are a hash of the text (tests/fake/fake_upstream.py fake_embedding): a query
equal to a chunk's text has cosine 1 with it, any other pair is near 0. That is what makes the
dense side of a search predictable here; the real model's embeddings are in tests/e2e.
"""
import base64
import json
import sys
import threading
import time
import pathlib

import pytest

from conftest import request, on_fake
from test_permissions import chat, sid
from test_tool_loop import Stream, call, script, upstream_requests

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "fake"))
from web_host import make_pdf  # noqa: E402

WARDEN = on_fake("--sse-ping-interval", "300")

OTTERS = "Sea otters hold hands while they sleep so that they do not drift apart."
HTML = ("<html><head><title>Volcanoes</title><script>var x='hidden-script';</script></head><body>"
        "<h1>Volcanoes</h1><p>Magma that reaches the surface is called lava.</p></body></html>")
CAPY = "The capybara is the largest living rodent."


def api(w, method, path, body=None):
    st, _, data = request(w.port, method, path, body)
    return st, (json.loads(data) if data else None)


def new_kb(w, name="notes"):
    st, kb = api(w, "POST", "/api/kb", {"name": name})
    assert st == 201, kb
    assert kb["id"].startswith("kb_") and kb["name"] == name and kb["documents"] == 0
    return kb["id"]


def add(w, kb, **body):
    st, doc = api(w, "POST", f"/api/kb/{kb}/documents", body)
    assert st == 201, doc
    return doc


@pytest.fixture(scope="module")
def kb(warden):
    k = new_kb(warden)
    docs = [add(warden, k, name="otters.txt", content=OTTERS),
            add(warden, k, name="volcanoes.html", content=HTML),
            add(warden, k, name="rodents.pdf", content_base64=base64.b64encode(make_pdf([CAPY])).decode())]
    assert [d["kind"] for d in docs] == ["text", "html", "pdf"]
    assert all(d["chunks"] == 1 and d["embedded"] for d in docs), docs
    return k


def search(w, kb, query, **kw):
    st, body = api(w, "POST", f"/api/kb/{kb}/search", {"query": query, **kw})
    assert st == 200, body
    return body["data"]


def test_three_kinds_are_read_and_listed(warden, kb):
    st, body = api(warden, "GET", f"/api/kb/{kb}")
    assert st == 200 and body["documents"] and len(body["documents"]) == 3
    assert {d["name"] for d in body["documents"]} == {"otters.txt", "volcanoes.html", "rodents.pdf"}
    st, listed = api(warden, "GET", "/api/kb")
    assert any(k["id"] == kb and k["documents"] == 3 for k in listed["data"])
    html = search(warden, kb, "lava magma", mode="lexical")[0]
    assert html["document_name"] == "volcanoes.html" and "hidden-script" not in html["text"], html


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_the_right_chunk_comes_first(warden, kb, mode):
    for query, name in (("otters sleep holding hands", "otters.txt"), ("what is lava", "volcanoes.html"),
                        ("largest rodent capybara", "rodents.pdf")):
        hits = search(warden, kb, query, mode=mode)
        assert hits and hits[0]["document_name"] == name, (query, hits)
    # hybrid: the exact text is also the nearest vector (cosine 1 with the fake's embeddings)
    assert search(warden, kb, CAPY, mode=mode)[0]["document_name"] == "rodents.pdf"


def test_hostile_queries_and_bad_requests_get_clear_errors(warden, kb):
    for q in ['"', "AND OR NOT", "NEAR(", "*", ")", "ünïcödé"]:
        search(warden, kb, q)  # 200, whatever it finds
    assert api(warden, "POST", f"/api/kb/{kb}/search", {"query": ""})[0] == 400
    assert api(warden, "POST", "/api/kb/kb_nope/search", {"query": "x"})[0] == 404
    assert api(warden, "GET", "/api/kb/kb_nope")[0] == 404
    assert api(warden, "POST", "/api/kb", {"name": ""})[0] == 400
    st, body = api(warden, "POST", f"/api/kb/{kb}/documents", {"content": "a", "url": "http://x.test/"})
    assert st == 400 and "exactly one" in body["error"]["message"], body
    st, body = api(warden, "POST", f"/api/kb/{kb}/documents", {"content_base64": base64.b64encode(bytes(range(256))).decode()})
    assert st == 400 and "binary" in body["error"]["message"], body
    for field in ("content", "content_base64", "url"):  # null is absent, never a 500
        st, body = api(warden, "POST", f"/api/kb/{kb}/documents", {field: None})
        assert st == 400 and "exactly one" in body["error"]["message"], (field, body)
    st, body = api(warden, "POST", f"/api/kb/{kb}/documents", {"content_base64": "not base64!"})
    assert st == 400, body
    st, body = api(warden, "POST", f"/api/kb/{kb}/documents", {"url": f"http://127.0.0.1:{warden.port}/health"})
    assert st == 400 and "Refused" in body["error"]["message"], body  # the web guard holds for URL documents
    st, body = request(warden.port, "POST", "/v1/chat/completions",
                       chat("x", rag_scope={"kb_ids": "kb_x"}))[0:3:2]
    assert st == 400 and b"rag_scope" in body, body


def test_the_tool_searches_in_the_loop_and_is_capped_at_three(warden, fake_upstream, kb):
    calls = [{"tool_calls": [call("search_knowledge_base", {"query": "lava" + " lava" * k})]} for k in range(4)]
    name = script(fake_upstream, calls + [{"content": "done"}])
    s = Stream(warden.port, chat(name, session_id=sid("kb"), rag_scope={"kb_id": kb, "autoinject": False}))
    frames = s.rest()
    ends = [f["result"] for f in frames if isinstance(f, dict) and f.get("type") == "tool_end"]
    assert len(ends) == 4, frames[-4:]
    first = ends[0]
    assert '<chunk source="volcanoes.html" n="1"' in first and "lava" in first, first
    sources = json.loads(first.split("__RAG_SOURCES__:", 1)[1])
    assert sources["1"]["name"] == "volcanoes.html" and sources["1"]["chunk"] == 0, sources
    assert "Stop searching" in ends[3], ends[3]
    statuses = [f.get("content") for f in frames if isinstance(f, dict) and f.get("type") == "tool_status"]
    assert "Searching documents: lava" in statuses, statuses
    # a knowledge base that does not exist (or is another key's) is named in the tool's error
    name = script(fake_upstream, [{"tool_calls": [call("search_knowledge_base", {"query": "x"})]}, {"content": "ok"}])
    frames = Stream(warden.port, chat(name, session_id=sid("kb"), rag_scope={"kb_id": "kb_nope"})).rest()
    end = [f for f in frames if isinstance(f, dict) and f.get("type") == "tool_end"][0]
    assert end["result"].startswith("Error:") and "kb_nope" in end["result"], end
    # without a rag_scope the tool is not offered to the model
    name = script(fake_upstream, [{"content": "hi"}])
    Stream(warden.port, chat(name)).rest()
    offered = json.dumps(upstream_requests(fake_upstream, name)[0].get("tools", []))
    assert "search_knowledge_base" not in offered and "web_search" in offered


def last_request_with(fake, text):
    _, _, body = request(fake.port, "GET", "/stats")
    reqs = [r for r in json.loads(body)["requests"] if any(m.get("content") == text for m in r.get("messages", []))]
    return reqs[-1]


def test_auto_inject_runs_before_the_first_turn_and_is_skipped_under_ask(warden, fake_upstream, kb):
    # The question is exactly the PDF's text: its chunk has cosine 1 with it (the fake's
    # embeddings), over the 0.70 floor. The fake plays the script for that question (a trigger);
    # two turns, since the injected exchange counts as the first assistant message.
    name = script(fake_upstream, [])
    st, _, _ = request(fake_upstream.port, "POST", "/script",
                       {"name": name, "trigger": CAPY, "turns": [{"content": "Capybaras are big."}] * 2})
    assert st == 200
    for mode, injected in (("off", True), ("auto", True), ("ask", False)):
        body = chat(name, session_id=sid("rag"), rag_scope={"kb_id": kb}, permission_mode=mode)
        body["messages"] = [{"role": "user", "content": CAPY}]
        frames = Stream(warden.port, body).rest()
        starts = [f for f in frames if isinstance(f, dict) and f.get("type") == "tool_start"]
        if not injected:
            assert not starts, (mode, starts)
            continue
        assert len(starts) == 1 and starts[0]["tool_name"] == "search_knowledge_base", (mode, starts)
        cid = starts[0]["tool_call_id"]
        assert cid.startswith("rag_auto_") and len(cid) == 21, cid
        end = [f for f in frames if isinstance(f, dict) and f.get("type") == "tool_end"][0]
        assert "rodents.pdf" in end["result"] and "__RAG_SOURCES__" in end["result"], end
        sent = last_request_with(fake_upstream, CAPY)["messages"]
        assert sent[-1]["role"] == "tool" and "capybara" in sent[-1]["content"], sent[-2:]
        assert sent[-2]["tool_calls"][0]["id"] == cid
    # under the cosine floor nothing is injected (the fake's 8-dimension hash vectors can land
    # near each other by chance, so the floor here is one only the exact text reaches)
    name = script(fake_upstream, [{"content": "ok"}])
    frames = Stream(warden.port, chat(name, session_id=sid("rag"), permission_mode="off",
                                      rag_scope={"kb_id": kb, "autoinject_min_score": 0.9999})).rest()
    assert not [f for f in frames if isinstance(f, dict) and f.get("type") == "tool_start"]


def test_a_5mb_document_ingests_while_a_chat_streams(warden, kb):
    text = "\n\n".join(f"Paragraph {i} is about the weather on day {i}, which was mild and clear." * 3
                       for i in range(24000))[:5_000_000]
    gaps, done = [], threading.Event()

    def stream_chat():
        s = Stream(warden.port, {"messages": [{"role": "user", "content": "scenario:endless"}], "stream": True})
        last = time.monotonic()
        while not done.is_set():
            if s.next() is None:
                break
            now = time.monotonic()
            gaps.append(now - last)
            last = now
        s.close()

    t = threading.Thread(target=stream_chat)
    t.start()
    time.sleep(0.5)
    t0 = time.monotonic()
    st, hdrs, data = request(warden.port, "POST", f"/api/kb/{kb}/documents",
                             {"name": "weather.txt", "content": text, "stream": True}, timeout=600)
    took = time.monotonic() - t0
    done.set()
    t.join(30)
    events = [json.loads(l[5:]) for l in data.decode().splitlines() if l.startswith("data:")]
    assert st == 200 and events[-1]["type"] == "document", events[-3:]
    doc = events[-1]["document"]
    assert doc["chunks"] > 2000 and doc["embedded"], doc
    embedding = [e for e in events if e.get("stage") == "embedding"]
    assert len(embedding) > 10 and embedding[-1]["done"] == embedding[-1]["total"] == doc["chunks"]
    during = gaps[5:]
    print(f"5 MB: {doc['chunks']} chunks in {took:.1f} s; chat frames {len(gaps)}, max gap {max(during):.3f} s")
    assert len(during) > 20 and max(during) < 2.0, max(during)
    assert search(warden, kb, "day 23999 weather", mode="lexical")[0]["document_name"] == "weather.txt"


def test_documents_and_knowledge_bases_are_deleted(warden):
    k = new_kb(warden, "temp")
    d = add(warden, k, name="a.md", content="# Title\n\nsome unique zebrafish words")
    assert d["kind"] == "markdown"
    assert search(warden, k, "zebrafish", mode="lexical")
    assert api(warden, "DELETE", f"/api/kb/{k}/documents/{d['id']}") == (200, {"deleted": True, "id": d["id"]})
    assert search(warden, k, "zebrafish", mode="lexical") == []
    assert api(warden, "DELETE", f"/api/kb/{k}/documents/{d['id']}")[0] == 404
    assert api(warden, "DELETE", f"/api/kb/{k}")[0] == 200
    assert api(warden, "GET", f"/api/kb/{k}")[0] == 404


def test_the_warden_kb_command(warden, tmp_path):
    import subprocess
    from conftest import WARDEN_BIN

    def kb(*args):
        return subprocess.run([WARDEN_BIN, "kb", *args, "--url", warden.base], capture_output=True, text=True, timeout=120)

    made = kb("create", "cli notes")
    assert made.returncode == 0 and made.stdout.strip().startswith("kb_"), made
    k = made.stdout.strip()
    f = tmp_path / "hedgehogs.txt"
    f.write_text("Hedgehogs eat beetles and worms at night.\n")
    added = kb("add", k, str(f))
    assert added.returncode == 0 and "hedgehogs.txt: 1 chunk" in added.stdout and "chunks" not in added.stdout, added
    assert "cli notes" in kb("list").stdout
    assert "hedgehogs.txt" in kb("list", k).stdout
    found = kb("search", k, "beetles", "night")
    assert found.returncode == 0 and "1. hedgehogs.txt" in found.stdout, found
    refused = kb("add", k, "--fetch", f"http://127.0.0.1:{warden.port}/health")
    assert refused.returncode == 1 and "Refused" in refused.stderr, refused
    missing = kb("add", k, str(tmp_path / "nope.txt"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr, missing
    assert kb("rm", k).returncode == 0
    gone = kb("list", k)
    assert gone.returncode == 1 and "404" in gone.stderr, gone
