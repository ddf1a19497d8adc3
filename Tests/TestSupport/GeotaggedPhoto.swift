// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia

/// JPEGs with EXIF as consumer 360° cameras write it (GPS position and time; a compass direction only when given),
/// for tests of local photo sequences. The EXIF block (TIFF, little-endian) is written here by hand: IFD0 with
/// pointers to an Exif IFD (DateTimeOriginal) and a GPS IFD (GPSVersionID, GPSLatitudeRef/GPSLatitude,
/// GPSLongitudeRef/GPSLongitude as degrees, minutes, seconds, and optionally GPSImgDirectionRef "T" and
/// GPSImgDirection), per CIPA DC-008 (Exif 2.3).
public enum GeotaggedPhoto {
    /// Writes `pixels` as a JPEG (quality 92) with the EXIF above at `path`.
    /// - Parameters:
    ///   - latitude, longitude: degrees.
    ///   - direction: GPSImgDirection in degrees (true north), or nil for none.
    ///   - dateTime: DateTimeOriginal, `YYYY:MM:DD HH:MM:SS`.
    ///   - level: GPano `PosePitchDegrees` and `PoseRollDegrees` in an XMP packet (as cameras with a level
    ///     sensor write them), or nil for no XMP.
    ///   - croppedArea: GPano `FullPanoWidthPixels`, `FullPanoHeightPixels`, `CroppedAreaLeftPixels`,
    ///     `CroppedAreaTopPixels`, `CroppedAreaImageWidthPixels`, `CroppedAreaImageHeightPixels` in the XMP packet
    ///     (a 360° photo that is not the whole sphere), or nil.
    ///   - spherical: an XMP packet with `GPano:ProjectionType` `equirectangular` (as 360° cameras write it) even
    ///     without `level` or `croppedArea`.
    ///   - preview: a reduced copy stored after the photo as a GoPro MAX stores its 1440 × 720 one: a JPEG (quality
    ///     80) listed as a Large Thumbnail in an APP2 `MPF` segment (``multiPicture(primary:preview:at:)``), or nil.
    ///   - previewJPEG: the same with the copy's JPEG as given (a camera's own), in place of `preview`.
    public static func write(
        _ pixels: PixelBuffer, to path: String, latitude: Double, longitude: Double,
        direction: Double? = nil, dateTime: String, level: (pitch: Double, roll: Double)? = nil,
        croppedArea: (fullWidth: Int, fullHeight: Int, left: Int, top: Int, width: Int, height: Int)? = nil,
        spherical: Bool = false, preview: PixelBuffer? = nil, previewJPEG: [UInt8]? = nil
    ) throws {
        var jpeg = try ImageWriter.encode(pixels, as: .jpeg(quality: 92))
        let tiff = exif(latitude: latitude, longitude: longitude, direction: direction, dateTime: dateTime)
        var segments = app1(Array("Exif\0\0".utf8) + tiff)
        if level != nil || croppedArea != nil || spherical {
            var tags = ""
            if let level {
                tags += "GPano:PosePitchDegrees=\"\(level.pitch)\" GPano:PoseRollDegrees=\"\(level.roll)\" "
            }
            if let c = croppedArea {
                tags +=
                    "GPano:FullPanoWidthPixels=\"\(c.fullWidth)\" GPano:FullPanoHeightPixels=\"\(c.fullHeight)\" "
                    + "GPano:CroppedAreaLeftPixels=\"\(c.left)\" GPano:CroppedAreaTopPixels=\"\(c.top)\" "
                    + "GPano:CroppedAreaImageWidthPixels=\"\(c.width)\" "
                    + "GPano:CroppedAreaImageHeightPixels=\"\(c.height)\" "
            }
            let xmp = """
                <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
                <rdf:Description rdf:about="" xmlns:GPano="http://ns.google.com/photos/1.0/panorama/" \
                GPano:ProjectionType="equirectangular" \(tags)/></rdf:RDF></x:xmpmeta>
                """
            segments += app1(Array("http://ns.adobe.com/xap/1.0/\0".utf8) + Array(xmp.utf8))
        }
        if let copy = try previewJPEG ?? preview.map({ try ImageWriter.encode($0, as: .jpeg(quality: 80)) }) {
            let mpfSize = multiPicture(primary: 0, preview: 0, at: 0).count
            let at = 2 + segments.count + 8 // the MP header's byte order mark: after FF E2, the length, "MPF\0"
            let primary = jpeg.count + segments.count + mpfSize
            segments += multiPicture(primary: primary, preview: copy.count, at: primary - at)
            jpeg += copy
        }
        jpeg.insert(contentsOf: segments, at: 2) // right after SOI
        try Data(jpeg).write(to: URL(fileURLWithPath: path))
    }

    /// Where the MP header's byte order mark (the base of the Multi-Picture Format index's offsets) is in a file's
    /// bytes: right after the first `MPF\0`; nil without one.
    public static func multiPictureMark(in bytes: [UInt8]) -> Int? {
        let tag = Array("MPF\0".utf8)
        guard bytes.count >= tag.count else { return nil }
        return (0...(bytes.count - tag.count)).first { bytes[$0..<$0 + tag.count].elementsEqual(tag) }.map { $0 + 4 }
    }

    /// An APP2 `MPF` segment (CIPA DC-007-2009 5.2, big-endian as a GoPro MAX writes it) listing two images: the
    /// file itself (`primary` bytes, a representative Baseline MP Primary Image, offset 0) and a Large Thumbnail
    /// (VGA equivalent) of `preview` bytes stored `offset` bytes after the segment's byte order mark.
    public static func multiPicture(primary: Int, preview: Int, at offset: Int) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { u16(v >> 16) + u16(v & 0xFFFF) }
        // IFD at 8: 3 entries (MPFVersion, NumberOfImages, MPEntry), no next IFD; the MP entries after it.
        let entries = 8 + 2 + 3 * 12 + 4
        var payload = Array("MPF\0".utf8) + [0x4D, 0x4D, 0x00, 0x2A] + u32(8) + u16(3)
        payload += u16(0xB000) + u16(7) + u32(4) + Array("0100".utf8)
        payload += u16(0xB001) + u16(4) + u32(1) + u32(2)
        payload += u16(0xB002) + u16(7) + u32(32) + u32(entries) + u32(0)
        payload += u32(0x2003_0000) + u32(primary) + u32(0) + u16(0) + u16(0)
        payload += u32(0x0001_0001) + u32(preview) + u32(offset) + u16(0) + u16(0)
        let length = payload.count + 2
        return [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// A folder of photos as a 360° camera writes them: photo k is `pictures[k]` at `positions[k]` (latitude,
    /// longitude), named `IMG_0000.JPG` … in capture order, taken a second apart, with compass `directions[k]`
    /// (none when nil or not given), each saying it is equirectangular (XMP `GPano:ProjectionType`), each with the
    /// reduced copy `previews[k]` stored after it when given (`write`'s `preview`).
    /// - Returns: the folder's path.
    public static func folder(
        _ folder: URL, _ pictures: [PixelBuffer], positions: [(latitude: Double, longitude: Double)],
        directions: [Double?]? = nil, previews: [PixelBuffer]? = nil
    ) throws -> String {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (k, picture) in pictures.enumerated() {
            try write(
                picture, to: folder.appendingPathComponent(String(format: "IMG_%04d.JPG", k)).path,
                latitude: positions[k].latitude, longitude: positions[k].longitude, direction: directions?[k] ?? nil,
                dateTime: String(format: "2026:11:30 10:%02d:%02d", k / 60, k % 60), spherical: true,
                preview: previews?[k])
        }
        return folder.path
    }

    /// An APP1 segment holding `payload`.
    static func app1(_ payload: [UInt8]) -> [UInt8] {
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    static func exif(latitude: Double, longitude: Double, direction: Double?, dateTime: String) -> [UInt8] {
        // Entries: (tag, type, count, value bytes). Types: 1 BYTE, 2 ASCII, 4 LONG, 5 RATIONAL.
        typealias Entry = (tag: UInt16, type: UInt16, count: UInt32, bytes: [UInt8])
        func u16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
        func ascii(_ s: String) -> [UInt8] { Array(s.utf8) + [0] }
        func rational(_ v: Double, _ denominator: UInt32) -> [UInt8] {
            u32(UInt32((v * Double(denominator)).rounded())) + u32(denominator)
        }
        func dms(_ v: Double) -> [UInt8] {
            let d = v.rounded(.down)
            let m = ((v - d) * 60).rounded(.down)
            let s = ((v - d) * 60 - m) * 60
            return rational(d, 1) + rational(m, 1) + rational(s, 10000)
        }
        // Lays out an IFD at `offset`: entries, next-IFD 0, then the values that do not fit in 4 bytes.
        func ifd(_ entries: [Entry], at offset: Int) -> [UInt8] {
            var out = u16(UInt16(entries.count))
            var data: [UInt8] = []
            let dataStart = offset + 2 + 12 * entries.count + 4
            for e in entries.sorted(by: { $0.tag < $1.tag }) {
                out += u16(e.tag) + u16(e.type) + u32(e.count)
                if e.bytes.count <= 4 {
                    out += e.bytes + [UInt8](repeating: 0, count: 4 - e.bytes.count)
                } else {
                    out += u32(UInt32(dataStart + data.count))
                    data += e.bytes
                    if data.count % 2 == 1 { data.append(0) }
                }
            }
            return out + u32(0) + data
        }
        var gps: [Entry] = [
            (0x0000, 1, 4, [2, 3, 0, 0]),
            (0x0001, 2, 2, ascii(latitude >= 0 ? "N" : "S")),
            (0x0002, 5, 3, dms(abs(latitude))),
            (0x0003, 2, 2, ascii(longitude >= 0 ? "E" : "W")),
            (0x0004, 5, 3, dms(abs(longitude)))
        ]
        if let direction {
            gps.append((0x0010, 2, 2, ascii("T")))
            gps.append(
                (
                    0x0011, 5, 1,
                    rational(
                        (direction.truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360), 100
                    )
                ))
        }
        let exifEntries: [Entry] = [(0x9003, 2, 20, ascii(dateTime))]
        // Layout: header (8), IFD0 (2 entries), Exif IFD, GPS IFD.
        let ifd0Size = 2 + 12 * 2 + 4
        let exifOffset = 8 + ifd0Size
        let exifBlock = ifd(exifEntries, at: exifOffset)
        let gpsOffset = exifOffset + exifBlock.count
        let gpsBlock = ifd(gps, at: gpsOffset)
        let ifd0 = ifd([(0x8769, 4, 1, u32(UInt32(exifOffset))), (0x8825, 4, 1, u32(UInt32(gpsOffset)))], at: 8)
        return Array("II".utf8) + u16(42) + u32(8) + ifd0 + exifBlock + gpsBlock
    }
}
