#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stand-in for Mapillary's Graph API v4 on 127.0.0.1, for Lapse's tests. Prints `PORT <n>` first.

It answers as Mapillary's API documentation (https://www.mapillary.com/developer/api-documentation) says:

  Authorization     every request to the API must carry a client token, in the header `Authorization: OAuth <token>`
                    or as `?access_token=<token>`; a missing or wrong one gets HTTP 401 and the Graph API's error
                    object {"error": {"message", "type": "OAuthException", "code": 190, "fbtrace_id"}}.
  GET /images       image search: `bbox=minLon,minLat,maxLon,maxLat` (its area must be under 0.01 square degrees),
                    `is_pano=true|false`, `sequence_id`, `limit` (at most 2000, the default), `fields` (a comma list;
                    only the fields asked for are answered, `id` always). {"data": [...]} in no promised order (here:
                    by a hash of the id).
  GET /image_ids?sequence_id=S   the ids of a sequence's images in order: {"data": [{"id"}...]}.
  GET /<image id>?fields=...     one image's fields.
  Fields: id, geometry and computed_geometry (GeoJSON points), compass_angle, computed_compass_angle,
                    computed_rotation (angle-axis), camera_type, is_pano, captured_at (ms since 1970), width, height,
                    creator {id, username}, sequence, thumb_2048_url, thumb_original_url.
  Thumbnail URLs    short-lived, signed CDN links (`oe` = their expiry as hex seconds): here /cdn/<id>/<size>.jpg on
                    this server; past their expiry 403. Served with `Cache-Control: max-age=1209600, no-transform`.
                    The token is never needed there (the stand-in logs whether one came).

The world: sequence `seq-walk` (creator `ada_walks`): the five real GoPro MAX photos of
pano360/geovisio_gopromax_walk at their own GPS positions and times (compass_angle their EXIF heading; SfM-refined
computed_compass_angle 12 degrees less; computed_rotation with that heading, 2 degrees up and 1 degree of roll, on
all but the third); sequence `seq-drive` (creator `bo_drives`): five frames of pano360/valiant360_overpass beside
it a year later, 1.2 m east and 0.8 m north of each walk photo, then three more 3 m apart beyond the walk's end
(compass_angle only); a flat (perspective) image on the walk's first photo; a 360 image that is not 2:1.

Options: --token T (the one valid token), --rate-limit N (the first N searches answer 429 with Retry-After: 1),
--rate-limit-code N (the first N searches answer the Graph API's "Application request limit reached", code 4, as
HTTP 400 without Retry-After), --search-error CODE (every search answers HTTP 400 with that Graph error code,
type OAuthException, as Graph does for e.g. code 100 "Invalid parameter"), --malformed (one more image beside the
walk whose width is a string, and one whose creator has no username),
--expired-search-urls (thumbnail URLs in search answers already expired; looked up by id they are fresh),
--always-expired (every thumbnail URL expired), --data DIR, --workdir DIR.
Test hooks: GET /_log (requests in order: time, path, auth), /_stats, /_reset.
"""
import argparse, hashlib, math, os, sys, tempfile, threading, time
from urllib.parse import urlparse, parse_qs
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from standin_common import Handler, ffmpeg, serve, unblock_signals

WALK = "pano360/geovisio_gopromax_walk/%d.jpg"
OVERPASS = "pano360/valiant360_overpass/overpass-clip.mp4"
# The walk photos' EXIF: latitude, longitude, GPSImgDirection, time (UTC, as the camera wrote it).
WALK_EXIF = [
    (49.00688961988304, 1.9191854417991367, 349.05820582058203, "2021-07-29T11:16:42"),
    (49.0068986458004, 1.9191896230005276, 11.185587171213454, "2021-07-29T11:16:44"),
    (49.00692625960235, 1.9191963606027425, 1.4737722892261527, "2021-07-29T11:16:46"),
    (49.00695484980094, 1.919199780601944, 350.4399829132849, "2021-07-29T11:16:48"),
    (49.00697341759938, 1.919194019996227, 356.46147540983605, "2021-07-29T11:16:50"),
]


def offset(lat, lng, north_m, east_m):
    return (lat + north_m / 111320.0, lng + east_m / (111320.0 * math.cos(math.radians(lat))))


def epoch_ms(text):
    return int(time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M:%S")) - time.timezone) * 1000


def rotation(heading, tilt, roll):
    """OpenSfM's angle-axis world-to-camera rotation (world east-north-up; camera x right, y down, z forward) of a
    camera facing `heading` (degrees clockwise from north), `tilt` degrees up, turned `roll` degrees clockwise as seen
    from behind."""
    h, t, r = (math.radians(v) for v in (heading, tilt, roll))
    f = (math.sin(h) * math.cos(t), math.cos(h) * math.cos(t), math.sin(t))       # forward
    right0 = (math.cos(h), -math.sin(h), 0.0)                                       # level right
    up0 = (-math.sin(h) * math.sin(t), -math.cos(h) * math.sin(t), math.cos(t))     # level up
    right = tuple(math.cos(r) * a - math.sin(r) * b for a, b in zip(right0, up0))   # rolled clockwise: right dips
    up = tuple(math.sin(r) * a + math.cos(r) * b for a, b in zip(right0, up0))
    down = tuple(-v for v in up)
    R = [right, down, f]  # rows: the camera's axes in the world
    trace = R[0][0] + R[1][1] + R[2][2]
    angle = math.acos(max(-1.0, min(1.0, (trace - 1) / 2)))
    if angle < 1e-12:
        return [0.0, 0.0, 0.0]
    s = 2 * math.sin(angle)
    axis = ((R[2][1] - R[1][2]) / s, (R[0][2] - R[2][0]) / s, (R[1][0] - R[0][1]) / s)
    return [a * angle for a in axis]


def world():
    out = []
    for i, (lat, lng, heading, when) in enumerate(WALK_EXIF):
        refined = (heading - 12) % 360
        img = dict(id=str(4000000000000001 + i), src=WALK % (i + 1), size=(5760, 2880), at=(lat, lng),
                   computed_at=offset(lat, lng, 0.3, -0.2), compass=heading, computed_compass=refined,
                   captured=epoch_ms(when), creator="ada_walks", seq="seq-walk", pano=True, camera="spherical")
        if i != 2:
            img["rotation"] = rotation(refined, 2.0, -1.0)
        out.append(img)
    drive = [offset(lat, lng, 0.8, 1.2) for lat, lng, _, _ in WALK_EXIF]
    end = WALK_EXIF[-1]
    drive += [offset(end[0], end[1], 3.0 * k, 0.4) for k in (1, 2, 3)]
    for i, at in enumerate(drive):
        out.append(dict(id=str(5000000000000001 + i), src=OVERPASS, frame=10 + 6 * i, size=(2048, 1024), at=at,
                        compass=95.0, captured=epoch_ms("2022-08-01T09:00:00") + 1000 * i, creator="bo_drives",
                        seq="seq-drive", pano=True, camera="spherical"))
    first = WALK_EXIF[0]
    out.append(dict(id="6000000000000001", src="images/opensfm_lund/images/01.jpg", size=(1024, 768),
                    at=offset(first[0], first[1], 0.1, 0), compass=10.0, captured=epoch_ms("2020-01-01T00:00:00"),
                    creator="carol_flat", seq="seq-flat", pano=False, camera="perspective"))
    out.append(dict(id="6000000000000002", src=WALK % 3, size=(5760, 2000), at=offset(first[0], first[1], 5.0, -0.5),
                    compass=0.0, captured=epoch_ms("2021-07-30T10:00:00"), creator="dan_crops", seq="seq-crop",
                    pano=True, camera="spherical"))
    return out


ALL = world()
_first = WALK_EXIF[0]
MALFORMED = [
    dict(id="7000000000000001", src=WALK % 2, size=(5760, 2880), at=offset(_first[0], _first[1], 1.0, 1.0),
         compass=0.0, captured=epoch_ms("2023-01-01T00:00:00"), creator="eve_text", seq="seq-text", pano=True,
         camera="spherical", width_as_text=True),
    dict(id="7000000000000002", src=WALK % 2, size=(5760, 2880), at=offset(_first[0], _first[1], -30.0, 0.0),
         compass=0.0, captured=epoch_ms("2023-01-01T00:00:00"), creator="", seq="seq-anon", pano=True,
         camera="spherical", anonymous=True),
]
BY_ID = {p["id"]: p for p in ALL + MALFORMED}
SEQUENCES = {}
for p in sorted(ALL, key=lambda p: p["captured"]):
    SEQUENCES.setdefault(p["seq"], []).append(p["id"])


def graph_error(status, message, code, kind="OAuthException"):
    return status, {"error": {"message": message, "type": kind, "code": code, "fbtrace_id": "AbCdEfGhIjK"}}


class Mapillary(Handler):
    def route(self, method, path, q):
        s = self.server
        auth = self.headers.get("Authorization")
        with s.lock:
            s.log.append({"time": time.time(), "path": path, "auth": auth is not None,
                          "query_token": "access_token" in q})
        if path == "/_log":
            with s.lock:
                return self.send(200, {"log": list(s.log)})
        if path.startswith("/cdn/"):
            return self.cdn(path, q)
        token = q.get("access_token") or (auth[len("OAuth "):] if auth and auth.startswith("OAuth ") else None)
        if token != s.token:
            return self.send(*graph_error(401, "Invalid OAuth access token - Cannot parse access token", 190))
        if path == "/images":
            self.count("search")
            with s.lock:
                s.searches += 1
                limited = s.searches <= s.rate_limit
                limited_code = s.searches <= s.rate_limit_code
            if limited:
                code, body = graph_error(429, "Application request limit reached", 4)
                return self.send(code, body, headers={"Retry-After": "1"})
            if limited_code:
                return self.send(*graph_error(400, "(#4) Application request limit reached", 4))
            if s.search_error:
                return self.send(*graph_error(400, "(#%d) Invalid parameter" % s.search_error, s.search_error))
            return self.send(*self.search(q))
        if path == "/image_ids":
            seq = q.get("sequence_id")
            if not seq:
                return self.send(*graph_error(400, "sequence_id is required", 100, "GraphMethodException"))
            return self.send(200, {"data": [{"id": i} for i in SEQUENCES.get(seq, [])]})
        ident = path.strip("/")
        if ident in BY_ID:
            self.count("entity")
            return self.send(200, self.fields(BY_ID[ident], q.get("fields", "id"), fresh=not s.always_expired))
        return self.send(*graph_error(404, "Unsupported get request.", 100, "GraphMethodException"))

    def search(self, q):
        try:
            x0, y0, x1, y1 = (float(v) for v in q["bbox"].split(","))
        except (KeyError, ValueError):
            return graph_error(400, "Invalid parameter bbox", 100, "GraphMethodException")
        if x1 < x0 or y1 < y0 or (x1 - x0) * (y1 - y0) >= 0.01:
            return graph_error(400, "Bbox area is too large: it must be less than 0.01 square degrees", 100,
                               "GraphMethodException")
        try:
            limit = int(q.get("limit", "2000"))
            if not 1 <= limit <= 2000:
                raise ValueError
        except ValueError:
            return graph_error(400, "limit must be between 1 and 2000", 100, "GraphMethodException")
        pics = [p for p in ALL + (MALFORMED if self.server.malformed else [])
                if x0 <= p["at"][1] <= x1 and y0 <= p["at"][0] <= y1]
        if "is_pano" in q:
            want = q["is_pano"].lower() == "true"
            pics = [p for p in pics if p["pano"] == want]
        if "sequence_id" in q:
            pics = [p for p in pics if p["seq"] == q["sequence_id"]]
        pics.sort(key=lambda p: hashlib.sha1(p["id"].encode()).hexdigest())
        fresh = not (self.server.expired_search or self.server.always_expired)
        return 200, {"data": [self.fields(p, q.get("fields", "id"), fresh) for p in pics[:limit]]}

    def fields(self, p, asked, fresh):
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        expiry = int(time.time()) + (3600 if fresh else -60)
        lat, lng = p["at"]
        w, h = p["size"]
        every = {
            "geometry": {"type": "Point", "coordinates": [lng, lat]},
            "compass_angle": p["compass"],
            "camera_type": p["camera"], "is_pano": p["pano"], "captured_at": p["captured"], "width": w, "height": h,
            "creator": {"id": "10" + str(int(hashlib.sha1(p["creator"].encode()).hexdigest()[:8], 16)), "username": p["creator"]},
            "sequence": p["seq"],
            "thumb_2048_url": f"{base}/cdn/{p['id']}/2048.jpg?stp=dst-jpg_s2048x1024&oh=00_AfB{p['id'][-4:]}&oe={expiry:08X}",
            "thumb_original_url": f"{base}/cdn/{p['id']}/original.jpg?stp=dst-jpg&oh=00_AfC{p['id'][-4:]}&oe={expiry:08X}",
        }
        if "computed_at" in p:
            every["computed_geometry"] = {"type": "Point", "coordinates": [p["computed_at"][1], p["computed_at"][0]]}
        if "computed_compass" in p:
            every["computed_compass_angle"] = p["computed_compass"]
        if "rotation" in p:
            every["computed_rotation"] = p["rotation"]
        if p.get("width_as_text"):
            every["width"] = str(w)
        if p.get("anonymous"):
            every["creator"] = {"id": "1000000000000099"}
        out = {"id": p["id"]}
        for name in asked.split(","):
            if name in every:
                out[name] = every[name]
        return out

    def cdn(self, path, q):
        parts = path.strip("/").split("/")
        if len(parts) != 3 or parts[1] not in BY_ID or parts[2] not in ("2048.jpg", "original.jpg"):
            return self.send(404, b"Not Found", "text/plain")
        try:
            expiry = int(q.get("oe", "0"), 16)
        except ValueError:
            expiry = 0
        if expiry < time.time():
            self.count("expired")
            return self.send(403, b"URL signature expired", "text/plain")
        self.count("images")
        self.count(parts[2][:-4])
        return self.send(200, self.server.picture(BY_ID[parts[1]], parts[2][:-4]), "image/jpeg",
                         headers={"Cache-Control": "max-age=1209600, no-transform"})


def main():
    unblock_signals()
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--token", default="MLY|4242424242424242|standinstandinstandin0000")
    ap.add_argument("--rate-limit", type=int, default=0)
    ap.add_argument("--rate-limit-code", type=int, default=0)
    ap.add_argument("--search-error", type=int, default=0)
    ap.add_argument("--malformed", action="store_true")
    ap.add_argument("--expired-search-urls", action="store_true")
    ap.add_argument("--always-expired", action="store_true")
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "../../../shared/data"))
    ap.add_argument("--workdir", default=None)
    a = ap.parse_args()
    workdir = a.workdir or tempfile.mkdtemp(prefix="mapillary-standin-")
    os.makedirs(workdir, exist_ok=True)
    lock = threading.Lock()

    def picture(p, size):
        """The original: the source as it is (a video's frame as a JPEG); 2048: scaled to 2048 pixels wide."""
        w, h = p["size"]
        if size == "original" and "frame" not in p and (w, h) != (5760, 2000):
            with open(os.path.join(a.data, p["src"]), "rb") as f:
                return f.read()
        filters = (f"select=eq(n\\,{p['frame']})," if "frame" in p else "") + f"scale={w}:{h}:flags=bicubic"
        if size == "2048":
            filters += f",scale=2048:{round(2048 * h / w)}:flags=bicubic"
        path = os.path.join(workdir, f"{p['id']}-{size}.jpg")
        with lock:
            if not os.path.exists(path):
                temp = f"{path}.tmp-{os.getpid()}.jpg"
                ffmpeg("-i", os.path.join(a.data, p["src"]), "-vf", filters, "-q:v", "2", "-frames:v", "1", temp)
                os.replace(temp, path)
        with open(path, "rb") as f:
            return f.read()

    def setup(server):
        server.token = a.token
        server.rate_limit = a.rate_limit
        server.rate_limit_code = a.rate_limit_code
        server.search_error = a.search_error
        server.malformed = a.malformed
        server.expired_search = a.expired_search_urls
        server.always_expired = a.always_expired
        server.picture = picture
        server.lock = threading.Lock()
        server.log = []
        server.searches = 0

    serve(Mapillary, a.port, setup)


if __name__ == "__main__":
    main()
