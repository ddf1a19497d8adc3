#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stand-in for Google's Map Tiles API (Street View) on 127.0.0.1, for Lapse's tests. Prints `PORT <n>` first.

A small world of panoramas cut from the real 360 photos in <data>/pano360 (tiles are made with the ffmpeg CLI on
first request, into --workdir): both size families of Google's own panoramas (16384 and 13312 wide, the latter with
black-padded edge tiles), a user photosphere 7680 wide, a panorama whose high zoom levels are all-black placeholders
(as the older endpoints answered) and one whose high zoom levels are missing.

Zoom levels as the Map Tiles documentation gives them: zoom 0 ... 5, zoom 5 always the full resolution of the
metadata's imageWidth x imageHeight, the image at zoom z being imageWidth >> (5 - z) by imageHeight >> (5 - z), cut
into 512 x 512 tiles from the top left. A tile outside that grid, a zoom outside 0 ... 5 or imagery that is missing
answers an error (400 INVALID_ARGUMENT or 404 NOT_FOUND), never an image; /_stats counts them as "tile_errors".
Caching: tiles and metadata carry --cache-control (default "private, max-age=86400"; "" for no header) and an
ETag; a request with a matching If-None-Match answers 304 Not Modified without a body (counted as "not_modified").
Quota errors as Google sends them: --quota-errors N makes the first N requests answer 403 with reason
rateLimitExceeded (and 429 RESOURCE_EXHAUSTED every other time), then serve normally.

  POST /v1/createSession?key=K              {"mapType": "streetview"} -> {"session", "expiry", ...}
  POST /v1/streetview/panoIds?session&key   {"locations": [{"lat","lng"}], "radius"} -> {"panoIds": [...]}
  GET  /v1/streetview/metadata?session&key&panoId
  GET  /v1/streetview/tiles/Z/X/Y?session&key&panoId
  GET  /_stats, /_reset                      counters (total, max_in_flight, by_kind, faults)
  GET  /_log                                 every tile request as "panoId z/x/y status"

A hostile server (--hostile NAME=VALUE, repeatable): metadata with tileWidth=V and tileHeight=V, imageWidth=V,
copyright=N (a copyright line of N characters), padding=N (N spaces after the metadata's JSON); huge-tiles=1
(every tile a 16000 x 8000 JPEG instead of 512 x 512); empty-panoids=N (the first N panoIds answers are 200 with
no body); echo-secrets=1 (every metadata answer a 403 PERMISSION_DENIED whose message repeats the request's key and
session token, as a proxy or a verbose error page may).

Options: --key K (default test-key), --faults RATE (0..1), --retry-after S, --stall S, --data DIR, --workdir DIR,
--session-requests N (a session token stops working after N requests), --quota-errors N, --indoor ID (that
panorama's metadata says imageryType "indoor", as an indoor photosphere's; repeatable).
"""
import argparse
import json, os, sys, tempfile, threading, time, uuid, zlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from standin_common import Handler, FaultPlan, distance_m, make_tiles, make_black, serve, unblock_signals

WORLD = [
    # Newer family: 16384 x 8192 at zoom 5.
    dict(id="CAoSNewFamily_pano-1", src="trekview_360/GSAG2002.JPG", lat=55.70000, lng=13.19000, width=16384,
         height=8192, heading=30.5, tilt=90.0, roll=0.0, date="2020-05", copyright="© Stand-in Imagery"),
    # Older family: 13312 x 6656 at zoom 5 (padded edge tiles from zoom 3 up).
    dict(id="CAoSOldFamily_pano-2", src="trekview_360/R0014760.JPG", lat=55.70050, lng=13.19000, width=13312,
         height=6656, heading=200.0, tilt=91.5, roll=-0.5, date="2019-08", copyright="© Stand-in Imagery"),
    # Imagery only up to zoom 1; zoom 2 and up answer with all-black placeholder tiles.
    dict(id="CAoSDark_pano-3", src="trekview_360/R0014760.JPG", lat=55.70100, lng=13.19000, width=13312,
         height=6656, heading=90.0, tilt=90.0, roll=0.0, date="2018-01", copyright="© Stand-in Imagery",
         imagery_max_zoom=1),
    # A user photosphere: any size; 7680 x 3840 at zoom 5 is 240 x 120 at zoom 0 (15 x 8 tiles at zoom 5).
    dict(id="CAoSPhotosphere_pano-4", src="trekview_360/GSAG2002.JPG", lat=55.70000, lng=13.19500, width=7680,
         height=3840, heading=45.0, tilt=90.0, roll=0.0, date="2023-06", copyright="© Photographer Example"),
    # Newer family whose zoom 3 and up are missing: those tiles answer 404 NOT_FOUND.
    dict(id="CAoSGapped_pano-5", src="trekview_360/GSAG2002.JPG", lat=55.70050, lng=13.19500, width=16384,
         height=8192, heading=10.0, tilt=90.0, roll=0.0, date="2021-03", copyright="© Stand-in Imagery",
         imagery_max_zoom=2, missing="error"),
    # Metadata but no imagery at any zoom: every tile answers 404 NOT_FOUND.
    dict(id="CAoSGone_pano-6", src="trekview_360/GSAG2002.JPG", lat=55.70025, lng=13.19500, width=16384,
         height=8192, heading=10.0, tilt=90.0, roll=0.0, date="2021-03", copyright="© Stand-in Imagery",
         imagery_max_zoom=-1, missing="error"),
]
BY_ID = {p["id"]: p for p in WORLD}
TILE = 512
HIGHEST_ZOOM = 5


def zoom_size(p, z):
    """The image size at zoom z (documented rule: zoom 5 is the full resolution)."""
    shift = HIGHEST_ZOOM - z
    return p["width"] >> shift, p["height"] >> shift


def error(code, status, message, reasons=()):
    body = {"error": {"code": code, "message": message, "status": status}}
    if reasons:
        body["error"]["errors"] = [{"message": message, "domain": "global", "reason": r} for r in reasons]
    return code, body


class MapTiles(Handler):
    def cacheable(self, kind, body, ctype):
        """Sends `body` with the caching headers, or 304 when the client already holds it."""
        s = self.server
        etag = '"%08x"' % zlib.crc32(body if isinstance(body, bytes) else json.dumps(body, sort_keys=True).encode())
        headers = {"ETag": etag}
        if s.cache_control:
            headers["Cache-Control"] = s.cache_control
        if self.headers.get("If-None-Match") == etag:
            self.count("not_modified")
            return self.send(304, b"", ctype, headers)
        self.count(kind)
        return self.send(200, body, ctype, headers)

    def route(self, method, path, q):
        s = self.server
        ident = method + " " + path + " " + q.get("panoId", "")
        if method == "GET" and path == "/_log":
            with s.stats.lock:
                return self.send(200, list(s.log))
        if method == "POST" and path == "/v1/createSession":
            self.count("createSession")
            body = self.body_json()
            if q.get("key") != s.key:
                return self.send(400, {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                                                 "status": "INVALID_ARGUMENT"}})
            if not body or body.get("mapType") != "streetview":
                return self.send(400, {"error": {"code": 400, "message": "mapType must be streetview", "status": "INVALID_ARGUMENT"}})
            token = "session-" + uuid.uuid4().hex
            s.sessions.add(token)
            return self.send(200, {"session": token, "expiry": str(int(time.time()) + 3600), "tileWidth": TILE,
                                   "tileHeight": TILE, "imageFormat": "jpeg"})
        if q.get("key") != s.key:
            return self.send(400, {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                                             "status": "INVALID_ARGUMENT"}})
        if q.get("session") in s.sessions and s.session_requests > 0:
            with s.stats.lock:
                s.session_use[q["session"]] = s.session_use.get(q["session"], 0) + 1
                if s.session_use[q["session"]] > s.session_requests:
                    s.sessions.discard(q["session"])
        if q.get("session") not in s.sessions:
            return self.send(400, {"error": {"code": 400, "message": "Invalid session token.", "status": "INVALID_ARGUMENT"}})
        with s.stats.lock:
            quota = s.quota_errors > 0
            if quota:
                s.quota_errors -= 1
                s.quota_sent += 1
        if quota:
            if method == "POST":
                self.body_json()  # read the body, or it would be taken for the next request on this connection
            self.count("quota_errors")
            if s.quota_sent % 2:
                code, body = error(403, "PERMISSION_DENIED", "Rate Limit Exceeded", ["rateLimitExceeded"])
            else:
                code, body = error(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Tile requests'.")
            return self.send(code, body)
        fault = s.plan.fault_for(s.stats, ident)
        if fault:
            return self.apply_fault(fault, s.plan, s.black)
        if method == "POST" and path == "/v1/streetview/panoIds":
            self.count("panoIds")
            body = self.body_json() or {}
            locations = body.get("locations", [])
            if not locations or len(locations) > 100:
                return self.send(400, {"error": {"code": 400, "message": "between 1 and 100 locations", "status": "INVALID_ARGUMENT"}})
            radius = float(body.get("radius", 50))
            ids = []
            for loc in locations:
                best = min(((distance_m(loc["lat"], loc["lng"], p["lat"], p["lng"]), p["id"]) for p in WORLD))
                ids.append(best[1] if best[0] <= radius else "")
            with s.stats.lock:
                empty = s.hostile.get("empty-panoids", 0) > 0
                if empty:
                    s.hostile["empty-panoids"] -= 1
            if empty:
                self.count("empty_answers")
                return self.send(200, b"", "application/json")
            return self.send(200, {"panoIds": ids})
        if method == "GET" and path == "/v1/streetview/metadata":
            if s.hostile.get("echo-secrets"):
                self.count("metadata")
                message = "Permission denied for key %s with session %s." % (q.get("key"), q.get("session"))
                return self.send(403, {"error": {"code": 403, "message": message, "status": "PERMISSION_DENIED"}})
            p = BY_ID.get(q.get("panoId", ""))
            if not p:
                self.count("metadata")
                return self.send(404, {"error": {"code": 404, "message": "Panorama not found.", "status": "NOT_FOUND"}})
            h = s.hostile
            answer = {"panoId": p["id"], "lat": p["lat"], "lng": p["lng"], "imageHeight": p["height"],
                      "imageWidth": h.get("imageWidth", p["width"]), "tileHeight": h.get("tileHeight", TILE),
                      "tileWidth": h.get("tileWidth", TILE), "heading": p["heading"], "tilt": p["tilt"],
                      "roll": p["roll"], "imageryType": "indoor" if p["id"] in s.indoor else "outdoor", "date": p["date"],
                      "copyright": "©" * h["copyright"] if "copyright" in h else p["copyright"],
                      "links": p.get("links", [])}
            if "padding" in h:
                return self.cacheable("metadata", json.dumps(answer).encode() + b" " * h["padding"], "application/json")
            return self.cacheable("metadata", answer, "application/json")
        if method == "GET" and path.startswith("/v1/streetview/tiles/"):
            try:
                z, x, y = (int(v) for v in path.split("/")[-3:])
            except ValueError:
                self.count("tiles")
                return self.send(400, {"error": {"code": 400, "message": "bad tile", "status": "INVALID_ARGUMENT"}})
            p = BY_ID.get(q.get("panoId", ""))
            if not p:
                self.count("tiles")
                return self.send(404, {"error": {"code": 404, "message": "Panorama not found.", "status": "NOT_FOUND"}})
            status, body = self.server.tile(p, z, x, y)
            if status == 200 and s.hostile.get("huge-tiles"):
                body = s.huge_tile()
            with s.stats.lock:
                s.log.append("%s %d/%d/%d %d" % (p["id"], z, x, y, status))
            if status != 200:
                self.count("tiles")
                self.count("tile_errors")
                return self.send(status, body)
            # A fault of the network or a proxy, not of the API: a whole JPEG's markers around broken data, on the
            # first --corrupt-attempts attempts at a tile picked (by its hash) with probability --corrupt.
            ident_tile = "%s/%d/%d/%d" % (p["id"], z, x, y)
            if s.corrupt > 0 and (zlib.crc32(ident_tile.encode()) % 1000) < s.corrupt * 1000:
                with s.stats.lock:
                    seen = s.corrupted.get(ident_tile, 0)
                    s.corrupted[ident_tile] = seen + 1
                if seen < s.corrupt_attempts:
                    self.count("corrupt_tiles")
                    return self.send(200, b"\xff\xd8\xff\xe0" + bytes((i * 37 + 11) % 251 for i in range(len(body) - 6)) + b"\xff\xd9",
                                     "image/jpeg", headers={"Cache-Control": s.cache_control} if s.cache_control else None)
            return self.cacheable("tiles", body, "image/jpeg")
        return self.send(404, {"error": {"code": 404, "message": "no such endpoint", "status": "NOT_FOUND"}})


def main():
    unblock_signals()
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--key", default="test-key")
    ap.add_argument("--faults", type=float, default=0.0)
    ap.add_argument("--retry-after", type=float, default=1)
    ap.add_argument("--stall", type=float, default=30)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "../../../shared/data/pano360"))
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--session-requests", type=int, default=0, help="a session token expires after N requests (0: never)")
    ap.add_argument("--quota-errors", type=int, default=0, help="the first N requests answer quota/rate errors")
    ap.add_argument("--cache-control", default="private, max-age=86400", help="Cache-Control of tiles and metadata")
    ap.add_argument("--corrupt", type=float, default=0.0, help="share of tiles whose first answers are a broken JPEG body")
    ap.add_argument("--hostile", action="append", default=[], help="NAME=VALUE: a hostile answer (see above)")
    ap.add_argument("--corrupt-attempts", type=int, default=1, help="how many answers of such a tile are broken")
    ap.add_argument("--indoor", action="append", default=[], help="ID: this panorama's imageryType is indoor")
    a = ap.parse_args()
    workdir = a.workdir or tempfile.mkdtemp(prefix="maptiles-standin-")
    os.makedirs(workdir, exist_ok=True)
    black_path = os.path.join(workdir, "black.jpg")
    make_black(black_path, TILE)
    black = open(black_path, "rb").read()
    locks, lock = {}, threading.Lock()

    def tile(p, z, x, y):
        """(status, body): 200 and the JPEG, or the documented error."""
        if not 0 <= z <= HIGHEST_ZOOM:
            return error(400, "INVALID_ARGUMENT", "Invalid zoom level %d: must be between 0 and %d." % (z, HIGHEST_ZOOM))
        w, h = zoom_size(p, z)
        cols, rows = -(-w // TILE), -(-h // TILE)
        if not (0 <= x < cols and 0 <= y < rows):
            return error(404, "NOT_FOUND", "Requested entity was not found.")
        if z > p.get("imagery_max_zoom", 99):
            if p.get("missing") == "error":
                return error(404, "NOT_FOUND", "Requested entity was not found.")
            return 200, black
        folder = os.path.join(workdir, p["id"], str(z))
        with lock:
            l = locks.setdefault((p["id"], z), threading.Lock())
        with l:
            make_tiles(os.path.join(a.data, p["src"]), w, h, TILE, folder)
        with open(os.path.join(folder, f"{y * cols + x}.jpg"), "rb") as f:
            return 200, f.read()

    def setup(server):
        server.key = a.key
        server.sessions = set()
        server.session_requests = a.session_requests
        server.session_use = {}
        server.quota_errors = a.quota_errors
        server.cache_control = a.cache_control
        server.quota_sent = 0
        server.log = []
        server.plan = FaultPlan(a.faults, a.retry_after, a.stall)
        server.black = black
        server.tile = tile
        server.corrupt = a.corrupt
        server.corrupted = {}
        server.corrupt_attempts = a.corrupt_attempts
        server.hostile = {k: int(v) for k, v in (h.split("=", 1) for h in a.hostile)}
        server.indoor = set(a.indoor)

        def huge_tile():
            path = os.path.join(workdir, "huge-16000x8000.jpg")
            with lock:
                if not os.path.exists(path):
                    import subprocess
                    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "color=gray:s=16000x8000",
                                    "-frames:v", "1", path + ".tmp.jpg"], check=True)
                    os.replace(path + ".tmp.jpg", path)
            with open(path, "rb") as f:
                return f.read()
        server.huge_tile = huge_tile

    serve(MapTiles, a.port, setup)


if __name__ == "__main__":
    main()
