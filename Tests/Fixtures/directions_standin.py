#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stand-in for the Google Directions API and an OSRM server, on 127.0.0.1, for Lapse's tests.

Usage: directions_standin.py --port 0 [--data DIR]   (prints "PORT <n>" first)

The first path component picks a scenario, so a test points the client's base URL at
http://127.0.0.1:<port>/<scenario>:

Google (…/maps/api/directions/json?origin=…&destination=…[&waypoints=a|b|…]&key=…):
  toronto_montreal   the real response from googlemaps/openapi-specification (DIR/googlemaps_openapi_spec)
  zero_results, invalid, heading, side_of_road   the other real responses of that folder
  over_query_limit   the real OverQueryLimitResponse.json (DIR/google_maps_services_java)
  overview_only      the real GetDirectionsResponse.json (Sydney->Melbourne, no steps)
  status_<STATUS>    {"status": STATUS, "error_message": "… key=<the key sent> …"} (to test key redaction)
  synthetic          a route computed from the request: one leg per stop, each leg two steps of
                     straight lines, encoded at precision 5; more than 25 waypoints give
                     MAX_WAYPOINTS_EXCEEDED as Google does. A missing key gives REQUEST_DENIED everywhere.
  http_500           HTTP 500 with an HTML body
OSRM (…/route/v1/<profile>/<lon>,<lat>;…?overview=full&geometries=polyline6):
  osrm               straight lines through the points, polyline6; latitudes outside ±90 give InvalidQuery
  osrm_noroute       {"code": "NoRoute"} with HTTP 400, as OSRM answers
GET /_requests returns the list of request paths (with queries) seen so far, as JSON.
"""
import argparse
import json
import math
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit, unquote

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "data", "streetview"))
REAL_GOOGLE = {
    "toronto_montreal": "googlemaps_openapi_spec/maps_http_directions_toronto_montreal_response.json",
    "zero_results": "googlemaps_openapi_spec/maps_http_directions_zero_results_response.json",
    "invalid": "googlemaps_openapi_spec/maps_http_directions_invalid_response.json",
    "heading": "googlemaps_openapi_spec/maps_http_directions_heading_response.json",
    "side_of_road": "googlemaps_openapi_spec/maps_http_directions_side_of_road_response.json",
    "over_query_limit": "google_maps_services_java/OverQueryLimitResponse.json",
    "overview_only": "google_maps_services_java/GetDirectionsResponse.json",
}
R = 6371008.8


def encode(points, precision):
    factor = 10 ** precision
    out = []
    plat = plng = 0
    for lat, lng in points:
        ilat, ilng = int(math.floor(lat * factor + 0.5)), int(math.floor(lng * factor + 0.5))
        for v in (ilat - plat, ilng - plng):
            v = ~(v << 1) if v < 0 else v << 1
            while v >= 0x20:
                out.append(chr((0x20 | (v & 0x1F)) + 63))
                v >>= 5
            out.append(chr(v + 63))
        plat, plng = ilat, ilng
    return "".join(out)


def haversine(a, b):
    p1, p2 = math.radians(a[0]), math.radians(b[0])
    dp, dl = p2 - p1, math.radians(b[1] - a[1])
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * R * math.asin(min(1, math.sqrt(h)))


def parse_latlng(text):
    lat, lng = (float(v) for v in text.split(","))
    return lat, lng


class Handler(BaseHTTPRequestHandler):
    data_dir = DEFAULT_DATA
    requests = []
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def send(self, status, body, content_type="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        parts = urlsplit(self.path)
        if parts.path == "/_requests":
            with self.lock:
                return self.send(200, list(self.requests))
        with self.lock:
            self.requests.append(self.path)
        segments = parts.path.strip("/").split("/")
        scenario, rest = segments[0], "/".join(segments[1:])
        query = parse_qs(parts.query)
        if rest == "maps/api/directions/json":
            return self.google(scenario, query)
        if rest.startswith("route/v1/"):
            return self.osrm(scenario, rest[len("route/v1/"):], query)
        return self.send(404, {"error": "unknown path " + parts.path})

    def google(self, scenario, query):
        key = query.get("key", [""])[0]
        if scenario == "http_500":
            return self.send(500, b"<html>Server Error</html>", "text/html")
        if not key:
            return self.send(200, {"routes": [], "status": "REQUEST_DENIED",
                                   "error_message": "You must use an API key to authenticate each request."})
        if scenario in REAL_GOOGLE:
            with open(os.path.join(self.data_dir, REAL_GOOGLE[scenario]), "rb") as f:
                return self.send(200, f.read())
        if scenario.startswith("status_"):
            status = scenario[len("status_"):]
            return self.send(200, {"routes": [], "status": status,
                                   "error_message": "Request for key=%s failed (%s)." % (key, status)})
        if scenario == "synthetic":
            try:
                points = [parse_latlng(query["origin"][0])]
                if "waypoints" in query:
                    points += [parse_latlng(w) for w in query["waypoints"][0].split("|")]
                points.append(parse_latlng(query["destination"][0]))
            except (KeyError, ValueError):
                return self.send(200, {"routes": [], "status": "INVALID_REQUEST", "error_message": "bad points"})
            if len(points) - 2 > 25:
                return self.send(200, {"routes": [], "status": "MAX_WAYPOINTS_EXCEEDED",
                                       "error_message": "Too many waypoints in the request (%d). The maximum allowed waypoints for this request is 25, plus the origin, and destination." % (len(points) - 2)})
            legs = []
            for a, b in zip(points, points[1:]):
                mid = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
                steps = [{"polyline": {"points": encode([a, mid], 5)}, "distance": {"value": round(haversine(a, mid))}},
                         {"polyline": {"points": encode([mid, b], 5)}, "distance": {"value": round(haversine(mid, b))}}]
                legs.append({"distance": {"value": round(haversine(a, b))}, "steps": steps})
            return self.send(200, {"status": "OK", "routes": [{"legs": legs, "warnings": [],
                                   "overview_polyline": {"points": encode(points, 5)}}]})
        return self.send(404, {"error": "unknown scenario " + scenario})

    def osrm(self, scenario, rest, query):
        if scenario == "osrm_noroute":
            return self.send(400, {"code": "NoRoute", "message": "Impossible route between points"})
        profile, _, coords = rest.partition("/")
        if query.get("geometries") != ["polyline6"] or query.get("overview") != ["full"]:
            return self.send(400, {"code": "InvalidOptions", "message": "expected overview=full&geometries=polyline6"})
        try:
            points = []
            for pair in unquote(coords).split(";"):
                lon, lat = (float(v) for v in pair.split(","))
                if not (-90 <= lat <= 90 and -180 <= lon <= 180):
                    raise ValueError
                points.append((lat, lon))
        except ValueError:
            return self.send(400, {"code": "InvalidQuery", "message": "Query string malformed close to position 0"})
        distance = sum(haversine(a, b) for a, b in zip(points, points[1:]))
        return self.send(200, {"code": "Ok", "routes": [{"geometry": encode(points, 6), "distance": distance,
                                                          "duration": distance / 13.9, "legs": []}],
                               "waypoints": [{"location": [lon, lat]} for lat, lon in points]})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--data", default=os.environ.get("LAPSE_SHARED_DATA") and
                        os.path.join(os.environ["LAPSE_SHARED_DATA"], "streetview") or DEFAULT_DATA)
    args = parser.parse_args()
    Handler.data_dir = args.data
    # Foundation's Process starts us with the spawning thread's signal mask, where SIGTERM is blocked;
    # LocalServer.stop() relies on SIGTERM, so unblock it and exit on it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    # Exit when the test process goes away without stopping us (crash, kill).
    parent = os.getppid()

    def watch_parent():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch_parent, daemon=True).start()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print("PORT %d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
