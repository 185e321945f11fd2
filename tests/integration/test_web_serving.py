"""The web UI's files as warden serves them (web/assets.h, api/control/ui_routes.h): the page
and its scripts at / and /ui/…, the headers that keep a browser strict (CSP, nosniff, no
framing), the render_html sandbox page's no-network policy, and the request guard in front of
all of it. The browser side (what the page does) is tests/browser/test_web_ui.py."""
import pytest

from conftest import request, warden_on_fake


@pytest.fixture(scope="module")
def keyed(fake_upstream):
    w = warden_on_fake(fake_upstream, "--api-key", "sk-web-test")
    yield w
    w.stop()


def csp(headers):
    return dict(part.strip().split(" ", 1) for part in headers["content-security-policy"].split(";"))


def test_root_serves_the_ui_page_with_a_strict_same_origin_policy(warden):
    st, h, body = request(warden.port, "GET", "/")
    assert st == 200 and h["content-type"] == "text/html; charset=utf-8"
    assert b"<html" in body and b"/ui/app.js" in body
    policy = csp(h)
    assert policy["default-src"] == "'none'"
    assert policy["script-src"] == "'self'" and policy["connect-src"] == "'self'"
    assert policy["frame-ancestors"] == "'none'" and h["x-frame-options"] == "DENY"
    assert "unsafe" not in h["content-security-policy"]
    assert h["x-content-type-options"] == "nosniff" and h["referrer-policy"] == "no-referrer"
    st2, _, body2 = request(warden.port, "GET", "/ui/")
    assert st2 == 200 and body2 == body


@pytest.mark.parametrize("path,ctype", [("/ui/app.js", "text/javascript"), ("/ui/vendor/marked.js", "text/javascript"),
                                        ("/ui/vendor/purify.js", "text/javascript"),
                                        ("/ui/vendor/highlight.js", "text/javascript"),
                                        ("/ui/vendor/hljs-dark.css", "text/css")])
def test_scripts_and_styles_are_served_from_warden_itself(warden, path, ctype):
    st, h, body = request(warden.port, "GET", path)
    assert st == 200 and h["content-type"].startswith(ctype) and len(body) > 100
    assert h["x-content-type-options"] == "nosniff"


def test_the_render_html_sandbox_page_has_no_network_and_an_opaque_origin(warden):
    st, h, _ = request(warden.port, "GET", "/ui/sandbox.html")
    assert st == 200
    policy = csp(h)
    assert policy["default-src"] == "'none'" and "connect-src" not in policy
    assert policy["img-src"] == "data: blob:" and policy["sandbox"] == "allow-scripts"
    assert "allow-same-origin" not in h["content-security-policy"]


@pytest.mark.parametrize("path", ["/ui/nope.js", "/ui/../README.md", "/ui/vendor/", "/ui/%2e%2e/CMakeLists.txt"])
def test_unknown_files_are_404_in_json(warden, path):
    st, h, body = request(warden.port, "GET", path)
    assert st == 404 and h["content-type"] == "application/json" and b"not_found" in body


def test_the_ui_is_get_only(warden):
    st, _, _ = request(warden.port, "POST", "/", {"x": 1})
    assert st == 405


def test_a_foreign_host_cannot_load_the_ui(warden):
    """DNS rebinding: a page at evil.example that resolves to 127.0.0.1 gets 403, not the UI."""
    st, _, body = request(warden.port, "GET", "/", headers={"Host": f"evil.example:{warden.port}"})
    assert st == 403 and b"<html" not in body


def test_the_sandboxed_frame_cannot_call_the_api(warden):
    """A render_html frame has an opaque origin: its requests carry `Origin: null` and are refused."""
    st, _, _ = request(warden.port, "POST", "/api/inference/tool-confirm",
                       {"approval_id": "x" * 22, "decision": "allow"}, headers={"Origin": "null"})
    assert st == 403
    st, _, _ = request(warden.port, "POST", "/api/inference/tool-confirm",
                       {"approval_id": "x" * 22, "decision": "allow"},
                       headers={"Origin": f"http://127.0.0.1:{warden.port}"})
    assert st == 404  # the UI's own origin passes the guard (an unknown id is then 404)


def test_with_an_api_key_the_page_loads_but_the_api_needs_the_key(keyed):
    st, _, body = request(keyed.port, "GET", "/")
    assert st == 200 and b"<html" in body
    assert request(keyed.port, "GET", "/ui/app.js")[0] == 200
    assert request(keyed.port, "GET", "/v1/models")[0] == 401
    assert request(keyed.port, "GET", "/v1/models", headers={"Authorization": "Bearer sk-web-test"})[0] == 200
