"""End to end: a knowledge base on the real default model (SmolLM2-135M-Instruct): documents are
embedded by warden's embeddings child of that model, hybrid search ranks by words and meaning,
and the model's own search_knowledge_base call (forced with tool_choice, as a client would)
runs inside the tool loop and returns the right passage with its citation map."""
import json

import openai

from conftest import request, on_model

WARDEN = on_model()

DOCS = {
    "tides.txt": "Ocean tides are caused by the gravitational pull of the Moon and the Sun on the sea.",
    "bread.md": "# Baking\n\nTo bake bread, mix flour, water, salt and yeast, knead the dough and let it rise.",
    "rust.html": "<html><body><h1>Iron</h1><p>Rust forms when iron reacts with oxygen and water.</p></body></html>",
}


def api(w, method, path, body=None):
    st, _, data = request(w.port, method, path, body, timeout=300)
    return st, json.loads(data) if data else None


def test_documents_are_embedded_by_the_model_and_searched(warden):
    st, kb = api(warden, "POST", "/api/kb", {"name": "real"})
    assert st == 201
    for name, text in DOCS.items():
        st, doc = api(warden, "POST", f"/api/kb/{kb['id']}/documents", {"name": name, "content": text})
        assert st == 201 and doc["embedded"], doc  # the model's embeddings child made the vectors
    for query, want in (("why does the sea rise and fall with the moon", "tides.txt"),
                        ("how do I bake bread with yeast", "bread.md"),
                        ("iron reacts with oxygen", "rust.html")):
        st, hits = api(warden, "POST", f"/api/kb/{kb['id']}/search", {"query": query})
        assert st == 200 and hits["data"][0]["document_name"] == want, (query, hits["data"])
    client = openai.OpenAI(base_url=warden.base + "/v1", api_key="x")
    stream = client.chat.completions.create(
        model="any", stream=True, max_tokens=48, temperature=0, seed=7,
        messages=[{"role": "user", "content": "What causes ocean tides? Search my documents."}],
        tool_choice={"type": "function", "function": {"name": "search_knowledge_base"}},
        extra_body={"enable_tools": True, "enabled_tools": ["search_knowledge_base"], "permission_mode": "off",
                    "rag_scope": {"kb_id": kb["id"], "autoinject": False}, "max_tool_calls_per_message": 1})
    events = [c.to_dict() for c in stream if c.to_dict().get("type")]
    ends = [e for e in events if e["type"] == "tool_end"]
    assert ends and ends[0]["tool_name"] == "search_knowledge_base", events
    result = ends[0]["result"]
    assert "__RAG_SOURCES__" in result and "<chunk source=" in result, result
    assert "tides.txt" in result, result  # the model's own query finds the tides passage among the three
