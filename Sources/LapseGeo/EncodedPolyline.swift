// SPDX-License-Identifier: GPL-3.0-or-later
import LapseCore

/// Google's encoded polyline algorithm format, at precision 5 (Google Directions, 1e-5°) or 6 (OSRM, Valhalla, 1e-6°).
///
/// Each coordinate is stored as the difference from the previous one (latitude first), each value rounded to
/// `10^-precision` degrees, zig-zag signed (`v << 1`, inverted when negative) and written as 5-bit chunks, least
/// significant first, each chunk `| 0x20` when more follow, plus 63, as ASCII `?`…`~`.
/// Source: Google Maps Platform, "Encoded Polyline Algorithm Format".
public enum EncodedPolyline {
    /// Encodes coordinates. Each coordinate is rounded half away from zero to the precision first, and the
    /// differences are taken between rounded values, so rounding errors never accumulate.
    /// - Parameters:
    ///   - coordinates: the points, in order; an empty array gives the empty string.
    ///   - precision: decimal digits kept, 5 (Google) or 6 (OSRM); 1…7 accepted.
    /// - Returns: the encoded polyline.
    public static func encode(_ coordinates: [Coordinate], precision: Int = 5) -> String {
        precondition((1...7).contains(precision), "polyline precision must be 1…7")
        let factor = power(precision)
        var out: [UInt8] = []
        out.reserveCapacity(coordinates.count * 8)
        var previousLat = 0
        var previousLng = 0
        for c in coordinates {
            let lat = Int((c.latitude * factor).rounded(.toNearestOrAwayFromZero))
            let lng = Int((c.longitude * factor).rounded(.toNearestOrAwayFromZero))
            append(lat - previousLat, to: &out)
            append(lng - previousLng, to: &out)
            previousLat = lat
            previousLng = lng
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes an encoded polyline.
    /// - Parameters:
    ///   - string: the encoded text; surrounding whitespace is ignored. JSON escapes (`\\`) must already be undone.
    ///   - precision: 5 (Google) or 6 (OSRM); 1…7 accepted.
    /// - Returns: the coordinates, in order (empty for an empty string).
    /// - Throws: ``LapseError`` `.invalidInput` (subject `nil`; callers add the file or URL) when a character is
    ///   outside `?`…`~`, the text ends inside a value, a latitude has no longitude, a value overflows, or a decoded
    ///   coordinate lies outside the valid range (which usually means the wrong precision).
    public static func decode(_ string: String, precision: Int = 5) throws -> [Coordinate] {
        precondition((1...7).contains(precision), "polyline precision must be 1…7")
        let factor = power(precision)
        var result: [Coordinate] = []
        var lat = 0
        var lng = 0
        var utf8 = Substring(string).utf8[...]
        while let first = utf8.first, first == 0x20 || first == 0x0A || first == 0x0D || first == 0x09 {
            utf8 = utf8.dropFirst()
        }
        while let last = utf8.last, last == 0x20 || last == 0x0A || last == 0x0D || last == 0x09 {
            utf8 = utf8.dropLast()
        }
        var iterator = utf8.makeIterator()
        var offset = 0
        func next() throws -> Int? {
            var value = 0
            var shift = 0
            var sawAny = false
            while true {
                guard let byte = iterator.next() else {
                    if !sawAny { return nil }
                    throw LapseError(
                        .invalidInput, nil, "encoded polyline ends inside a value (at character \(offset))")
                }
                offset += 1
                sawAny = true
                guard byte >= 63 && byte <= 126 else {
                    throw LapseError(
                        .invalidInput, nil,
                        "encoded polyline has an invalid character \(describe(byte)) at position \(offset)")
                }
                let chunk = Int(byte) - 63
                guard shift <= 30 else {
                    throw LapseError(.invalidInput, nil, "encoded polyline has an overlong value at position \(offset)")
                }
                value |= (chunk & 0x1F) << shift
                shift += 5
                if chunk < 0x20 { break }
            }
            return (value & 1) != 0 ? ~(value >> 1) : (value >> 1)
        }
        while let dLat = try next() {
            guard let dLng = try next() else {
                throw LapseError(.invalidInput, nil, "encoded polyline ends after a latitude without its longitude")
            }
            lat += dLat
            lng += dLng
            let latitude = Double(lat) / factor
            let longitude = Double(lng) / factor
            guard latitude >= -90 && latitude <= 90 && longitude >= -180 && longitude <= 180 else {
                throw LapseError(
                    .invalidInput, nil,
                    """
                    encoded polyline decodes to \(Coordinate.format(latitude)),\(Coordinate.format(longitude)) \
                    (point \(result.count + 1)), outside the valid range; wrong precision?
                    """
                )
            }
            result.append(Coordinate(uncheckedLatitude: latitude, longitude: longitude))
        }
        return result
    }

    private static func power(_ precision: Int) -> Double {
        var f = 1.0
        for _ in 0..<precision { f *= 10 }
        return f
    }

    private static func append(_ value: Int, to out: inout [UInt8]) {
        var v = value < 0 ? ~(value << 1) : (value << 1)
        while v >= 0x20 {
            out.append(UInt8((0x20 | (v & 0x1F)) + 63))
            v >>= 5
        }
        out.append(UInt8(v + 63))
    }

    private static func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + String(byte, radix: 16)
    }
}
