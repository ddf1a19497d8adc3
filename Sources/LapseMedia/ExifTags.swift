// SPDX-License-Identifier: GPL-3.0-or-later
internal import CExif
import Foundation

/// The EXIF tags Lapse uses, read with libexif from the first bytes of a file (a JPEG's APP1 segment): the one
/// EXIF reader of the package, for an image's orientation and a photo's position, direction and date.
///
/// Tags (Exif 2.32, CIPA DC-008): IFD0 Make (0x010F), Model (0x0110), Orientation (0x0112) and DateTime (0x0132);
/// the Exif IFD's DateTimeOriginal
/// (0x9003); the GPS IFD's GPSLatitudeRef/GPSLatitude (0x0001/0x0002), GPSLongitudeRef/GPSLongitude (0x0003/0x0004)
/// and GPSImgDirection (0x0011).
public struct ExifTags: Sendable, Equatable {
    /// How the stored pixels are to be turned for display, or nil when the tag is absent or not 1–8.
    public var orientation: ImageOrientation?
    /// GPS position in signed decimal degrees (south and west negative), or nil.
    public var latitude: Double?
    /// GPS longitude in signed decimal degrees (west negative), or nil.
    public var longitude: Double?
    /// GPSImgDirection in degrees (true or magnetic north, as recorded), or nil.
    public var gpsImageDirection: Double?
    /// DateTimeOriginal, else DateTime, as written: `YYYY:MM:DD HH:MM:SS`.
    public var dateTime: String?
    /// The camera's maker and model as written (e.g. `GoPro`, `GoPro Max`; `RICOH`, `RICOH THETA Z1`), or nil.
    public var make: String?
    /// The camera's model as written (e.g. `GoPro Max`), or nil.
    public var model: String?

    /// The tags in `head` (a file's first bytes: a JPEG with its APP1 segment, or bare EXIF data); nil when it
    /// holds no EXIF data libexif can read.
    public init?(head: [UInt8]) {
        guard !head.isEmpty, let exif = exif_data_new_from_data(head, UInt32(head.count)) else { return nil }
        defer { exif_data_unref(exif) }
        let order = exif_data_get_byte_order(exif)
        func ifd(_ index: ExifIfd) -> UnsafeMutablePointer<ExifContent>? {
            withUnsafeBytes(of: exif.pointee.ifd) {
                $0.bindMemory(to: UnsafeMutablePointer<ExifContent>?.self)[Int(index.rawValue)]
            }
        }
        let ifd0 = ifd(EXIF_IFD_0)
        let exifIFD = ifd(EXIF_IFD_EXIF)
        let gps = ifd(EXIF_IFD_GPS)
        guard ifd0?.pointee.count ?? 0 > 0 || exifIFD?.pointee.count ?? 0 > 0 || gps?.pointee.count ?? 0 > 0 else {
            return nil
        }
        if let ifd0, let value = Self.short(ifd0, tag: 0x0112, order: order) {
            orientation = ImageOrientation(rawValue: value)
        }
        if let gps {
            let lat = Self.degrees(gps, tag: 0x0002, order: order)
            let latRef = Self.text(gps, tag: 0x0001)
            let lng = Self.degrees(gps, tag: 0x0004, order: order)
            let lngRef = Self.text(gps, tag: 0x0003)
            if let lat, let lng {
                latitude = latRef?.uppercased().hasPrefix("S") == true ? -lat : lat
                longitude = lngRef?.uppercased().hasPrefix("W") == true ? -lng : lng
            }
            if let d = Self.rationals(gps, tag: 0x0011, order: order)?.first, d.isFinite {
                gpsImageDirection = d
            }
        }
        dateTime = exifIFD.flatMap { Self.text($0, tag: 0x9003) } ?? ifd0.flatMap { Self.text($0, tag: 0x0132) }
        make = ifd0.flatMap { Self.text($0, tag: 0x010F) }
        model = ifd0.flatMap { Self.text($0, tag: 0x0110) }
    }

    /// The tags at the start of the file at `url` (its first 1 MB: where a JPEG's EXIF is); nil without any.
    public init?(url: URL) {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        self.init(head: [UInt8]((try? handle.read(upToCount: 1 << 20)) ?? Data()))
    }

    private static func entry(_ content: UnsafeMutablePointer<ExifContent>, tag: UInt32)
        -> UnsafeMutablePointer<ExifEntry>?
    {
        exif_content_get_entry(content, ExifTag(rawValue: tag))
    }

    private static func short(_ content: UnsafeMutablePointer<ExifContent>, tag: UInt32, order: ExifByteOrder)
        -> Int?
    {
        guard let e = entry(content, tag: tag), e.pointee.format == EXIF_FORMAT_SHORT, e.pointee.components >= 1,
            let data = e.pointee.data
        else { return nil }
        return Int(exif_get_short(data, order))
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
}
