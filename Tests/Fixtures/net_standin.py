#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stand-in HTTP server for LapseNet's tests (127.0.0.1 only). Prints `PORT <n>` first.

GET  /bytes/<n>                 n deterministic bytes (i % 251)
GET  /status/<code>             that status; ?retry_after=S adds Retry-After
GET  /flaky/<id>                first ?fail=N requests for <id> fail with ?code=C (500 default, 429 with
                                ?retry_after=S), ?mode=stall stalls ?stall=S seconds, ?mode=truncate cuts the body
GET  /stall?seconds=S           sleeps, then 200
GET  /slow?ms=M                 sleeps M ms, then 200 (for concurrency counting)
GET  /echo-headers              the request headers as JSON
GET  /redirect?to=URL&code=C     a redirect (default 307) to URL; POST too
GET  /endless                   200 without Content-Length, chunked, bytes without end (1 MB a chunk)
GET  /declared/<n>              headers declaring Content-Length n, then 10 bytes and the connection closed
GET  /trickle?every=S           200 with Content-Length 1e6, one byte every S seconds (default 0.2)
GET  /empty-then/<id>?fail=N     the first N requests for <id> are answered 200 with no body, then 1000 bytes
POST /reset-reused              on a kept-alive connection that served a request before: the connection reset
                                without an answer (a server closing an idle connection as the request comes); on a
                                new connection, the body back (as /echo)
POST /echo                      the request body back, as application/json
GET  /stats                     {"total": n, "max_in_flight": n, "by_path": {...}}
POST /reset                     clears counters
"""
import json, signal, sys, threading, time, argparse
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
from urllib.parse import urlparse, parse_qs

lock = threading.Lock()
state = {"total": 0, "in_flight": 0, "max_in_flight": 0, "by_path": {}, "flaky": {}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, body=b"", ctype="application/octet-stream", headers=None, declared=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(declared if declared is not None else len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if declared is not None:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self):
        self.route("POST")

    def do_GET(self):
        self.route("GET")

    def route(self, method):
        self.served = getattr(self, "served", 0) + 1
        url = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        path = url.path
        if path == "/stats":
            with lock:
                body = json.dumps({k: state[k] for k in ("total", "max_in_flight", "by_path")}).encode()
            return self.send(200, body, "application/json")
        if path == "/reset":
            with lock:
                state.update(total=0, max_in_flight=0, by_path={}, flaky={})
            return self.send(200, b"{}", "application/json")
        with lock:
            state["total"] += 1
            state["in_flight"] += 1
            state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
            state["by_path"][path] = state["by_path"].get(path, 0) + 1
        try:
            self.serve(method, path, q)
        finally:
            with lock:
                state["in_flight"] -= 1

    def serve(self, method, path, q):
        parts = path.strip("/").split("/")
        if method == "POST" and path == "/reset-reused":
            if self.served > 1:
                import socket, struct
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
                return
            n = int(self.headers.get("Content-Length", "0"))
            return self.send(200, self.rfile.read(n), "application/json", {"Connection": "close"})
        if method == "POST" and path == "/echo":
            n = int(self.headers.get("Content-Length", "0"))
            return self.send(200, self.rfile.read(n), "application/json")
        if path == "/echo-headers":
            return self.send(200, json.dumps({k.lower(): v for k, v in self.headers.items()}).encode(), "application/json")
        if path == "/redirect":
            self.send_response(int(q.get("code", "307")))
            self.send_header("Location", q["to"])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if path == "/endless":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = bytes(1 << 20)
            try:
                while True:
                    self.wfile.write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
                return
        if parts[0] == "declared":
            return self.send(200, bytes(10), declared=int(parts[1]))
        if path == "/trickle":
            self.send_response(200)
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            try:
                for _ in range(1000000):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(float(q.get("every", "0.2")))
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
                return
        if parts[0] == "empty-then":
            with lock:
                seen = state["flaky"].get(path, 0)
                state["flaky"][path] = seen + 1
            if seen < int(q.get("fail", "1")):
                return self.send(200, b"", "application/json")
            return self.send(200, bytes(i % 251 for i in range(1000)))
        if parts[0] == "bytes":
            n = int(parts[1])
            return self.send(200, bytes(i % 251 for i in range(n)))
        if parts[0] == "status":
            h = {"Retry-After": q["retry_after"]} if "retry_after" in q else {}
            return self.send(int(parts[1]), json.dumps({"error": {"status": "X", "path": path}}).encode(),
                             "application/json", h)
        if parts[0] == "stall":
            time.sleep(float(q.get("seconds", "5")))
            return self.send(200, b"late")
        if parts[0] == "slow":
            time.sleep(float(q.get("ms", "50")) / 1000)
            return self.send(200, b"ok")
        if parts[0] == "flaky":
            key = parts[1]
            with lock:
                seen = state["flaky"].get(key, 0)
                state["flaky"][key] = seen + 1
            if seen < int(q.get("fail", "1")):
                mode = q.get("mode", "status")
                if mode == "stall":
                    time.sleep(float(q.get("stall", "3")))
                    return self.send(200, b"late")
                if mode == "truncate":
                    body = bytes(i % 251 for i in range(1000))
                    return self.send(200, body[:300], declared=1000)
                code = int(q.get("code", "500"))
                h = {"Retry-After": q["retry_after"]} if "retry_after" in q else {}
                return self.send(code, b"{}", "application/json", h)
            return self.send(200, bytes(i % 251 for i in range(1000)))
        return self.send(404, b"not found", "text/plain")


def main():
    # Foundation's Process starts children with most signals blocked; unblock them so stop() (SIGTERM) works.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, set(signal.Signals))
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
