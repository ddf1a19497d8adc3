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
  new_project        REQUEST_DENIED with the message Google gives a project that cannot enable the legacy API
Google Routes API (POST …/directions/v2:computeRoutes, as the Routes API reference documents it):
  the key in X-Goog-Api-Key (none: 403 PERMISSION_DENIED), a response field mask in X-Goog-FieldMask (none:
  400 INVALID_ARGUMENT "FieldMask is a required parameter"; the answer holds only the fields the mask names),
  at most 25 intermediates, travelMode DRIVE|BICYCLE|WALK|TWO_WHEELER|TRANSIT; scenarios:
  routes             a route computed from the request: one leg (pass-through intermediates make no leg),
                     a step from each point to the midpoint and one from there to the next point
  toronto_montreal   the real Toronto->Montreal geometry of the recorded Directions answer, as the Routes API
                     gives it (steps' encodedPolyline, distanceMeters, the overview as the route polyline)
  no_route           {} (what the Routes API answers when there is no route)
  disabled           403 PERMISSION_DENIED, reason SERVICE_DISABLED (the project has not enabled the Routes API)
  bad_key            400 INVALID_ARGUMENT, reason API_KEY_INVALID
  quota              the first 2 requests 429 RESOURCE_EXHAUSTED, then as `routes`
GET /_requests returns the list of request paths (with queries) seen so far, as JSON; GET /_posts the POSTs:
  {"path", "field_mask", "has_key_header", "query", "body"} each (the key itself is not recorded).
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


def error(code, status, message, reason=None):
    body = {"error": {"code": code, "message": message, "status": status}}
    if reason:
        body["error"]["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
                                     "domain": "googleapis.com", "metadata": {"service": "routes.googleapis.com"}}]
    return code, body


def masked(value, paths):
    """`value` with only the fields the field mask names (dotted paths through objects and lists; '*' is all)."""
    if "*" in paths:
        return value
    if isinstance(value, list):
        return [masked(v, paths) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, v in value.items():
        if key in paths:
            out[key] = v
            continue
        deeper = [p[len(key) + 1:] for p in paths if p.startswith(key + ".")]
        if deeper:
            m = masked(v, deeper)
            if m not in ({}, []):
                out[key] = m
    return out


class Handler(BaseHTTPRequestHandler):
    data_dir = DEFAULT_DATA
    requests = []
    posts = []
    quota_left = {"quota": 2}
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
        if parts.path == "/_posts":
            with self.lock:
                return self.send(200, list(self.posts))
        with self.lock:
            self.requests.append(self.path)
        segments = parts.path.strip("/").split("/")
        scenario, rest = segments[0], "/".join(segments[1:])
        query = parse_qs(parts.query)
        if rest == "maps/api/directions/json":
            return self.google(scenario, query)
        if rest.startswith("route/v1/"):
            return self.osrm(scenario, rest[len("route/v1/"):], query)
        if rest == "directions/v2:computeRoutes":
            return self.send(*error(405, "INVALID_ARGUMENT", "computeRoutes takes POST"))
        return self.send(404, {"error": "unknown path " + parts.path})

    def do_POST(self):
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length) if length else b""
        segments = parts.path.strip("/").split("/")
        scenario, rest = segments[0], "/".join(segments[1:])
        mask = self.headers.get("X-Goog-FieldMask")
        key = self.headers.get("X-Goog-Api-Key")
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        with self.lock:
            self.requests.append(self.path)
            self.posts.append({"path": parts.path, "field_mask": mask, "has_key_header": bool(key),
                               "query": parts.query, "body": body})
        if rest != "directions/v2:computeRoutes":
            return self.send(404, {"error": "unknown path " + parts.path})
        self.send(*self.routes_api(scenario, key, mask, body))

    def routes_api(self, scenario, key, mask, body):
        if not key:
            return error(403, "PERMISSION_DENIED", "The request is missing a valid API key.")
        if scenario == "bad_key":
            return error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", "API_KEY_INVALID")
        if scenario == "disabled":
            return error(403, "PERMISSION_DENIED", "Routes API has not been used in project 123456789 before or it is "
                         "disabled. Enable it by visiting https://console.developers.google.com/apis/api/"
                         "routes.googleapis.com/overview?project=123456789 then retry.", "SERVICE_DISABLED")
        if not mask:
            return error(400, "INVALID_ARGUMENT", "FieldMask is a required parameter. See https://cloud.google.com/apis/"
                         "docs/system-parameters on how to provide it. As an example, you can set the header "
                         "'X-Goog-FieldMask' to value 'routes.distanceMeters,routes.duration,"
                         "routes.polyline.encodedPolyline' to ask for the route distance, duration, and polyline in "
                         "the response.")
        if scenario == "quota":
            with self.lock:
                limited = self.quota_left["quota"] > 0
                if limited:
                    self.quota_left["quota"] -= 1
            if limited:
                return error(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Compute Routes requests' "
                             "and limit 'Compute Routes requests per minute'.", "RATE_LIMIT_EXCEEDED")
        if not isinstance(body, dict):
            return error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")

        def point(w, name):
            try:
                ll = w["location"]["latLng"]
                return float(ll["latitude"]), float(ll["longitude"])
            except (KeyError, TypeError, ValueError):
                raise ValueError("Invalid %s: a location with latLng is required." % name)
        try:
            points = [point(body.get("origin"), "origin")]
            inter = body.get("intermediates") or []
            points += [point(w, "intermediates[%d]" % i) for i, w in enumerate(inter)]
            points.append(point(body.get("destination"), "destination"))
        except ValueError as e:
            return error(400, "INVALID_ARGUMENT", str(e))
        if len(inter) > 25:
            return error(400, "INVALID_ARGUMENT", "Too many intermediate waypoints (%d): at most 25 are allowed." % len(inter))
        mode = body.get("travelMode", "DRIVE")
        if mode not in ("DRIVE", "BICYCLE", "WALK", "TWO_WHEELER", "TRANSIT"):
            return error(400, "INVALID_ARGUMENT", "Invalid value at 'travel_mode' (%s)." % mode)
        if body.get("routingPreference") and mode not in ("DRIVE", "TWO_WHEELER"):
            return error(400, "INVALID_ARGUMENT", "Routing preference cannot be set for this travel mode.")
        paths = [p.strip() for p in mask.split(",") if p.strip()]
        if scenario == "no_route":
            return 200, {}
        if scenario == "toronto_montreal":
            with open(os.path.join(self.data_dir, REAL_GOOGLE["toronto_montreal"]), "rb") as f:
                legacy = json.load(f)["routes"][0]
            legs = [{"distanceMeters": leg["distance"]["value"],
                     "steps": [{"polyline": {"encodedPolyline": st["polyline"]["points"]},
                                "distanceMeters": st["distance"]["value"]} for st in leg["steps"]]}
                    for leg in legacy["legs"]]
            route = {"distanceMeters": sum(l["distanceMeters"] for l in legs), "duration": "%ds" % sum(
                leg["duration"]["value"] for leg in legacy["legs"]),
                "polyline": {"encodedPolyline": legacy["overview_polyline"]["points"]}, "legs": legs}
            return 200, masked({"routes": [route]}, paths)
        if scenario in ("routes", "quota"):
            steps = []
            for a, b in zip(points, points[1:]):
                mid = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
                steps += [{"polyline": {"encodedPolyline": encode([a, mid], 5)}, "distanceMeters": round(haversine(a, mid))},
                          {"polyline": {"encodedPolyline": encode([mid, b], 5)}, "distanceMeters": round(haversine(mid, b))}]
            distance = sum(st["distanceMeters"] for st in steps)
            route = {"distanceMeters": distance, "duration": "%ds" % round(distance / 13.9),
                     "polyline": {"encodedPolyline": encode(points, 5)}, "legs": [{"steps": steps}]}
            if mode == "WALK":
                route["warnings"] = ["Walking directions are in beta. Use caution - This route may be missing sidewalks "
                                     "or pedestrian paths."]
            return 200, masked({"routes": [route]}, paths)
        return 404, {"error": "unknown scenario " + scenario}

    def google(self, scenario, query):
        key = query.get("key", [""])[0]
        if scenario == "http_500":
            return self.send(500, b"<html>Server Error</html>", "text/html")
        if not key:
            return self.send(200, {"routes": [], "status": "REQUEST_DENIED",
                                   "error_message": "You must use an API key to authenticate each request."})
        if scenario == "new_project":
            return self.send(200, {"routes": [], "status": "REQUEST_DENIED", "error_message":
                                   "You're calling a legacy API, which is not enabled for your project. To get newer "
                                   "features and more functionality, switch to the Places API (New) or Routes API. "
                                   "Learn more: https://developers.google.com/maps/legacy#LegacyApiNotActivatedMapError"})
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
