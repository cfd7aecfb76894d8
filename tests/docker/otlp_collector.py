#!/usr/bin/env python3
"""A loopback OTLP/HTTP collector for tests: stores every POST body.

usage: otlp_collector.py OUT_FILE PORT_FILE [SECONDS]
Listens on 127.0.0.1 (ephemeral port, written to PORT_FILE), appends each
request body as one line to OUT_FILE, answers 200. Exits after SECONDS (default 120).
"""
import http.server
import sys
import threading


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        with open(sys.argv[1], "ab") as f:
            f.write(body.replace(b"\n", b" ") + b"\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[2], "w") as f:
    f.write(str(server.server_address[1]))
threading.Timer(float(sys.argv[3]) if len(sys.argv) > 3 else 120,
                server.shutdown).start()
server.serve_forever()
