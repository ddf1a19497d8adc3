#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stand-in for a Panoramax (GeoVisio) STAC API on 127.0.0.1, for Lapse's tests. Prints `PORT <n>` first.

It answers as GeoVisio's `/api/search` does (geovisio/web/items.py `searchItems`, `dbPictureToStacItem`;
geovisio/web/params.py; the OpenAPI texts of `place_position`, `place_distance`, `place_fov_tolerance`):

  GET /api/search   STAC item search: bbox, place_position=LON,LAT, place_distance=MIN-MAX (whole metres,
                    default 3-15), place_fov_tolerance (2..180, default 30; flat pictures only: the place must lie
                    within heading +- tolerance/2 of where they look, as ST_Azimuth in degrees of the plane; 360
                    pictures always pass), limit (1..10000, default 10), ids, collections, sortby (ts, updated, id
                    with +/-; `distance_to` is refused: it is only implicit). Order: with place_position by planar
                    distance in degrees to the place (PostGIS `geom <-> point`), with bbox by that to the bbox's
                    centre, else updated desc, id asc. Errors: 400 {"message", "status_code"}.
                    Paging: with --next-links (the default) a `links` entry rel=next (STAC item search paging) while
                    more pictures match; with --no-next-links only the root link, as GeoVisio's search answers.
  GET /api/pictures/<id>/{hd,sd,thumb}.jpg   the picture: hd as uploaded (a cropped one cropped), sd 2048 pixels
                    wide ("fixed width of 2048px"), thumb 500 wide (made with ffmpeg into --workdir)
  GET /_stats, /_reset, /_log (the pictures served, "<id>/<asset>" in order)

Items carry what GeoVisio writes: `view:azimuth` only when the picture has a heading, `pers:pitch`/`pers:roll` only
when known, `pers:interior_orientation` with `field_of_view`, `sensor_array_dimensions` (the full frame) and for a
cropped picture `visible_area` ([left, top, right, bottom] margins), `collection`, providers, assets, links with the
previous and next picture of the capture run.

The world (WORLD below): 360 pictures cut from <data>/pano360 along a street in Lyon going north then east - one
cropped (no nadir/zenith rows), one not 2:1 without visible_area (it cannot be placed), one without view:azimuth, one
with pers:pitch/pers:roll - a flat picture next to the first; 120 flat pictures all looking at one spot (CROWD) nearer
to it than the only 360 picture there; and two capture runs along both sides of a street (RUNS).
Options: --faults RATE, --retry-after S, --stall S, --data DIR, --workdir DIR, --no-next-links.
"""
import argparse, json, math, os, sys, tempfile, threading
from urllib.parse import urlencode
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from standin_common import Handler, FaultPlan, ffmpeg, serve, unblock_signals, distance_m

GSAG = "pano360/trekview_360/GSAG2002.JPG"
RICOH = "pano360/trekview_360/R0014760.JPG"
FLAT = "images/opensfm_lund/images/01.jpg"
OVERPASS = "pano360/valiant360_overpass/overpass-clip.mp4"


def offset(lat, lng, north_m, east_m):
    """The point `north_m` north and `east_m` east of lat,lng (metres, a flat-earth step: fine over 200 m)."""
    return (lat + north_m / 111320.0, lng + east_m / (111320.0 * math.cos(math.radians(lat))))


def uid(group, n):
    return f"6b1c7e52-0f1a-4c55-9a59-{group:04x}{n:08x}"


CORNER = (45.76040, 4.83000)
WORLD = [
    dict(id=uid(0x1a2b, 0x3c4d5e01), src=GSAG, size=(4096, 2048), fov=360, at=(45.76000, 4.83000), azimuth=123.5,
         datetime="2020-05-09T10:11:12+00:00", license="CC-BY-SA-4.0", producer="Alice Example", seq="seq-a"),
    dict(id=uid(0x1a2b, 0x3c4d5e02), src=RICOH, size=(1536, 768), fov=360, at=CORNER, azimuth=350.0,
         datetime="2020-05-11T08:00:00+00:00", license="etalab-2.0", producer="Zoë Éléonore", seq="seq-a"),
    # A flat picture right on top of the first point: must never be chosen.
    dict(id=uid(0x1a2b, 0x3c4d5e03), src=FLAT, size=(1024, 768), fov=70, at=(45.76001, 4.83000), azimuth=10.0,
         datetime="2015-06-05T12:00:00+00:00", license="CC-BY-SA-4.0", producer="Carol Example", seq="seq-flat"),
    # East of the corner. A cropped 360 picture: the full frame 2048x1024, rows 160..895 kept (no zenith, no nadir).
    dict(id=uid(0x1a2b, 0x3c4d5e04), src=GSAG, size=(2048, 1024), crop=(0, 160, 0, 128), fov=360,
         at=offset(*CORNER, 0, 45), azimuth=90.0, datetime="2021-03-01T09:00:00+00:00", license="CC-BY-SA-4.0",
         producer="Dan Example", seq="seq-b"),
    # A 360 picture that is not 2:1 and says nothing of where it sits: it cannot be placed.
    dict(id=uid(0x1a2b, 0x3c4d5e05), src=RICOH, size=(2000, 700), fov=360, at=offset(*CORNER, 0, 90), azimuth=90.0,
         datetime="2021-03-01T09:00:10+00:00", license="CC-BY-SA-4.0", producer="Dan Example", seq="seq-b"),
    # Three frames 0.27 s apart of a real 360 video from a car (its camera faces back: the centre column looks west
    # while the car goes east), as if taken along the street here: a moving camera's pictures, for motion analysis.
    dict(id=uid(0x1a2b, 0x3c4d5e06), src=OVERPASS, frame=20, size=(2048, 1024), fov=360, at=offset(*CORNER, 0, 96),
         azimuth=275.0, datetime="2021-03-01T09:00:12+00:00", license="CC-BY-SA-4.0", producer="Dan Example",
         seq="seq-b"),
    # No heading at all (GeoVisio fills one from the next picture of the run; a run of one has none).
    dict(id=uid(0x1a2b, 0x3c4d5e07), src=OVERPASS, frame=28, size=(2048, 1024), fov=360, at=offset(*CORNER, 0, 140),
         azimuth=None, datetime="2022-07-14T16:00:00+00:00", license="CC-BY-4.0", producer="Eve Example", seq="seq-c"),
    # Tilted and rolled, as the camera's GPano PosePitchDegrees / PoseRollDegrees said.
    dict(id=uid(0x1a2b, 0x3c4d5e08), src=OVERPASS, frame=36, size=(2048, 1024), fov=360, at=offset(*CORNER, 0, 185),
         azimuth=272.0, pitch=4.5, roll=-2.0, datetime="2022-07-15T10:00:00+00:00", license="CC-BY-4.0",
         producer="Eve Example", seq="seq-d"),
]

# A spot photographed by a crowd: 120 flat pictures 1 to 6 m from it, all looking at it, and one 360 picture 9.5 m
# east of it - farther than every flat one, so a search for it gets a first page of flat pictures only.
CROWD_SPOT = (45.77000, 4.83000)
CROWD_360 = uid(0x2000, 1)


def crowd():
    out = []
    for i in range(120):
        r = 1 + 5 * i / 119
        a = math.radians(i * 137.508)
        lat, lng = offset(*CROWD_SPOT, r * math.cos(a), r * math.sin(a))
        out.append(dict(id=uid(0x2001, i), src=FLAT, size=(1024, 768), fov=70, at=(lat, lng),
                        azimuth=round(planar_azimuth((lat, lng), CROWD_SPOT), 6), datetime="2023-04-01T12:00:00+00:00",
                        license="CC-BY-SA-4.0", producer="Crowd", seq=f"seq-crowd-{i}"))
    out.append(dict(id=CROWD_360, src=GSAG, size=(1024, 512), fov=360, at=offset(*CROWD_SPOT, 0, 9.5), azimuth=270.0,
                    datetime="2023-04-02T12:00:00+00:00", license="CC-BY-SA-4.0", producer="Frank Example",
                    seq="seq-crowd-360"))
    return out


# Two capture runs along both sides of a street going east (one a year later, on the other side): run N every 10 m
# 3 m north of its middle line, run S every 10 m 3.5 m south of it, its pictures 4 m further east than run N's.
RUNS_START = (45.78000, 4.83000)


def runs():
    out = []
    for i in range(6):
        for seq, north, east, src, date in (("seq-north", 3.0, 10 * i, GSAG, "2023-06-01T10:00:%02d+00:00"),
                                             ("seq-south", -3.5, 10 * i + 4, RICOH, "2024-06-01T10:00:%02d+00:00")):
            out.append(dict(id=uid(0x3000 + (seq == "seq-south"), i), src=src, size=(1024, 512), fov=360,
                            at=offset(*RUNS_START, north, east), azimuth=90.0, datetime=date % i,
                            license="CC-BY-SA-4.0", producer="Grace Example", seq=seq))
    return out


def planar_azimuth(a, b):
    """ST_Azimuth(a, b) of two geometry(4326) points, in degrees: clockwise from north in the lon/lat plane."""
    return math.degrees(math.atan2(b[1] - a[1], b[0] - a[0])) % 360


ALL = WORLD + crowd() + runs()
BY_ID = {p["id"]: p for p in ALL}
RANK = {}
for p in ALL:
    RANK.setdefault(p["seq"], []).append(p["id"])


def bad(message):
    return 400, {"message": message, "status_code": 400}


class Panoramax(Handler):
    def route(self, method, path, q):
        s = self.server
        ident = " ".join([method, path] + [q.get(k, "") for k in ("place_position", "place_distance", "bbox", "token")])
        fault = s.plan.fault_for(s.stats, ident)
        if fault:
            return self.apply_fault(fault, s.plan)
        if path == "/api/search":
            self.count("search")
            with s.lock:
                s.searches.append(q)
            code, body = self.search(q)
            return self.send(code, body, "application/geo+json" if code == 200 else "application/json")
        parts = path.strip("/").split("/")
        if len(parts) == 4 and parts[:2] == ["api", "pictures"] and parts[2] in BY_ID and parts[3] in ("hd.jpg", "sd.jpg", "thumb.jpg"):
            asset = parts[3][:-4]
            self.count("images")
            self.count(asset)
            with s.lock:
                s.served.append(f"{parts[2]}/{asset}")
            return self.send(200, s.picture(BY_ID[parts[2]], asset), "image/jpeg")
        if path == "/_log":
            with s.lock:
                return self.send(200, {"served": list(s.served), "searches": list(s.searches)})
        return self.send(404, {"message": "not found", "status_code": 404})

    def search(self, q):
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        try:
            limit = int(q.get("limit") or 10)
            if limit < 1 or limit > 10000:
                raise ValueError
        except ValueError:
            return bad("Parameter limit must be either empty or a number between 1 and 10000")
        pics = ALL
        key = None
        if "sortby" in q:
            fields = []
            for f in q["sortby"].split(","):
                name = f.lstrip("+-")
                if name not in ("ts", "updated", "id"):
                    return bad("Unsupported sortby parameter: invalid field")
                fields.append((name, f.startswith("-")))
            key = fields
        if "bbox" in q:
            try:
                x0, y0, x1, y1 = (float(v) for v in q["bbox"].split(","))
            except ValueError:
                return bad("Parameter bbox must be in format [minX, minY, maxX, maxY]")
            pics = [p for p in pics if x0 <= p["at"][1] <= x1 and y0 <= p["at"][0] <= y1]
            centre = ((y0 + y1) / 2, (x0 + x1) / 2)
            order = lambda p: math.hypot(p["at"][0] - centre[0], p["at"][1] - centre[1])
        if "place_position" in q:
            try:
                lon, lat = (float(v) for v in q["place_position"].split(","))
            except ValueError:
                return bad("Parameter place_position must be coordinates in lat,lon format")
            dist = q.get("place_distance", "3-15").split("-")
            try:
                dmin, dmax = (int(d) for d in dist)
            except ValueError:
                return bad('Parameter place_distance is invalid (should be a distance range in meters like "5-15")')
            if dmin > dmax:
                return bad("Parameter place_distance has a min value greater than its max value")
            try:
                tolerance = int(q.get("place_fov_tolerance", "30"))
            except ValueError:
                return bad("Parameter place_fov_tolerance must be either empty or a number between 2 and 180")
            if tolerance < 2 or tolerance > 180:
                return bad("Parameter place_fov_tolerance must be either empty or a number between 2 and 180")
            half = tolerance / 2

            def visible(p):
                if p["fov"] == 360:   # metadata type 'equirectangular'
                    return True
                if p["azimuth"] is None or p["at"] == (lat, lon):
                    return False       # NULL heading or azimuth: BETWEEN is not true
                return p["azimuth"] - half <= planar_azimuth(p["at"], (lat, lon)) <= p["azimuth"] + half

            pics = [p for p in pics if dmin <= distance_m(p["at"][0], p["at"][1], lat, lon) <= dmax and visible(p)]
            order = lambda p: math.hypot(p["at"][0] - lat, p["at"][1] - lon)
        if "ids" in q:
            ids = json.loads(q["ids"]) if q["ids"].startswith("[") else q["ids"].split(",")
            pics = [p for p in pics if p["id"] in ids]
        if "collections" in q:
            seqs = json.loads(q["collections"]) if q["collections"].startswith("[") else q["collections"].split(",")
            pics = [p for p in pics if p["seq"] in seqs]
        if key:
            for name, desc in reversed(key):
                field = {"ts": "datetime", "updated": "datetime", "id": "id"}[name]
                pics = sorted(pics, key=lambda p: p[field], reverse=desc)
        elif "place_position" in q or "bbox" in q:
            pics = sorted(pics, key=lambda p: (order(p), p["id"]))
        else:
            pics = sorted(pics, key=lambda p: p["id"])
            pics = sorted(pics, key=lambda p: p["datetime"], reverse=True)
        start = int(q.get("token", "0") or 0)
        page = pics[start:start + limit]
        links = [{"rel": "root", "href": f"{base}/api/", "title": "Instance catalog", "type": "application/json"}]
        if self.server.next_links and start + limit < len(pics):
            rest = {k: v for k, v in q.items() if k != "token"}
            rest["token"] = str(start + limit)
            links.append({"rel": "next", "type": "application/geo+json", "method": "GET",
                          "href": f"{base}/api/search?{urlencode(rest)}"})
        return 200, {"type": "FeatureCollection", "features": [self.item(p, base) for p in page], "links": links}

    @staticmethod
    def item(p, base):
        w, h = p["size"]
        io = {"camera_manufacturer": "Stand-in", "camera_model": "Sphere" if p["fov"] == 360 else "Phone",
              "field_of_view": p["fov"], "sensor_array_dimensions": [w, h]}
        if "crop" in p:
            io["visible_area"] = list(p["crop"])
        props = {"datetime": p["datetime"], "datetimetz": p["datetime"], "license": p["license"],
                 "pers:interior_orientation": io, "geovisio:status": "ready", "geovisio:producer": p["producer"],
                 "geovisio:image": f"{base}/api/pictures/{p['id']}/hd.jpg",
                 "geovisio:thumbnail": f"{base}/api/pictures/{p['id']}/thumb.jpg",
                 "geovisio:rank_in_collection": RANK[p["seq"]].index(p["id"]) + 1}
        if p["azimuth"] is not None:
            props["view:azimuth"] = p["azimuth"]
        for k in ("pitch", "roll"):
            if k in p:
                props["pers:" + k] = p[k]
        seq = RANK[p["seq"]]
        links = [{"rel": "root", "href": f"{base}/api/", "type": "application/json"},
                 {"rel": "parent", "type": "application/json", "href": f"{base}/api/collections/{p['seq']}"},
                 {"rel": "self", "type": "application/geo+json", "href": f"{base}/api/collections/{p['seq']}/items/{p['id']}"},
                 {"rel": "collection", "type": "application/json", "href": f"{base}/api/collections/{p['seq']}"}]
        i = seq.index(p["id"])
        for rel, j in (("next", i + 1), ("prev", i - 1)):
            if 0 <= j < len(seq):
                o = BY_ID[seq[j]]
                links.append({"rel": rel, "type": "application/geo+json", "id": o["id"],
                              "geometry": {"type": "Point", "coordinates": [o["at"][1], o["at"][0]]},
                              "href": f"{base}/api/collections/{p['seq']}/items/{o['id']}"})
        lat, lng = p["at"]
        return {
            "type": "Feature", "stac_version": "1.0.0",
            "stac_extensions": ["https://stac-extensions.github.io/view/v1.0.0/schema.json",
                                "https://stac-extensions.github.io/perspective-imagery/v1.0.0/schema.json"],
            "id": p["id"], "geometry": {"type": "Point", "coordinates": [lng, lat]}, "bbox": [lng, lat, lng, lat],
            "providers": [{"name": p["producer"], "roles": ["producer"], "id": "acc-" + p["producer"].split()[0].lower()}],
            "properties": props, "links": links,
            "assets": {
                "hd": {"title": "HD picture", "description": "Highest resolution available of this picture",
                       "roles": ["data"], "type": "image/jpeg", "href": f"{base}/api/pictures/{p['id']}/hd.jpg"},
                "sd": {"title": "SD picture", "description": "Picture in standard definition (fixed width of 2048px)",
                       "roles": ["visual"], "type": "image/jpeg", "href": f"{base}/api/pictures/{p['id']}/sd.jpg"},
                "thumb": {"title": "Thumbnail", "description": "Picture in low definition (fixed width of 500px)",
                          "roles": ["thumbnail"], "type": "image/jpeg", "href": f"{base}/api/pictures/{p['id']}/thumb.jpg"},
            },
            "collection": p["seq"],
        }


def main():
    unblock_signals()
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--faults", type=float, default=0.0)
    ap.add_argument("--retry-after", type=float, default=1)
    ap.add_argument("--stall", type=float, default=30)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "../../../shared/data"))
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--no-next-links", action="store_true")
    a = ap.parse_args()
    workdir = a.workdir or tempfile.mkdtemp(prefix="panoramax-standin-")
    os.makedirs(workdir, exist_ok=True)
    lock = threading.Lock()

    def picture(p, asset):
        """The hd picture: the source scaled to the full frame, cropped by visible_area; sd 2048 wide, thumb 500."""
        fw, fh = p["size"]
        l, t, r, b = p.get("crop", (0, 0, 0, 0))
        w, h = fw - l - r, fh - t - b
        filters = (f"select=eq(n\\,{p['frame']})," if "frame" in p else "") + f"scale={fw}:{fh}:flags=bicubic,crop={w}:{h}:{l}:{t}"
        if asset != "hd":
            sw = 2048 if asset == "sd" else 500
            filters += f",scale={sw}:{round(h * sw / w)}:flags=bicubic"
        name = f"{p['id']}-{asset}-{fw}x{fh}-{l}-{t}-{r}-{b}-{p.get('frame', 0)}.jpg"
        path = os.path.join(workdir, name)
        with lock:
            if not os.path.exists(path):
                temp = f"{path}.tmp-{os.getpid()}.jpg"
                ffmpeg("-i", os.path.join(a.data, p["src"]), "-vf", filters + ",format=yuv444p",
                       "-q:v", "1", "-qmin", "1", "-pix_fmt", "yuvj444p", "-frames:v", "1", temp)
                os.replace(temp, path)
        with open(path, "rb") as f:
            return f.read()

    def setup(server):
        server.plan = FaultPlan(a.faults, a.retry_after, a.stall)
        server.picture = picture
        server.next_links = not a.no_next_links
        server.lock = threading.Lock()
        server.served = []
        server.searches = []

    serve(Panoramax, a.port, setup)


if __name__ == "__main__":
    main()
