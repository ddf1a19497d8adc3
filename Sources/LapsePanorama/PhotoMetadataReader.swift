// SPDX-License-Identifier: GPL-3.0-or-later
import CExif
import Foundation
import LapseCore
import LapseGeo

/// What a photo file says about where and how it was taken: EXIF GPS and date (read with libexif), the GPano
/// heading from its XMP packet, and the pixel size from the JPEG frame header (without decoding the image).
public struct PhotoMetadata: Sendable, Equatable {
    public var path: String
    /// EXIF GPSLatitude/GPSLongitude with their N/S, E/W references, or `nil`.
    public var coordinate: Coordinate?
    /// EXIF GPSImgDirection in degrees (true or magnetic north, as recorded), or `nil`.
    public var gpsImageDirection: Double?
    /// XMP `GPano:PoseHeadingDegrees`, or `nil`.
    public var poseHeading: Double?
    /// EXIF DateTimeOriginal (or DateTime) as written: `YYYY:MM:DD HH:MM:SS`.
    public var dateTime: String?
    /// Stored size in pixels (from the JPEG SOF header), or `nil` when not a JPEG.
    public var width: Int?
    public var height: Int?

    /// Reads `path`.
    /// - Throws: ``LapseError`` `.invalidInput` when the file cannot be read.
    public init(path: String) throws {
        self.path = path
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw LapseError(
                .invalidInput, path,
                FileManager.default.fileExists(atPath: path) ? "file is not readable" : "no such file")
        }
        // Headers (EXIF, XMP, SOF) sit at the start; 1 MB is plenty and keeps big files cheap.
        let head = [UInt8]((try? handle.read(upToCount: 1 << 20)) ?? Data())
        try? handle.close()
        (width, height) = Self.jpegSize(head) ?? (nil, nil)
        poseHeading = Self.xmpValue("GPano:PoseHeadingDegrees", in: head)
        guard let exif = exif_data_new_from_data(head, UInt32(head.count)) else { return }
        defer { exif_data_unref(exif) }
        let order = exif_data_get_byte_order(exif)
        let gps = withUnsafeBytes(of: exif.pointee.ifd) {
            $0.bindMemory(to: UnsafeMutablePointer<ExifContent>?.self)[Int(EXIF_IFD_GPS.rawValue)]
        }
        let exifIFD = withUnsafeBytes(of: exif.pointee.ifd) {
            $0.bindMemory(to: UnsafeMutablePointer<ExifContent>?.self)[Int(EXIF_IFD_EXIF.rawValue)]
        }
        let ifd0 = withUnsafeBytes(of: exif.pointee.ifd) {
            $0.bindMemory(to: UnsafeMutablePointer<ExifContent>?.self)[Int(EXIF_IFD_0.rawValue)]
        }
        if let gps {
            let lat = Self.degrees(gps, tag: 0x0002, order: order), latRef = Self.text(gps, tag: 0x0001)
            let lng = Self.degrees(gps, tag: 0x0004, order: order), lngRef = Self.text(gps, tag: 0x0003)
            if let lat, let lng {
                let signedLat = latRef?.uppercased().hasPrefix("S") == true ? -lat : lat
                let signedLng = lngRef?.uppercased().hasPrefix("W") == true ? -lng : lng
                coordinate = try? Coordinate(latitude: signedLat, longitude: signedLng)
            }
            if let d = Self.rationals(gps, tag: 0x0011, order: order)?.first, d.isFinite {
                gpsImageDirection = normalizeDegrees(d)
            }
        }
        dateTime = exifIFD.flatMap { Self.text($0, tag: 0x9003) } ?? ifd0.flatMap { Self.text($0, tag: 0x0132) }
    }

    private static func entry(_ content: UnsafeMutablePointer<ExifContent>, tag: UInt32) -> UnsafeMutablePointer<
        ExifEntry
    >? {
        exif_content_get_entry(content, ExifTag(rawValue: tag))
    }

    private static func rationals(_ content: UnsafeMutablePointer<ExifContent>, tag: UInt32, order: ExifByteOrder)
        -> [Double]?
    {
        guard let e = entry(content, tag: tag), e.pointee.format == EXIF_FORMAT_RATIONAL, let data = e.pointee.data
        else { return nil }
        let size = Int(exif_format_get_size(EXIF_FORMAT_RATIONAL))
        return (0..<Int(e.pointee.components)).compactMap { i in
            let r = exif_get_rational(data + i * size, order)
            return r.denominator == 0 ? nil : Double(r.numerator) / Double(r.denominator)
        }
    }

    /// Degrees, minutes, seconds → decimal degrees.
    private static func degrees(_ content: UnsafeMutablePointer<ExifContent>, tag: UInt32, order: ExifByteOrder)
        -> Double?
    {
        guard let v = rationals(content, tag: tag, order: order), v.count == 3 else { return nil }
        return v[0] + v[1] / 60 + v[2] / 3600
    }

    private static func text(_ content: UnsafeMutablePointer<ExifContent>, tag: UInt32) -> String? {
        guard let e = entry(content, tag: tag), e.pointee.format == EXIF_FORMAT_ASCII, let data = e.pointee.data else {
            return nil
        }
        let bytes = UnsafeBufferPointer(start: data, count: Int(e.pointee.size)).prefix { $0 != 0 }
        let s = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        return s.isEmpty ? nil : s
    }

    /// Width and height from the first SOF marker of a JPEG (ITU T.81 B.2.2), or `nil`.
    static func jpegSize(_ b: [UInt8]) -> (Int, Int)? {
        guard b.count > 4, b[0] == 0xFF, b[1] == 0xD8 else { return nil }
        var i = 2
        while i + 9 < b.count {
            guard b[i] == 0xFF else { return nil }
            let marker = b[i + 1]
            if marker == 0xFF { i += 1; continue }
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            if (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC {
                let h = Int(b[i + 5]) << 8 | Int(b[i + 6]), w = Int(b[i + 7]) << 8 | Int(b[i + 8])
                return (w, h)
            }
            i += 2 + length
        }
        return nil
    }

    /// A numeric XMP property written as an attribute (`name="12.5"`) or an element (`<name>12.5</name>`).
    static func xmpValue(_ name: String, in bytes: [UInt8]) -> Double? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let start = text.range(of: name) else { return nil }
        var rest = text[start.upperBound...].drop { $0 == " " }
        if rest.first == "=" {
            rest = rest.dropFirst().drop { $0 == " " || $0 == "\"" || $0 == "'" }
        } else if rest.first == ">" {
            rest = rest.dropFirst()
        } else {
            return nil
        }
        let number = rest.prefix { $0.isNumber || $0 == "." || $0 == "-" || $0 == "+" }
        return Double(number)
    }
}
