#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""bench/geotag.py DIR LAT LNG BEARING METRES: writes EXIF as a consumer 360° camera does (GPS position, no compass,
DateTimeOriginal a second apart) into every JPEG of DIR, in name order, the k-th METRES·k metres from LAT,LNG towards
BEARING (degrees): a photo sequence for the benchmarks. The EXIF block (TIFF, little-endian: IFD0 pointing to an
Exif IFD and a GPS IFD, per CIPA DC-008) goes in an APP1 segment right after SOI, followed by the XMP packet with
GPano ProjectionType equirectangular that 360° cameras write. With PREVIEW_WIDTH set (a GoPro MAX photo carries a
1440 x 720 one), each photo also gets the reduced copy cameras store after the image: ffmpeg scales it to that width
(JPEG, -q:v 5) and an APP2 MPF segment (CIPA DC-007-2009, little-endian) lists it as a Large Thumbnail.
Standard library and ffmpeg only."""
import math, os, struct, subprocess, sys

def destination(lat, lng, bearing, metres):
    r = 6371008.8
    d, b = metres / r, math.radians(bearing)
    p1, l1 = math.radians(lat), math.radians(lng)
    p2 = math.asin(math.sin(p1) * math.cos(d) + math.cos(p1) * math.sin(d) * math.cos(b))
    l2 = l1 + math.atan2(math.sin(b) * math.sin(d) * math.cos(p1), math.cos(d) - math.sin(p1) * math.sin(p2))
    return math.degrees(p2), math.degrees(l2)

def exif(lat, lng, when):
    u16, u32 = (lambda v: struct.pack("<H", v)), (lambda v: struct.pack("<I", v))
    def rationals(values):
        return b"".join(u32(n) + u32(d) for n, d in values)
    def dms(v):
        d = int(v); m = int((v - d) * 60); s = ((v - d) * 60 - m) * 60
        return rationals([(d, 1), (m, 1), (int(round(s * 10000)), 10000)])
    def ifd(entries, offset):
        out, data = u16(len(entries)), b""
        start = offset + 2 + 12 * len(entries) + 4
        for tag, kind, count, value in sorted(entries):
            out += u16(tag) + u16(kind) + u32(count)
            if len(value) <= 4:
                out += value + b"\0" * (4 - len(value))
            else:
                out += u32(start + len(data)); data += value + (b"\0" if len(value) % 2 else b"")
        return out + u32(0) + data
    gps = [(0, 1, 4, bytes([2, 3, 0, 0])), (1, 2, 2, (b"N" if lat >= 0 else b"S") + b"\0"), (2, 5, 3, dms(abs(lat))),
           (3, 2, 2, (b"E" if lng >= 0 else b"W") + b"\0"), (4, 5, 3, dms(abs(lng)))]
    exif_offset = 8 + 2 + 12 * 2 + 4
    exif_block = ifd([(0x9003, 2, 20, when.encode() + b"\0")], exif_offset)
    gps_offset = exif_offset + len(exif_block)
    ifd0 = ifd([(0x8769, 4, 1, u32(exif_offset)), (0x8825, 4, 1, u32(gps_offset))], 8)
    tiff = b"II" + u16(42) + u32(8) + ifd0 + exif_block + ifd(gps, gps_offset)
    payload = b"Exif\0\0" + tiff
    return b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload

def xmp():
    """The XMP packet a 360° camera writes: GPano ProjectionType equirectangular (so the photos are taken as 360° ones
    without looking at their pixels, as a camera's are)."""
    packet = (b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
              b'<rdf:Description rdf:about="" xmlns:GPano="http://ns.google.com/photos/1.0/panorama/" '
              b'GPano:ProjectionType="equirectangular"/></rdf:RDF></x:xmpmeta>')
    payload = b"http://ns.adobe.com/xap/1.0/\0" + packet
    return b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload

def mpf(primary, preview, offset):
    """An APP2 MPF segment listing the file itself (primary bytes) and a Large Thumbnail (VGA equivalent) of preview
    bytes stored offset bytes after the segment's byte order mark."""
    u16, u32 = (lambda v: struct.pack("<H", v)), (lambda v: struct.pack("<I", v))
    entries = 8 + 2 + 3 * 12 + 4
    payload = b"MPF\0" + b"II*\0" + u32(8) + u16(3)
    payload += u16(0xB000) + u16(7) + u32(4) + b"0100"
    payload += u16(0xB001) + u16(4) + u32(1) + u32(2)
    payload += u16(0xB002) + u16(7) + u32(32) + u32(entries) + u32(0)
    payload += u32(0x20030000) + u32(primary) + u32(0) + u16(0) + u16(0)
    payload += u32(0x00010001) + u32(preview) + u32(offset) + u16(0) + u16(0)
    return b"\xff\xe2" + struct.pack(">H", len(payload) + 2) + payload

def reduced_copy(path, width):
    return subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-vf", f"scale={width}:{width // 2}:flags=area",
                           "-q:v", "5", "-f", "image2pipe", "-c:v", "mjpeg", "-"], check=True, capture_output=True).stdout

folder, lat, lng, bearing, metres = sys.argv[1], *map(float, sys.argv[2:6])
preview_width = int(os.environ.get("PREVIEW_WIDTH") or 0)
for k, name in enumerate(sorted(n for n in os.listdir(folder) if n.lower().endswith((".jpg", ".jpeg")))):
    path = os.path.join(folder, name)
    data = open(path, "rb").read()
    la, ln = destination(lat, lng, bearing, metres * k)
    head = data[:2] + exif(la, ln, "2026:11:30 10:%02d:%02d" % (k // 60, k % 60)) + xmp()
    tail = b""
    if preview_width:
        tail = reduced_copy(path, preview_width)
        primary = len(head) + len(mpf(0, 0, 0)) + len(data) - 2
        head += mpf(primary, len(tail), primary - (len(head) + 8))
    with open(path, "wb") as f:
        f.write(head + data[2:] + tail)
