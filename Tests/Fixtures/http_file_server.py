#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A small HTTP file server for Lapse's tests and benchmarks, bound to 127.0.0.1.

Serves the files of --root (GET and HEAD), with byte-range support (RFC 7233, one range per request)
unless --no-range is given, and counts the body bytes it sends.

Special paths:
  /__stats                  JSON {"bytes": body bytes sent, "requests": file requests served}
  /__reset                  sets the counters to zero
  /__status/<code>/<path>   answers with that HTTP status (e.g. 404, 403) and a short text body
  /__stall/<path>           sends the headers and the first --stall-after bytes of <path>, then nothing
                            (holds the connection open until the client gives up)
  /__again/<path>           every request (every reconnection) gets the first 100 bytes of its range, then
                            nothing: a client that reconnects is answered again and again
  /__trickle/<path>         the file, one byte every 0.05 s
  /__selfref.m3u8           an HLS master playlist whose only variant is itself
  /__loop-a.m3u8            an HLS master playlist whose variant /__loop-b.m3u8 is a master playlist naming it
  /__master.m3u8            an HLS master playlist of one variant, /hls/index.m3u8 (served from --root)
  /__endless.m3u8           an HLS media playlist of 200 000 segments that do not exist (404)
  /__live.m3u8              a live HLS playlist (no EXT-X-ENDLIST) of /hls/seg000.ts and seg001.ts
Any query string is ignored (tests use one to check that it is never printed).

Prints "PORT <n>" as its first line on stdout, then serves until killed.
"""
import argparse
import json
import os
import re
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

lock = threading.Lock()
stats = {"bytes": 0, "requests": 0}


def count(n):
    with lock:
        stats["bytes"] += n


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "LapseTestHTTP/1.0"

    def log_message(self, fmt, *args):  # quiet unless --verbose
        if self.server.options.verbose:
            sys.stderr.write("http_file_server: " + (fmt % args) + "\n")

    def do_HEAD(self):
        self.handle_request(head=True)

    def do_GET(self):
        self.handle_request(head=False)

    def send_text(self, code, text, head=False):
        body = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def handle_request(self, head):
        opts = self.server.options
        path = unquote(urlsplit(self.path).path)
        if path == "/__stats":
            with lock:
                text = json.dumps(stats)
            return self.send_text(200, text, head)
        if path == "/__reset":
            with lock:
                stats["bytes"] = 0
                stats["requests"] = 0
            return self.send_text(200, "ok", head)
        m = re.match(r"^/__status/(\d{3})(/.*)?$", path)
        if m:
            return self.send_text(int(m.group(1)), "status %s\n" % m.group(1), head)
        if path in ("/__selfref.m3u8", "/__endless.m3u8", "/__live.m3u8", "/__loop-a.m3u8", "/__loop-b.m3u8",
                    "/__master.m3u8"):
            if path == "/__live.m3u8":
                text = ("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:0\n"
                        "#EXTINF:4.0,\n/hls/seg000.ts\n#EXTINF:4.0,\n/hls/seg001.ts\n")
            elif path in ("/__selfref.m3u8", "/__loop-a.m3u8", "/__loop-b.m3u8", "/__master.m3u8"):
                variant = {"/__selfref.m3u8": "/__selfref.m3u8", "/__loop-a.m3u8": "__loop-b.m3u8",
                           "/__loop-b.m3u8": "/__loop-a.m3u8", "/__master.m3u8": "hls/index.m3u8"}[path]
                text = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=320x240\n%s\n" % variant
            else:
                text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n" + "".join(
                    "#EXTINF:2.0,\n/__missing/%d.ts\n" % i for i in range(200000)) + "#EXT-X-ENDLIST\n"
            body = text.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.apple.mpegurl")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)
            return
        stall = again = trickle = False
        if path.startswith("/__again/"):
            again = True
            path = path[len("/__again"):]
        if path.startswith("/__trickle/"):
            trickle = True
            path = path[len("/__trickle"):]
        if path.startswith("/__stall/"):
            stall = True
            path = path[len("/__stall"):]
        full = os.path.realpath(os.path.join(opts.root, path.lstrip("/")))
        if not full.startswith(os.path.realpath(opts.root)) or not os.path.isfile(full):
            return self.send_text(404, "not found\n", head)
        size = os.path.getsize(full)
        start, end = 0, size - 1
        partial = False
        rng = self.headers.get("Range")
        if rng and not opts.no_range:
            m = re.match(r"^bytes=(\d*)-(\d*)$", rng.strip())
            if m and (m.group(1) or m.group(2)):
                if m.group(1):
                    start = int(m.group(1))
                    end = int(m.group(2)) if m.group(2) else size - 1
                else:
                    start = max(0, size - int(m.group(2)))
                end = min(end, size - 1)
                if start >= size or start > end:
                    self.send_response(416)
                    self.send_header("Content-Range", "bytes */%d" % size)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                partial = True
        length = end - start + 1
        self.send_response(206 if partial else 200)
        ctype = "video/mp4"
        if full.endswith(".m3u8"):
            ctype = "application/vnd.apple.mpegurl"
        elif full.endswith(".ts"):
            ctype = "video/mp2t"
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(length))
        if not opts.no_range:
            self.send_header("Accept-Ranges", "bytes")
        if partial:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
        self.end_headers()
        if head:
            return
        with lock:
            stats["requests"] += 1
        with open(full, "rb") as f:
            f.seek(start)
            remaining = length
            if stall:  # only the first --stall-after bytes of the file are ever sent
                remaining = min(remaining, max(0, opts.stall_after - start))
            if again:  # the first 100 bytes of every range
                remaining, stall = min(remaining, 100), True
            try:
                while remaining > 0:
                    if trickle:
                        time.sleep(0.05)
                    chunk = f.read(min(1 if trickle else 65536, remaining))
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    count(len(chunk))
                    remaining -= len(chunk)
                if stall:
                    self.wfile.flush()
                    time.sleep(opts.stall_seconds)
            except (BrokenPipeError, ConnectionResetError):
                pass


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # Clients (ffmpeg) close connections mid-response when they seek: not worth a traceback.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--root", default=".")
    p.add_argument("--no-range", action="store_true", help="ignore Range headers, never send Accept-Ranges")
    p.add_argument("--stall-after", type=int, default=2048, help="bytes sent before /__stall/ paths stop")
    p.add_argument("--stall-seconds", type=float, default=3600)
    p.add_argument("--verbose", action="store_true")
    opts = p.parse_args()
    # The test runner blocks SIGTERM in its threads and children inherit the mask: unblock it, or
    # LocalServer.stop() (SIGTERM, then wait) would wait forever.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    server = Server(("127.0.0.1", opts.port), Handler)
    server.options = opts
    print("PORT %d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
