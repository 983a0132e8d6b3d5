"""A webhook endpoint that checks every delivery with the Standard Webhooks project's own
Python library (PyPI `standardwebhooks`, installed by scripts/standardwebhooks-venv.sh), the
way a customer's receiver would: Webhook(secret).verify(raw body, headers), nothing renamed.

Prints {"port": N} as its first line on stdout once it listens on 127.0.0.1:N, then serves:
  POST /_secrets   {"<path>": "<secret>", ...}: the secret of the endpoint at each path
  POST <path>      a delivery: 204 when the library accepts it, else 400 with its error
  GET  /_log       every delivery so far, oldest first:
                   [{"path", "headers", "body", "verified", "error"}]
It runs until stdin closes (the test that spawned it ended) or it is killed.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook, WebhookVerificationError

secrets = {}
log = []
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def _answer(self, status, body=b"", content_type="text/plain"):
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path != "/_log":
            return self._answer(404, b"no such route")
        with lock:
            body = json.dumps(log).encode()
        self._answer(200, body, "application/json")

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path == "/_secrets":
            with lock:
                secrets.update(json.loads(raw))
            return self._answer(204)
        with lock:
            secret = secrets.get(self.path)
        if secret is None:
            return self._answer(404, f"no secret for {self.path}".encode())
        headers = {name: value for name, value in self.headers.items()}
        try:
            Webhook(secret).verify(raw, headers)
            verified, error = True, None
        except WebhookVerificationError as err:
            verified, error = False, str(err)
        with lock:
            log.append(
                {
                    "path": self.path,
                    "headers": headers,
                    "body": raw.decode("utf-8"),
                    "verified": verified,
                    "error": error,
                }
            )
        self._answer(204 if verified else 400, (error or "").encode())

    def log_message(self, *args):
        pass  # the test reads /_log; stderr stays for real errors


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    sys.stdin.read()  # returns when the parent closes the pipe or exits
    server.shutdown()


if __name__ == "__main__":
    main()
