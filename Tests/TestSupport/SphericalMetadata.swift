// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Writes Google's Spherical Video V1 metadata into an MP4 as the Spatial Media Metadata Injector does: a `uuid`
/// box (UUID ffcc8263-f855-4a93-8814-587a02521fdd) holding the `GSpherical` XML, at the end of the first track's
/// `trak` box (github.com/google/spatial-media, docs/spherical-video-rfc.md). Only for files whose `moov` box
/// comes after `mdat` (ffmpeg's default), whose chunk offsets then stay as they are.
public enum SphericalMetadata {
    public static func inject(into path: String, projection: String = "equirectangular") throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u32(_ i: Int) -> Int { bytes[i..<i + 4].reduce(0) { $0 << 8 | Int($1) } }
        func put(_ v: Int, at i: Int) { for k in 0..<4 { bytes[i + k] = UInt8((v >> (24 - 8 * k)) & 0xFF) } }
        func type(_ i: Int) -> String { String(decoding: bytes[i + 4..<i + 8], as: UTF8.self) }
        // Top-level boxes: moov after mdat.
        var i = 0
        var moov: Int?
        var sawMdat = false
        while i + 8 <= bytes.count {
            if type(i) == "mdat" { sawMdat = true }
            if type(i) == "moov" { moov = i }
            i += u32(i)
        }
        guard let moov, sawMdat else { throw ReferenceError(message: "\(path): no moov after mdat") }
        var j = moov + 8
        while j < moov + u32(moov), type(j) != "trak" { j += u32(j) }
        guard type(j) == "trak" else { throw ReferenceError(message: "\(path): no trak") }
        let xml = """
            <?xml version="1.0"?><rdf:SphericalVideo xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" \
            xmlns:GSpherical="http://ns.google.com/videos/1.0/spherical/">\
            <GSpherical:Spherical>true</GSpherical:Spherical><GSpherical:Stitched>true</GSpherical:Stitched>\
            <GSpherical:StitchingSoftware>Spherical Metadata Tool</GSpherical:StitchingSoftware>\
            <GSpherical:ProjectionType>\(projection)</GSpherical:ProjectionType></rdf:SphericalVideo>
            """
        let uuid: [UInt8] = [
            0xff, 0xcc, 0x82, 0x63, 0xf8, 0x55, 0x4a, 0x93, 0x88, 0x14, 0x58, 0x7a, 0x02, 0x52, 0x1f, 0xdd
        ]
        var box = [UInt8](repeating: 0, count: 4) + Array("uuid".utf8) + uuid + Array(xml.utf8)
        let size = box.count
        for k in 0..<4 { box[k] = UInt8((size >> (24 - 8 * k)) & 0xFF) }
        let trakEnd = j + u32(j)
        bytes.insert(contentsOf: box, at: trakEnd)
        put(u32(j) + size, at: j)
        put(u32(moov) + size, at: moov)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}
