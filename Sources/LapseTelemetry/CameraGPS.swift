// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo

/// A GPS position a camera recorded, at a time of its video.
public struct CameraGPSFix: Sendable, Equatable {
    /// Seconds from the video's start.
    public var time: Double
    /// Where the camera was, WGS84 degrees.
    public var coordinate: Coordinate
    /// Metres above the WGS84 ellipsoid or sea level, as the camera gives it.
    public var altitude: Double?
    /// Ground speed, m/s.
    public var speed: Double?
    /// 2 for a 2D fix, 3 for a 3D fix (nil when the camera does not say).
    public var fix: Int?
    /// Dilution of precision (lower is better; GoPro's `GPSP` is DOP × 100), when given.
    public var dop: Double?
    /// UTC time of the fix, when the camera gives one (GPMF `GPSU` or `GPS9`'s days and seconds, CAMM's GPS time).
    public var utc: Date?
    /// Horizontal accuracy in metres, when the camera gives it (CAMM `horizontal_accuracy`).
    public var horizontalAccuracy: Double?
}

extension GPMF {
    /// The GPS positions in one payload whose samples span `start` … `start + duration` seconds of the video
    /// (a `gpmd` sample): every `GPS5` (latitude, longitude, altitude, 2D and 3D speed, scaled by `SCAL`; its fix
    /// in `GPSF`, precision in `GPSP`, UTC time of the first in `GPSU`) and `GPS9` (the same and days since 2000,
    /// seconds since midnight, DOP and fix per sample; its field types in `TYPE`) sample, spread evenly over the
    /// span; when a payload has both, `GPS9` alone. Positions without a fix (`GPSF` 0 or 1), at 0,0 or out of range
    /// are left out.
    /// - Throws: ``LapseError`` `.invalidInput` for a payload that does not parse (see ``parse(_:)``).
    public static func gpsFixes(in payload: [UInt8], start: Double, duration: Double) throws -> [CameraGPSFix] {
        gpsFixes(inStreams: streams(try parse(payload)), start: start, duration: duration)
    }

    /// ``gpsFixes(in:start:duration:)`` of a payload's streams, parsed already.
    static func gpsFixes(inStreams all: [Item], start: Double, duration: Double) -> [CameraGPSFix] {
        var fixes: [CameraGPSFix] = []
        // A camera that writes both (HERO11 and later) gives the same positions twice: GPS9 has each one's fix,
        // precision and time, so it is taken alone.
        let hasGPS9 = all.contains { $0.item("GPS9") != nil }
        for stream in all {
            func scaled(_ v: [Double]) -> [Double] { GPMF.scaled(v, in: stream) }
            if let gps = stream.item("GPS5"), !hasGPS9 {
                let values = scaled(gps.numbers())
                let n = values.count / 5
                guard n > 0 else { continue }
                let fix = stream.item("GPSF")?.numbers().first.map { Int($0) }
                if let fix, fix < 2 { continue }
                let dop = stream.item("GPSP")?.numbers().first.map { $0 / 100 }
                let utc = stream.item("GPSU").flatMap(Self.utc)
                for i in 0..<n {
                    let v = values[(5 * i)..<(5 * i + 5)]
                    let t = start + duration * Double(i) / Double(n)
                    guard let c = Self.coordinate(v[v.startIndex], v[v.startIndex + 1]) else { continue }
                    fixes.append(
                        CameraGPSFix(
                            time: t, coordinate: c, altitude: v[v.startIndex + 2], speed: v[v.startIndex + 3],
                            fix: fix, dop: dop, utc: utc.map { $0.addingTimeInterval(t - start) }))
                }
            } else if let gps = stream.item("GPS9") {
                let types = stream.item("TYPE").map { Array($0.bytes.prefix { $0 != 0 }) } ?? Array("lllllllSS".utf8)
                let values = scaled(gps.numbers(types: types))
                let n = values.count / 9
                for i in 0..<n {
                    let v = Array(values[(9 * i)..<(9 * i + 9)])
                    guard Int(v[8]) >= 2, let c = Self.coordinate(v[0], v[1]) else { continue }
                    let t = start + duration * Double(i) / Double(n)
                    let utc = Date(timeIntervalSince1970: 946_684_800 + v[5] * 86_400 + v[6])
                    fixes.append(
                        CameraGPSFix(
                            time: t, coordinate: c, altitude: v[2], speed: v[3], fix: Int(v[8]), dop: v[7], utc: utc))
                }
            }
        }
        return fixes
    }

    /// The streams (`STRM`) of a parsed payload, in order, however deep their devices hold them.
    static func streams(_ items: [Item]) -> [Item] {
        items.flatMap { item -> [Item] in
            guard let children = item.items else { return [] }
            return item.key == "STRM" ? [item] : streams(children)
        }
    }

    /// A stream's values divided by its `SCAL` (one scale for all, or one per field, repeating).
    static func scaled(_ v: [Double], in stream: Item) -> [Double] {
        let scales = stream.item("SCAL")?.numbers() ?? []
        return v.indices.map { k in
            let s = scales.isEmpty ? 1 : scales.count == 1 ? scales[0] : scales[k % scales.count]
            return s == 0 ? v[k] : v[k] / s
        }
    }

    static func coordinate(_ latitude: Double, _ longitude: Double) -> Coordinate? {
        guard latitude.isFinite, longitude.isFinite, latitude != 0 || longitude != 0 else { return nil }
        return try? Coordinate(latitude: latitude, longitude: longitude)
    }

    /// A `GPSU` item's UTC time: `yymmddhhmmss.sss` (20yy).
    static func utc(_ item: Item) -> Date? {
        guard item.type == UInt8(ascii: "U") || item.type == UInt8(ascii: "c") else { return nil }
        let text = String(decoding: item.bytes.prefix(16), as: UTF8.self)
        guard text.count == 16, let seconds = Double(text.suffix(6)) else { return nil }
        let digits = Array(text.prefix(10))
        func number(_ r: Range<Int>) -> Int? { Int(String(digits[r])) }
        guard let y = number(0..<2), let mo = number(2..<4), let d = number(4..<6), let h = number(6..<8),
            let mi = number(8..<10)
        else { return nil }
        var components = DateComponents()
        (components.year, components.month, components.day, components.hour, components.minute) = (
            2000 + y, mo, d, h, mi
        )
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: components)?.addingTimeInterval(seconds)
    }
}
