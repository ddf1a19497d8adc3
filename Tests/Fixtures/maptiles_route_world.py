#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Map Tiles API stand-in (maptiles_standin.py, reused as is) serving a world of panoramas along the first
kilometres of the real Toronto-Montreal route, for Lapse's hyperlapse tests and bench. Prints `PORT <n>` first.

The route is the exact step geometry of <spec>/maps_http_directions_toronto_montreal_response.json (Google's
encoded polylines, decoded here), cut to --length metres. A panorama stands every --every metres along it, a few
metres beside the road (as Street View cars drive), except in a gap (no coverage) between --gap metres; its heading
is the road's bearing with a little jitter, some face backwards; all of one capture run (one date), each linking
to its neighbours in the metadata's `links`. With --other-run N every N-th place also has a panorama of another
run (another date, facing the other way) on the other side of the road, nearer the route's line, and every
panorama of the main run links to one more that is gone (404). Each panorama is one of the real 360 photos in
<data>/pano360/trekview_360 scaled to 512*2^max_zoom x half that (made with the ffmpeg CLI on first use, into
--workdir), with a MARKER: a magenta (#FF00FF) square --marker-size degrees wide painted at the direction of the
TARGET (a point beside the road) as seen from that panorama, at eye level (the horizon row), so a view aimed at
the target from the panorama's position has the marker at its centre. Image column x faces
heading + (x/(W-1) - 0.5)*360 (docs: LapseRender PanoramaPose). With --no-marker every panorama shares the two
plain images (one tile set each: fast to set up for benchmarks with many panoramas).

Extra endpoints besides the stand-in's own:
  GET /_world    {"route": [[lat, lng]...], "length", "target": [lat, lng], "panoramas": [{id, lat, lng, heading,
                  distance, src, date, run}...], "maxZoom", "copyright"}
  GET /_tiles    {"panoId/z/x/y": times served} for every tile served (faults excluded); ?reset=1 clears it.
The metadata gives every panorama 16384 x 8192, as Google's own: zoom z is 512 << z wide (documented rule); zooms
above --max-zoom are served too, scaled up from the base image.
Options: --length M (default 900), --every M (30), --gap A:B (480:600, "" for none), --max-zoom Z (2), --other-run N,
--marker-size D (3), --route-out FILE (write the route as 'lat,lng' lines), --spec DIR, plus all of
maptiles_standin.py's (--key, --faults, --data, --workdir, ...).
"""
import argparse, hashlib, json, math, os, subprocess, sys, tempfile, threading
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import maptiles_standin as M
from standin_common import distance_m, ffmpeg

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "../../../shared/data")
COPYRIGHT = "© 2026 Stand-in Route Imagery"
BASES = ["trekview_360/GSAG2002.JPG", "trekview_360/R0014760.JPG"]
JITTER = [0.0, 6.0, -9.0, 180.0, 14.0, -4.0, 172.0]
LATERAL = [3.0, -2.0, 4.0, -3.0, 0.5, 2.5, -1.0]
RUN_DATE = "2025-06"
OTHER_DATE = "2019-04"


def decode_polyline(text, precision=5):
    """Google's encoded polyline algorithm."""
    points, index, lat, lng = [], 0, 0, 0
    factor = 10 ** precision
    while index < len(text):
        values = []
        for _ in range(2):
            shift = result = 0
            while True:
                b = ord(text[index]) - 63
                index += 1
                result |= (b & 0x1F) << shift
                shift += 5
                if b < 0x20:
                    break
            values.append(~(result >> 1) if result & 1 else result >> 1)
        lat += values[0]
        lng += values[1]
        points.append((lat / factor, lng / factor))
    return points


def bearing(a, b):
    """Initial great-circle bearing from a to b, degrees clockwise from north in [0, 360)."""
    p1, p2 = math.radians(a[0]), math.radians(b[0])
    dl = math.radians(b[1] - a[1])
    y = math.sin(dl) * math.cos(p2)
    x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return math.degrees(math.atan2(y, x)) % 360


def destination(a, bearing_deg, metres):
    r = 6371008.8
    d = metres / r
    t = math.radians(bearing_deg)
    p1, l1 = math.radians(a[0]), math.radians(a[1])
    p2 = math.asin(math.sin(p1) * math.cos(d) + math.cos(p1) * math.sin(d) * math.cos(t))
    l2 = l1 + math.atan2(math.sin(t) * math.sin(d) * math.cos(p1), math.cos(d) - math.sin(p1) * math.sin(p2))
    return (math.degrees(p2), math.degrees(l2))


def route_from_spec(spec_dir, length):
    """The route's first `length` metres: the step polylines joined (shared end points once), cut by interpolation."""
    path = os.path.join(spec_dir, "maps_http_directions_toronto_montreal_response.json")
    with open(path) as f:
        answer = json.load(f)
    points = []
    for leg in answer["routes"][0]["legs"]:
        for step in leg["steps"]:
            for p in decode_polyline(step["polyline"]["points"]):
                if not points or p != points[-1]:
                    points.append(p)
    out, total = [points[0]], 0.0
    for a, b in zip(points, points[1:]):
        d = distance_m(a[0], a[1], b[0], b[1])
        if total + d >= length:
            t = (length - total) / d if d > 0 else 0
            out.append((a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t))
            return out
        out.append(b)
        total += d
    return out


def point_at(route, distance):
    """The point `distance` metres along the route and the bearing of its segment."""
    total = 0.0
    for a, b in zip(route, route[1:]):
        d = distance_m(a[0], a[1], b[0], b[1])
        if d > 0 and total + d >= distance:
            t = (distance - total) / d
            return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t), bearing(a, b)
        total += d
    return route[-1], bearing(route[-2], route[-1])


def build_world(route, length, every, gap, target, marker, other_run=0):
    panos = []
    k = 0
    while k * every <= length + 1e-6:
        dist = k * every
        if not (gap and gap[0] <= dist < gap[1]):
            on_road, road_bearing = point_at(route, dist)
            lateral = LATERAL[k % len(LATERAL)]
            pos = destination(on_road, (road_bearing + 90) % 360, lateral)
            heading = (road_bearing + JITTER[k % len(JITTER)]) % 360
            # The metadata says 16384 x 8192, as Google's own panoramas do (zoom z is 512 << z wide); the images
            # are made from a base --max-zoom wide (higher zooms are that base scaled up).
            panos.append(dict(id="CAoSRoute_%04d" % k, lat=round(pos[0], 7), lng=round(pos[1], 7), width=16384,
                              height=8192, heading=round(heading, 3), tilt=90.0, roll=0.0, date=RUN_DATE,
                              copyright=COPYRIGHT, distance=dist, base=BASES[k % 2], marker=marker, run="main"))
            if other_run and k % other_run == other_run // 2:
                # Another car's run: a panorama of another date on the other side of the road, nearer the line than
                # the main run's one there.
                pos = destination(on_road, (road_bearing + 90) % 360, -lateral / 2)
                panos.append(dict(id="CAoSOther_%04d" % k, lat=round(pos[0], 7), lng=round(pos[1], 7), width=16384,
                                  height=8192, heading=round((road_bearing + 180) % 360, 3), tilt=90.0, roll=0.0,
                                  date=OTHER_DATE, copyright=COPYRIGHT, distance=dist, base=BASES[(k + 1) % 2],
                                  marker=marker, run="other"))
        k += 1
    # Links as Google gives them: each panorama's neighbours in its run, with the bearing to them.
    for run in ("main", "other"):
        members = [p for p in panos if p["run"] == run]
        for i, p in enumerate(members):
            p["links"] = [dict(panoId=q["id"], heading=round(bearing((p["lat"], p["lng"]), (q["lat"], q["lng"])), 2), text="")
                          for q in members[max(0, i - 1):i + 2] if q is not p]
            if other_run:
                # A link to a panorama taken down since (its metadata answers 404), as old links can be.
                p["links"].append(dict(panoId="CAoSRemoved_%s" % p["id"][-4:], heading=0, text=""))
    return panos


def main():
    M.unblock_signals()
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--length", type=float, default=900)
    ap.add_argument("--every", type=float, default=30)
    ap.add_argument("--gap", default="480:600")
    ap.add_argument("--max-zoom", type=int, default=2)
    ap.add_argument("--marker-size", type=float, default=3)
    ap.add_argument("--no-marker", action="store_true")
    ap.add_argument("--route-out", default=None)
    ap.add_argument("--other-run", type=int, default=0)
    ap.add_argument("--spec", default=os.path.join(SHARED, "streetview/googlemaps_openapi_spec"))
    ap.add_argument("--data", default=os.path.join(SHARED, "pano360"))
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "lapse-route-world-v1"))
    a, rest = ap.parse_known_args()
    os.makedirs(a.workdir, exist_ok=True)
    gap = tuple(float(v) for v in a.gap.split(":")) if a.gap else None
    route = route_from_spec(a.spec, a.length)
    # The target: 30 m to the right of the road, 420 m along it.
    on_road, road_bearing = point_at(route, min(420, a.length / 2))
    target = destination(on_road, (road_bearing + 90) % 360, 30)
    world = build_world(route, a.length, a.every, gap, target, not a.no_marker, a.other_run)
    if a.route_out:
        with open(a.route_out, "w") as f:
            f.write("".join("%.7f,%.7f\n" % p for p in route))

    width = 512 << a.max_zoom
    locks, lock = {}, threading.Lock()
    served, served_lock = {}, threading.Lock()

    def base_image(name):
        out = os.path.join(a.workdir, "base-%s-%d.png" % (os.path.basename(name), width))
        if not os.path.exists(out):
            temp = out + ".tmp-%d-%d.png" % (os.getpid(), threading.get_ident())
            ffmpeg("-i", os.path.join(a.data, name), "-vf", "scale=%d:%d:flags=bicubic" % (width, width // 2), temp)
            os.replace(temp, out)
        return out

    def source_image(p):
        """The panorama's image: the base with the marker at the target's direction (made once, then reused)."""
        with lock:
            l = locks.setdefault(p["id"], threading.Lock())
        with l:
            base = base_image(p["base"])
            if not p["marker"]:
                return base, "plain-" + os.path.basename(p["base"])
            rel = (bearing((p["lat"], p["lng"]), target) - p["heading"] + 180) % 360 - 180
            x = (rel / 360 + 0.5) * (width - 1)
            y = (width // 2) / 2 - 0.5            # centre of the horizon (between the two middle rows)
            size = a.marker_size / 360 * width
            x0, y0 = round(x - size / 2 + 0.5), round(y - size / 2 + 0.5)
            s = max(2, round(size))
            key = hashlib.sha1(("%s %d %d %d %d" % (p["base"], width, x0, y0, s)).encode()).hexdigest()[:16]
            out = os.path.join(a.workdir, "marked-%s.png" % key)
            if not os.path.exists(out):
                boxes = ",".join("drawbox=x=%d:y=%d:w=%d:h=%d:color=0xFF00FF@1:t=fill" % (x0 + dx, y0, s, s)
                                 for dx in (-width, 0, width))
                temp = out + ".tmp-%d-%d.png" % (os.getpid(), threading.get_ident())
                ffmpeg("-i", base, "-vf", boxes, temp)
                os.replace(temp, out)
            return out, "marked-" + key

    public = [dict(id=p["id"], lat=p["lat"], lng=p["lng"], heading=p["heading"], distance=p["distance"],
                   src=p["base"], date=p["date"], run=p["run"]) for p in world]
    M.WORLD[:] = [dict(p, src=None) for p in world]
    M.BY_ID.clear()
    M.BY_ID.update({p["id"]: p for p in M.WORLD})
    original_serve = M.serve

    class RouteWorld(M.MapTiles):
        def route(self, method, path, q):
            if path == "/_world":
                return self.send(200, {"route": route, "length": a.length, "target": list(target), "panoramas": public,
                                       "maxZoom": a.max_zoom, "copyright": COPYRIGHT})
            if path == "/_tiles":
                with served_lock:
                    snapshot = dict(served)
                    if q.get("reset"):
                        served.clear()
                return self.send(200, snapshot)
            return super().route(method, path, q)

    def serve(handler, port, setup):
        def setup_world(server):
            setup(server)
            tile = server.tile

            def world_tile(p, z, x, y):
                src, tiles_id = source_image(p)
                with served_lock:
                    k = "%s/%d/%d/%d" % (p["id"], z, x, y)
                    served[k] = served.get(k, 0) + 1
                # Panoramas showing the same image share one tile set (folder named after the image).
                return tile(dict(p, src=src, id=tiles_id), z, x, y)
            server.tile = world_tile
        original_serve(RouteWorld, port, setup_world)

    M.serve = serve
    sys.argv = [sys.argv[0]] + rest + ["--data", a.data, "--workdir", a.workdir]
    M.main()


if __name__ == "__main__":
    main()
