"""A real HTTP server on loopback whose answers a test scripts (the retry tests) or which
records what it receives (the live test's webhook endpoint)."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class Recorder:
    def __init__(self):
        self.requests = []
        self.script = []
        self.lock = threading.Lock()

    def answer(self, handler):
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length)
        with self.lock:
            self.requests.append(
                {
                    "method": handler.command,
                    "headers": {k.lower(): v for k, v in handler.headers.items()},
                    "body": body,
                    "at": time.monotonic(),
                }
            )
            status, headers = self.script.pop(0) if self.script else (200, {})
        if status != 200:
            payload = {"errorCode": "RATE_LIMITED" if status == 429 else "UNAVAILABLE", "errorMessage": "not now"}
        elif handler.command == "GET":  # an empty list, as GET /configs gives it
            payload = {"cursor": {"hasMore": False, "data": []}}
        else:  # an event already accepted, as POST /events gives it
            payload = {"data": {"type": "a.b", "configs": 0, "deliveries": []}}
        data = json.dumps(payload).encode()
        handler.send_response(status)
        for name, value in {"content-type": "application/json", **headers}.items():
            handler.send_header(name, value)
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)


@pytest.fixture
def server():
    recorder = Recorder()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            recorder.answer(self)

        do_POST = do_GET

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    recorder.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield recorder
    httpd.shutdown()
    httpd.server_close()
