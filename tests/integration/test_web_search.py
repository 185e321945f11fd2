"""web_search through warden's tool loop (issue 25, reference §4.7) against real network parts the
test builds: a web host with a globally routable address (93.184.N.2) inside a network namespace
of its own, joined to this one by a veth pair; a DNS server on a loopback address that warden is
made to use (it runs in a mount namespace where /etc/resolv.conf is a bind-mounted file naming
it); a loopback "decoy" server standing for what must never be reached (this machine's services,
cloud metadata); and a fake SearXNG. The scripted upstream asks for the calls; the tool_end
results and the decoy's hit counts are what is checked.

Needs root (namespaces, veth); skipped otherwise.
"""
import dataclasses
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import urllib.request

import pytest

from conftest import start_preset, on_fake
from test_permissions import chat, sid
from test_tool_loop import Stream, call, script

FAKE = pathlib.Path(__file__).resolve().parent.parent / "fake" / "web_host.py"
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("unshare"),
                                reason="needs root, iproute2 and unshare")


def sh(*args):
    subprocess.run(args, check=True, capture_output=True)


def spawn(*args, netns=None):
    cmd = (["ip", "netns", "exec", netns] if netns else []) + [sys.executable, str(FAKE), *args]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().split()
    assert line and line[0] == "ready", f"{args} did not start"
    return p, int(line[1]) if len(line) > 1 else None


def hits(port, addr="127.0.0.1", netns=None):
    url = f"http://{addr}:{port}/__hits"
    if netns:
        out = subprocess.run(["ip", "netns", "exec", netns, sys.executable, "-c",
                              f"import urllib.request;print(urllib.request.urlopen('{url}').read().decode())"],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)
    return json.loads(urllib.request.urlopen(url, timeout=5).read())


class Net:
    """The namespace, the hosts, the DNS server and the decoy; torn down by close()."""

    def __init__(self):
        n = os.getpid() % 200 + 20
        self.ns, self.veth = f"wws{os.getpid()}", f"wwv{os.getpid() % 100000}"
        self.public = f"93.184.{n}.2"
        self.dns_addr = f"127.53.{n}.1"
        self.procs = []
        sh("ip", "netns", "add", self.ns)
        sh("ip", "link", "add", self.veth + "a", "type", "veth", "peer", "name", self.veth + "b")
        sh("ip", "link", "set", self.veth + "b", "netns", self.ns)
        sh("ip", "addr", "add", f"93.184.{n}.1/24", "dev", self.veth + "a")
        sh("ip", "link", "set", self.veth + "a", "up")
        sh("ip", "netns", "exec", self.ns, "ip", "addr", "add", f"{self.public}/24", "dev", self.veth + "b")
        sh("ip", "netns", "exec", self.ns, "ip", "link", "set", self.veth + "b", "up")
        sh("ip", "netns", "exec", self.ns, "ip", "link", "set", "lo", "up")
        # The decoy first: the public host serves on the same port number, so a name that flips
        # to 127.0.0.1 would reach the decoy if warden looked it up twice.
        p, self.decoy_port = spawn("http", "127.0.0.1", "0")
        self.procs.append(p)
        p, _ = spawn("http", self.public, str(self.decoy_port), "--redirect-to",
                     f"http://127.0.0.1:{self.decoy_port}/secret", netns=self.ns)
        self.procs.append(p)
        zone = {"public.test": [self.public], "loopback.test": ["127.0.0.1"],
                "flip.test": [self.public, "127.0.0.1"], "metadata.test": ["169.254.169.254"]}
        p, _ = spawn("dns", self.dns_addr, json.dumps(zone))
        self.procs.append(p)
        p, self.searxng_port = spawn("searxng", "127.0.0.1", "0")
        self.procs.append(p)
        self.dir = tempfile.mkdtemp(prefix="warden-web-")
        self.resolv = os.path.join(self.dir, "resolv.conf")
        with open(self.resolv, "w") as f:
            f.write(f"nameserver {self.dns_addr}\noptions timeout:2 attempts:1\n")

    def prefix(self):
        """Runs warden in a mount namespace whose /etc/resolv.conf names the test's DNS server."""
        return ("unshare", "--mount", "--propagation", "private", "sh", "-c",
                f'mount --bind {self.resolv} /etc/resolv.conf && exec "$0" "$@"')

    def url(self, host, path):
        return f"http://{host}:{self.decoy_port}{path}"

    def close(self):
        for p in self.procs:
            p.kill()
            p.wait()
        subprocess.run(["ip", "link", "del", self.veth + "a"], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def net():
    n = Net()
    yield n
    n.close()


def start(net, fake, *args):
    preset = dataclasses.replace(on_fake("--search-backend", f"searxng:http://127.0.0.1:{net.searxng_port}", *args),
                                 prefix=net.prefix())
    return start_preset(preset, fake=fake)


@pytest.fixture(scope="module")
def web(net, fake_upstream):
    w = start(net, fake_upstream)
    yield w
    w.stop()


def results(w, fake, *arguments, **kw):
    """The tool_end results of web_search calls with these arguments, in order (mode off: no asking)."""
    name = script(fake, [{"tool_calls": [call("web_search", a)]} for a in arguments] + [{"content": "done"}])
    s = Stream(w.port, chat(name, session_id=sid("web"), permission_mode="off", **kw))
    frames = s.rest()
    starts = [f for f in frames if isinstance(f, dict) and f.get("type") == "tool_status"]
    ends = [f["result"] for f in frames if isinstance(f, dict) and f.get("type") == "tool_end"]
    assert len(ends) == len(arguments), frames[-5:]
    return ends, [f.get("content") or "" for f in starts]


def test_search_goes_to_the_searxng_backend_and_says_searching(web, fake_upstream):
    (r,), statuses = results(web, fake_upstream, {"query": "sea otters"})
    assert "Title: sea otters — result 1\nURL: https://site1.example.org/1\nSnippet: snippet 1 about sea otters" in r, r
    assert r.count("---") == 2 and "call web_search again with its url" in r
    assert any(s.startswith("Searching: sea otters") for s in statuses), statuses


def test_a_public_host_is_read_as_text_html_and_pdf(web, fake_upstream, net):
    (html, pdf, big, binary), statuses = results(web, fake_upstream, {"url": net.url("public.test", "/page.html")},
                                                 {"url": net.url("public.test", "/doc.pdf")},
                                                 {"url": net.url("public.test", "/big.html")},
                                                 {"url": net.url("public.test", "/bin")})
    assert "# Fake Example Domain" in html and "Example heading" in html and "- first item" in html, html
    assert "do-not-show" not in html and "color:red" not in html
    assert f"[More information](http://public.test:{net.decoy_port}/more)" in html, html
    assert "otters" in pdf and "beavers" in pdf, pdf
    assert "only the first 512 KiB" in big and len(big) <= 16200, big[:300]
    assert binary.startswith("Error:") and "binary" in binary, binary
    assert any(s == "Reading: public.test" for s in statuses), statuses
    assert hits(net.decoy_port).get("/page.html") is None  # served by the public host, not the decoy


@pytest.mark.parametrize("host", ["127.0.0.1", "loopback.test", "[::ffff:127.0.0.1]", "metadata.test", "0x7f000001"])
def test_loopback_and_private_addresses_are_refused(web, fake_upstream, net, host):
    (r,), _ = results(web, fake_upstream, {"url": net.url(host, "/secret")})
    assert r.startswith("Error: Refused to fetch"), r
    if host.endswith(".test"):  # a name's address stays hidden
        assert "127.0.0.1" not in r and "169.254.169.254" not in r, r
    assert hits(net.decoy_port).get("/secret") is None


def test_a_redirect_to_loopback_is_refused_at_that_hop(web, fake_upstream, net):
    (r,), _ = results(web, fake_upstream, {"url": net.url("public.test", "/redirect")})
    assert r.startswith("Error: Refused to fetch 127.0.0.1"), r
    assert hits(net.decoy_port, net.public, netns=net.ns).get("/redirect") == 1
    assert hits(net.decoy_port).get("/secret") is None


def test_a_name_whose_answer_changes_is_looked_up_once_and_pinned(web, fake_upstream, net):
    # flip.test answers the public address, then 127.0.0.1, in turn: a second lookup at connect
    # time would reach the decoy. Pinned to the checked answer, every read reaches the public host.
    ends, _ = results(web, fake_upstream, *[{"url": net.url("flip.test", f"/secret?{k}")} for k in range(3)])
    for r in ends:
        assert r.startswith("Error: Refused") or f"this is {net.public} (flip.test:" in r, r
    assert any(f"this is {net.public}" in r for r in ends), ends
    assert hits(net.decoy_port).get("/secret") is None


def test_the_website_policy_limits_search_and_reading(web, fake_upstream, net):
    policy = {"allowedDomains": ["site2.example.org", "public.test"], "blockedDomains": ["page.public.test"]}
    (found, blocked, allowed), _ = results(web, fake_upstream, {"query": "x"},
                                           {"url": net.url("other.test", "/page.html")},
                                           {"url": net.url("public.test", "/page.html")}, website_policy=policy)
    assert "site2.example.org" in found and "site1" not in found and "site3" not in found, found
    assert blocked.startswith("Error: The website access limits"), blocked
    assert "Example heading" in allowed, allowed


def test_allow_private_fetch_reads_the_lan_but_never_wardens_own_port(net, fake_upstream):
    w = start(net, fake_upstream, "--allow-private-fetch")
    try:
        (decoy, own), _ = results(w, fake_upstream, {"url": net.url("127.0.0.1", "/secret")},
                                  {"url": f"http://127.0.0.1:{w.port}/v1/models"})
        assert decoy.startswith("Page: ") and "this is 127.0.0.1" in decoy, decoy
        assert own.startswith("Error: Refused") and "own" in own, own
    finally:
        w.stop()


def test_without_a_backend_a_query_says_how_to_turn_search_on(fake_upstream, net):
    w = start_preset(on_fake(), fake=fake_upstream)
    try:
        (q, empty), _ = results(w, fake_upstream, {"query": "x"}, {})
        assert "--search-backend" in q and q.startswith("Error:"), q
        assert empty.startswith("Error: web_search needs a query"), empty
    finally:
        w.stop()
