"""A stand-in for the Hugging Face hub's file URLs, for the pull tests (stdlib only).

  GET /<owner>/<repo>/resolve/<revision>/<file>  → 302 to /cdn/<file>, with the headers the hub
      sends for an LFS file on that redirect: X-Linked-Etag: "<sha256>" and X-Linked-Size
  GET /cdn/<file>   the file, with Range support (206 + Content-Range), an ETag of its sha256
  GET /plain/<file> the file with no checksum header at all (a plain web server)

Files and behaviour are set on the FakeHub object: `files` {name: bytes}, `chunk_delay` (seconds
between 256 KiB chunks: a slow link), `cut_after` (close the connection once after this many body
bytes: an interrupted download), `wrong_sha` (announce a wrong checksum), `announce_size` (claim a larger Content-Length). `requests` records
(path, Range header) of every request.
"""
import hashlib
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNK = 256 * 1024


class FakeHub:
    def __init__(self):
        self.files, self.chunk_delay, self.cut_after, self.wrong_sha = {}, 0.0, None, False
        self.announce_size = None  # a Content-Length to claim instead of the real one (a huge file)
        self.requests = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                hub.requests.append((self.path, self.headers.get("Range")))
                parts = self.path.split("/")
                if len(parts) >= 6 and parts[3] == "resolve":
                    name = parts[-1]
                    if name not in hub.files:
                        return self.answer(404, b"Entry not found")
                    self.send_response(302)
                    self.send_header("Location", "/cdn/" + name)
                    self.send_header("X-Linked-Etag", '"%s"' % hub.sha(name))
                    self.send_header("X-Linked-Size", str(len(hub.files[name])))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if len(parts) == 3 and parts[1] in ("cdn", "plain") and parts[2] in hub.files:
                    return self.serve(hub.files[parts[2]], etag=hub.sha(parts[2]) if parts[1] == "cdn" else None)
                self.answer(404, b"not found")

            def answer(self, status, body):
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def serve(self, data, etag):
                start, status = 0, 200
                rng = self.headers.get("Range")
                if rng and rng.startswith("bytes=") and rng.endswith("-"):
                    start = int(rng[6:-1])
                    if start >= len(data):
                        self.send_response(416)
                        self.send_header("Content-Range", "bytes */%d" % len(data))
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    status = 206
                self.send_response(status)
                if hub.announce_size:
                    self.send_header("Content-Length", str(hub.announce_size))
                    self.end_headers()
                    self.wfile.write(data[:CHUNK])
                    self.close_connection = True
                    return
                self.send_header("Content-Length", str(len(data) - start))
                if status == 206:
                    self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
                if etag:
                    self.send_header("ETag", '"%s"' % etag)
                self.end_headers()
                sent, pos = 0, start
                while pos < len(data):
                    piece = data[pos:pos + CHUNK]
                    if hub.cut_after is not None and sent + len(piece) > hub.cut_after:
                        keep = max(0, hub.cut_after - sent)
                        hub.cut_after = None  # once
                        self.wfile.write(piece[:keep])
                        self.wfile.flush()
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    self.wfile.write(piece)
                    sent += len(piece)
                    pos += len(piece)
                    if hub.chunk_delay:
                        time.sleep(hub.chunk_delay)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def sha(self, name):
        if self.wrong_sha:
            return "0" * 64
        return hashlib.sha256(self.files[name]).hexdigest()

    def close(self):
        self.server.shutdown()
