"""Fake web parts for tests/integration/test_web_search.py (stdlib only).

  web_host.py http ADDR PORT [--redirect-to URL]   a web site: /page.html (HTML), /doc.pdf (a PDF),
        /big.html (900 KiB), /secret (the site's name), /redirect (302 to --redirect-to),
        /bin (binary), /__hits (JSON {path: count}, not counted); prints "ready PORT"
  web_host.py dns ADDR ZONE_JSON                  a UDP DNS server on ADDR:53 answering A queries
        from ZONE_JSON {"name": ["a.b.c.d", ...]}: a name with several addresses answers them in
        turn, one per query (a name whose answer changes between lookups); AAAA and unknown names
        get an empty NOERROR / NXDOMAIN; prints "ready"
  web_host.py searxng ADDR PORT                   a SearXNG JSON API: /search?q=Q&format=json answers
        three results about Q; prints "ready PORT"

The PDF is built here (one page per line of text, Helvetica), the same way a minimal real PDF is.
"""
import json
import socket
import struct
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PAGE = """<!doctype html><html><head><title>Fake Example Domain</title>
<style>body{color:red}</style><script>var secret = "do-not-show";</script></head>
<body><h1>Example heading</h1><p>This domain is for use in <b>integration</b> tests.</p>
<ul><li>first item</li><li>second item</li></ul><p><a href="/more">More information</a></p></body></html>"""


def make_pdf(lines):
    """A valid PDF with one page per line of text."""
    objs = {1: b"<< /Type /Catalog /Pages 2 0 R >>", 3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
    kids = []
    n = 4
    for line in lines:
        text = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode()
        objs[n] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
        objs[n + 1] = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                       b"/Contents %d 0 R >>" % n)
        kids.append(n + 1)
        n += 2
    objs[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for i in sorted(objs):
        offsets[i] = len(out)
        out += b"%d 0 obj\n" % i + objs[i] + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (n)
    for i in range(1, n):
        out += b"%010d 00000 n \n" % offsets[i]
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (n, xref)
    return bytes(out)


def serve_http(addr, port, redirect_to):
    hits = {}
    lock = threading.Lock()
    pdf = make_pdf(["Fake PDF page one about otters", "Page two mentions beavers"])
    big = "<html><body>" + "<p>filler text for a big page</p>" * 30000 + "</body></html>"

    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def send(self, status, ctype, body, extra=()):
            self.send_response(status)
            if ctype:
                self.send_header("Content-Type", ctype)
            for k, v in extra:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            path = self.path.split("?")[0]
            if path == "/__hits":
                with lock:
                    return self.send(200, "application/json", json.dumps(hits).encode())
            with lock:
                hits[path] = hits.get(path, 0) + 1
            host = self.headers.get("Host", "")
            routes = {
                "/page.html": (200, "text/html; charset=utf-8", PAGE.encode()),
                "/doc.pdf": (200, "application/pdf", pdf),
                "/big.html": (200, "text/html", big.encode()),
                "/secret": (200, "text/plain", f"this is {addr} ({host})".encode()),
                "/bin": (200, "application/octet-stream", bytes(range(256)) * 4),
            }
            if path == "/redirect" and redirect_to:
                return self.send(302, None, b"", [("Location", redirect_to)])
            status, ctype, body = routes.get(path, (404, "text/plain", b"not found"))
            self.send(status, ctype, body)

    srv = ThreadingHTTPServer((addr, port), H)
    print("ready", srv.server_address[1], flush=True)
    srv.serve_forever()


def dns_answer(query, zone, turn):
    """The response to one DNS query packet."""
    tid, _flags, qd = struct.unpack(">HHH", query[:6])
    i, labels = 12, []
    while query[i] != 0:
        labels.append(query[i + 1:i + 1 + query[i]].decode("ascii", "replace"))
        i += query[i] + 1
    qtype = struct.unpack(">H", query[i + 1:i + 3])[0]
    question = query[12:i + 5]
    name = ".".join(labels).lower()
    answers = []
    if name in zone and qtype == 1:
        addrs = zone[name]
        k = turn.get(name, 0)
        turn[name] = k + 1
        ip = addrs[k % len(addrs)]
        answers.append(b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 0, 4) + socket.inet_aton(ip))
    rcode = 0 if name in zone else 3
    head = struct.pack(">HHHHHH", tid, 0x8180 | rcode, 1, len(answers), 0, 0)
    return head + question + b"".join(answers)


def serve_dns(addr, zone):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, 53))
    turn = {}
    print("ready", flush=True)
    while True:
        data, peer = s.recvfrom(512)
        try:
            s.sendto(dns_answer(data, zone, turn), peer)
        except (IndexError, struct.error, UnicodeError):
            pass


def serve_searxng(addr, port):
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            u = urllib.parse.urlparse(self.path)
            q = urllib.parse.parse_qs(u.query)
            if u.path != "/search" or q.get("format") != ["json"]:
                self.send_response(403)
                self.end_headers()
                return
            term = q.get("q", [""])[0]
            body = json.dumps({"query": term, "results": [
                {"title": f"{term} — result {k}", "url": f"https://site{k}.example.org/{k}",
                 "content": f"snippet {k} about {term}", "engine": "fake"} for k in (1, 2, 3)]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = ThreadingHTTPServer((addr, port), H)
    print("ready", srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "http":
        redirect = sys.argv[sys.argv.index("--redirect-to") + 1] if "--redirect-to" in sys.argv else ""
        serve_http(sys.argv[2], int(sys.argv[3]), redirect)
    elif mode == "dns":
        serve_dns(sys.argv[2], json.loads(sys.argv[3]))
    else:
        serve_searxng(sys.argv[2], int(sys.argv[3]))
