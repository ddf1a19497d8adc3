# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared parts of Lapse's panorama stand-ins: request counting, switchable faults, tile and image making."""
import json, math, os, select, signal, socket, subprocess, threading, time, zlib
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
from urllib.parse import urlparse, parse_qs

FAULT_KINDS = ["500", "429", "stall", "truncate"]


def unblock_signals():
    # Foundation's Process starts children with most signals blocked; unblock them so SIGTERM stops us.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, set(signal.Signals))
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def distance_m(lat1, lng1, lat2, lng2):
    r = 6371008.8
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lng2 - lng1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(min(1, math.sqrt(a)))


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.total = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.by_kind = {}
        self.faults = {}
        self.fault_count = 0

    def snapshot(self):
        with self.lock:
            return {"total": self.total, "max_in_flight": self.max_in_flight, "by_kind": dict(self.by_kind),
                    "faults": self.fault_count}


class FaultPlan:
    """Deterministic faults: a request (identified by method, path and chosen query parameters) is picked with
    probability `rate` by its hash; its first 1 or 2 attempts fail in one of four ways."""

    def __init__(self, rate, retry_after, stall):
        self.rate, self.retry_after, self.stall = rate, retry_after, stall

    def fault_for(self, stats, ident):
        if self.rate <= 0:
            return None
        h = zlib.crc32(ident.encode())
        if (h % 1000) >= self.rate * 1000:
            return None
        failures = 1 + (h >> 12) % 2
        with stats.lock:
            seen = stats.faults.get(ident, 0)
            stats.faults[ident] = seen + 1
            if seen >= failures:
                return None
            stats.fault_count += 1
        return FAULT_KINDS[(h >> 16) % 4]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "LapseStandIn/1"

    def log_message(self, *args):
        pass

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def send(self, code, body=b"", ctype="application/json", headers=None):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def body_json(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return None

    def client_gone(self):
        r, _, _ = select.select([self.connection], [], [], 0)
        if not r:
            return False
        try:
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def apply_fault(self, kind, plan, sample=b"x" * 4000):
        if kind == "500":
            return self.send(500, {"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}})
        if kind == "429":
            return self.send(429, {"error": {"code": 429, "message": "Quota", "status": "RESOURCE_EXHAUSTED"}},
                             headers={"Retry-After": str(plan.retry_after)})
        if kind == "stall":
            end = time.time() + plan.stall
            while time.time() < end:  # until the client gives up (closes) or the stall ends
                if self.client_gone():
                    self.close_connection = True
                    return
                time.sleep(0.01)
            return self.send(200, sample, "image/jpeg")
        if kind == "truncate":
            self.send_response(200)
            self.send_header("Content-Type", "image/jpeg")
            self.send_header("Content-Length", str(len(sample)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(sample[: len(sample) // 3])
            self.wfile.flush()
            self.close_connection = True
            return

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def dispatch(self, method):
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        stats = self.server.stats
        if url.path == "/_stats":
            return self.send(200, stats.snapshot())
        if url.path == "/_reset":
            with stats.lock:
                stats.reset()
            return self.send(200, {})
        with stats.lock:
            stats.total += 1
            stats.in_flight += 1
            stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        try:
            self.route(method, url.path, query)
        finally:
            with stats.lock:
                stats.in_flight -= 1

    def count(self, kind):
        stats = self.server.stats
        with stats.lock:
            stats.by_kind[kind] = stats.by_kind.get(kind, 0) + 1


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", *args], check=True)


def make_tiles(src, width, height, tile, folder):
    """Cuts `src` scaled to width x height into tile x tile JPEGs (row by row, `<index>.jpg`), padding the
    right and bottom edge tiles with black."""
    cols, rows = -(-width // tile), -(-height // tile)
    if os.path.isdir(folder):
        return cols, rows
    # Made in a private folder and renamed into place, so stand-ins sharing a work folder never see half a set.
    temp = f"{folder}.tmp-{os.getpid()}-{threading.get_ident()}"
    os.makedirs(temp, exist_ok=True)
    ffmpeg("-i", src, "-vf",
           f"scale={width}:{height}:flags=bicubic,format=yuv444p,pad={cols * tile}:{rows * tile}:0:0:black,untile={cols}x{rows}",
           "-fps_mode", "passthrough", "-q:v", "1", "-qmin", "1", "-pix_fmt", "yuvj444p", "-start_number", "0",
           os.path.join(temp, "%d.jpg"))
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    try:
        os.rename(temp, folder)
    except OSError:  # another stand-in made it first
        subprocess.run(["rm", "-rf", temp])
    return cols, rows


def make_black(path, size=512):
    if not os.path.exists(path):
        temp = f"{path}.tmp-{os.getpid()}.jpg"
        ffmpeg("-f", "lavfi", "-i", f"color=black:s={size}x{size}", "-frames:v", "1", "-q:v", "2",
               "-pix_fmt", "yuvj420p", temp)
        os.replace(temp, path)


def serve(handler, port, setup):
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    server.stats = Stats()
    setup(server)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()
