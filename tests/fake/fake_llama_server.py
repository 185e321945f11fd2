#!/usr/bin/env python3
"""The scripted fake upstream (fake_upstream.py) started the way warden starts llama-server.

For tests that need warden to manage its llama-server child but cannot give it the real one (e.g.
warden running as an unprivileged user that cannot read the real model): warden is started with
`--llama-server tests/fake/fake_llama_server.py --model <any file>`. It accepts llama-server's
command line (-m, --alias, --host, --port, --api-key-file, and ignores the rest), answers
GET /health with 200 like a loaded llama-server, and requires `Authorization: Bearer <key>` on
every other route when --api-key-file was given (401 otherwise, as llama-server does). Everything
else is fake_upstream.py: POST /script, GET /stats, the scripted turns.
"""
import os
import pathlib
import sys
from http.server import ThreadingHTTPServer

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import fake_upstream  # noqa: E402


def parse_args(argv):
    opts, i = {}, 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("-") and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            opts[a] = argv[i + 1]
            i += 2
        else:
            opts[a] = True
            i += 1
    return opts


def main():
    opts = parse_args(sys.argv[1:])
    key = None
    if "--api-key-file" in opts:
        with open(opts["--api-key-file"]) as f:
            key = f.readline().strip()

    class Handler(fake_upstream.Handler):
        def authorized(self):
            if key is None or self.headers.get("Authorization") == "Bearer " + key:
                return True
            self.send_json(401, {"error": {"code": 401, "message": "Invalid API Key", "type": "authentication_error"}})
            return False

        def do_GET(self):
            if self.path == "/health":
                return self.send_json(200, {"status": "ok"})
            if self.authorized():
                super().do_GET()

        def do_POST(self):
            if self.authorized():
                super().do_POST()

    srv = ThreadingHTTPServer((opts.get("--host", "127.0.0.1"), int(opts.get("--port", 0))), Handler)
    srv.daemon_threads = True
    print(f"main: server is listening on http://{srv.server_address[0]}:{srv.server_address[1]} (fake, pid {os.getpid()})",
          flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
