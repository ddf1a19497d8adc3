#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stand-in for a Panoramax STAC API on 127.0.0.1, for Lapse's tests. Prints `PORT <n>` first.

  GET /api/search?bbox=minLon,minLat,maxLon,maxLat&limit=N   GeoJSON FeatureCollection of STAC items
  GET /images/<id>/hd.jpg                                     the HD picture (made with ffmpeg into --workdir)
  GET /_stats, /_reset

The world: two 360 pictures cut from <data>/pano360 and one flat (field of view 70) picture near the first,
which a client must skip. Options: --faults RATE, --retry-after S, --stall S, --data DIR, --workdir DIR.
"""
import argparse, os, sys, tempfile, threading
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from standin_common import Handler, FaultPlan, ffmpeg, serve, unblock_signals

WORLD = [
    dict(id="6b1c7e52-0f1a-4c55-9a59-1a2b3c4d5e01", src="pano360/trekview_360/GSAG2002.JPG", size=(2048, 1024), fov=360,
         lat=45.76000, lng=4.83000, azimuth=123.5, datetime="2020-05-09T10:11:12+00:00", license="CC-BY-SA-4.0",
         producer="Alice Example"),
    dict(id="6b1c7e52-0f1a-4c55-9a59-1a2b3c4d5e02", src="pano360/trekview_360/R0014760.JPG", size=(1536, 768), fov=360,
         lat=45.76040, lng=4.83000, azimuth=350.0, datetime="2020-05-11T08:00:00+00:00", license="etalab-2.0",
         producer="Zoë Éléonore"),
    # A flat picture right on top of the first point: must never be chosen.
    dict(id="6b1c7e52-0f1a-4c55-9a59-1a2b3c4d5e03", src="images/opensfm_lund/images/01.jpg", size=(1024, 768), fov=70,
         lat=45.76001, lng=4.83000, azimuth=10.0, datetime="2015-06-05T12:00:00+00:00", license="CC-BY-SA-4.0",
         producer="Carol Example"),
]
BY_ID = {p["id"]: p for p in WORLD}


class Panoramax(Handler):
    def route(self, method, path, q):
        s = self.server
        fault = s.plan.fault_for(s.stats, method + " " + path + " " + q.get("bbox", ""))
        if fault:
            return self.apply_fault(fault, s.plan)
        if path == "/api/search":
            self.count("search")
            try:
                x0, y0, x1, y1 = (float(v) for v in q["bbox"].split(","))
            except (KeyError, ValueError):
                return self.send(400, {"message": "bbox needed", "status_code": 400})
            limit = int(q.get("limit", "10"))
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            feats = [self.item(p, base) for p in WORLD if x0 <= p["lng"] <= x1 and y0 <= p["lat"] <= y1][:limit]
            return self.send(200, {"type": "FeatureCollection", "features": feats, "links": []}, "application/geo+json")
        parts = path.strip("/").split("/")
        if len(parts) == 3 and parts[0] == "images" and parts[2] == "hd.jpg" and parts[1] in BY_ID:
            self.count("images")
            return self.send(200, s.picture(BY_ID[parts[1]]), "image/jpeg")
        return self.send(404, {"message": "not found", "status_code": 404})

    @staticmethod
    def item(p, base):
        return {
            "type": "Feature", "stac_version": "1.0.0", "id": p["id"], "collection": "seq-1",
            "geometry": {"type": "Point", "coordinates": [p["lng"], p["lat"]]},
            "bbox": [p["lng"], p["lat"], p["lng"], p["lat"]],
            "properties": {
                "datetime": p["datetime"], "view:azimuth": p["azimuth"], "license": p["license"],
                "geovisio:producer": p["producer"],
                "pers:interior_orientation": {"field_of_view": p["fov"], "camera_manufacturer": "Stand-in",
                                              "sensor_array_dimensions": list(p["size"])},
            },
            "providers": [{"name": p["producer"], "roles": ["producer"]}],
            "assets": {
                "hd": {"href": f"{base}/images/{p['id']}/hd.jpg", "type": "image/jpeg", "roles": ["data"]},
                "thumb": {"href": f"{base}/images/{p['id']}/thumb.jpg", "type": "image/jpeg", "roles": ["thumbnail"]},
            },
            "links": [],
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
    a = ap.parse_args()
    workdir = a.workdir or tempfile.mkdtemp(prefix="panoramax-standin-")
    os.makedirs(workdir, exist_ok=True)
    lock = threading.Lock()

    def picture(p):
        path = os.path.join(workdir, p["id"] + ".jpg")
        with lock:
            if not os.path.exists(path):
                temp = f"{path}.tmp-{os.getpid()}.jpg"
                w, h = p["size"]
                ffmpeg("-i", os.path.join(a.data, p["src"]), "-vf", f"scale={w}:{h}:flags=bicubic,format=yuv444p",
                       "-q:v", "1", "-qmin", "1", "-pix_fmt", "yuvj444p", "-frames:v", "1", temp)
                os.replace(temp, path)
        with open(path, "rb") as f:
            return f.read()

    def setup(server):
        server.plan = FaultPlan(a.faults, a.retry_after, a.stall)
        server.picture = picture

    serve(Panoramax, a.port, setup)


if __name__ == "__main__":
    main()
