// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

/// A point on the Earth: latitude and longitude in degrees (WGS 84).
///
/// Latitude is in [-90, 90] (north positive), longitude in [-180, 180] (east positive). The validating
/// initialiser rejects anything else; ``init(uncheckedLatitude:longitude:)`` exists for values already known
/// to be valid (e.g. the output of the formulas below, which normalise their results).
public struct Coordinate: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Degrees north of the equator, -90…90.
    public let latitude: Double
    /// Degrees east of Greenwich, -180…180.
    public let longitude: Double

    /// - Throws: ``LapseError`` `.invalidInput` when latitude ∉ [-90, 90], longitude ∉ [-180, 180] or either is not
    ///   finite.
    public init(latitude: Double, longitude: Double) throws {
        guard latitude.isFinite, latitude >= -90, latitude <= 90 else {
            throw LapseError(.invalidInput, nil, "latitude \(Self.format(latitude)) is outside -90…90")
        }
        guard longitude.isFinite, longitude >= -180, longitude <= 180 else {
            throw LapseError(.invalidInput, nil, "longitude \(Self.format(longitude)) is outside -180…180")
        }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// A coordinate from values the caller guarantees to be in range (checked only in debug builds).
    public init(uncheckedLatitude latitude: Double, longitude: Double) {
        assert(
            latitude >= -90 && latitude <= 90 && longitude >= -180 && longitude <= 180,
            "coordinate out of range: \(latitude), \(longitude)")
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Parses `"lat,lng"` (decimal degrees, optional spaces), e.g. `"43.6532,-79.3832"`.
    /// - Throws: ``LapseError`` `.invalidInput` when the text is not two numbers or they are out of range.
    public static func parse(_ text: String) throws -> Coordinate {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, let lat = NumberText.decimal(parts[0]), let lng = NumberText.decimal(parts[1]) else {
            throw LapseError(.invalidInput, nil, "'\(text)' is not \"latitude,longitude\" in degrees")
        }
        return try Coordinate(latitude: lat, longitude: lng)
    }

    /// `"lat,lng"` with up to 7 decimals (about 1 cm), the form ``parse(_:)`` reads.
    public var description: String { "\(Self.format(latitude)),\(Self.format(longitude))" }

    static func format(_ v: Double) -> String { NumberText.compact(v, digits: 7) }

    // Codable: {"latitude": …, "longitude": …}, validated on decoding.
    private enum CodingKeys: String, CodingKey { case latitude, longitude }
    /// Reads `{"latitude": …, "longitude": …}` (degrees).
    /// - Throws: `DecodingError` for a missing key, or a latitude or longitude out of range.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let lat = try c.decode(Double.self, forKey: .latitude)
        let lng = try c.decode(Double.self, forKey: .longitude)
        do { try self.init(latitude: lat, longitude: lng) } catch let e as LapseError {
            throw DecodingError.dataCorruptedError(forKey: .latitude, in: c, debugDescription: e.reason)
        }
    }
    /// Writes `{"latitude": …, "longitude": …}` (degrees).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(latitude, forKey: .latitude)
        try c.encode(longitude, forKey: .longitude)
    }
}

// MARK: - Spherical geometry

/// The Earth's mean radius R₁ = (2a + b)/3 of WGS 84, in metres (IUGG; Moritz, "Geodetic Reference System 1980").
/// All distances in LapseGeo use a sphere of this radius; the error against the ellipsoid is below 0.5 %.
public let earthRadius: Double = 6_371_008.8

@inline(__always) func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
@inline(__always) func degrees(_ radians: Double) -> Double { radians * 180 / .pi }

extension Coordinate {
    /// Great-circle distance in metres to `other`, by the haversine formula on a sphere of radius ``earthRadius``
    /// (R. W. Sinnott, "Virtues of the Haversine", Sky and Telescope 68(2), 1984). Exact for antipodes and tiny
    /// distances alike; crossing the antimeridian needs no special care.
    public func distance(to other: Coordinate) -> Double {
        let lat1 = radians(latitude)
        let lat2 = radians(other.latitude)
        let dLat = lat2 - lat1
        let dLon = radians(other.longitude - longitude)
        let s1 = sin(dLat / 2)
        let s2 = sin(dLon / 2)
        let h = min(1, max(0, s1 * s1 + cos(lat1) * cos(lat2) * s2 * s2))
        return 2 * earthRadius * asin(h.squareRoot())
    }

    /// Initial bearing (forward azimuth) of the great circle from here to `other`, in degrees clockwise from
    /// true north, 0 ≤ b < 360. Formula: θ = atan2(sin Δλ · cos φ₂, cos φ₁ · sin φ₂ − sin φ₁ · cos φ₂ · cos Δλ)
    /// (Ed Williams, "Aviation Formulary"). For identical points the result is 0; from a pole, the bearing is
    /// measured against the meridian of `longitude`.
    public func initialBearing(to other: Coordinate) -> Double {
        let lat1 = radians(latitude)
        let lat2 = radians(other.latitude)
        let dLon = radians(other.longitude - longitude)
        let y = sin(dLon) * cos(lat2)
        let x = cos(lat1) * sin(lat2) - sin(lat1) * cos(lat2) * cos(dLon)
        if abs(y) < 1e-15 && abs(x) < 1e-15 { return 0 }
        return normalizeDegrees(degrees(atan2(y, x)))
    }

    /// The point a `fraction` of the way along the great circle from here to `other`
    /// (0 gives `self`, 1 gives `other`; values outside 0…1 extrapolate along the same circle).
    /// Spherical linear interpolation of the unit vectors (Ed Williams, "Aviation Formulary", intermediate points);
    /// falls back to `self` for identical points and is stable for points centimetres apart.
    public func interpolated(to other: Coordinate, fraction: Double) -> Coordinate {
        if fraction == 0 { return self }
        if fraction == 1 { return other }
        let a = unitVector
        let b = other.unitVector
        let dot = min(1, max(-1, a.x * b.x + a.y * b.y + a.z * b.z))
        let angle = acos(dot)
        let v: (x: Double, y: Double, z: Double)
        if angle < 1e-9 {
            // Nearly identical: linear interpolation of the vectors is exact to far below a millimetre.
            v = (a.x + (b.x - a.x) * fraction, a.y + (b.y - a.y) * fraction, a.z + (b.z - a.z) * fraction)
        } else {
            let sinAngle = sin(angle)
            let wa = sin((1 - fraction) * angle) / sinAngle
            let wb = sin(fraction * angle) / sinAngle
            v = (wa * a.x + wb * b.x, wa * a.y + wb * b.y, wa * a.z + wb * b.z)
        }
        return Coordinate(unitVector: v)
    }

    /// The point reached by travelling `distance` metres from here along the great circle that starts at
    /// `bearing` degrees (clockwise from north). Negative distances travel backwards.
    /// (Ed Williams, "Aviation Formulary", destination given distance and bearing.)
    public func destination(bearing: Double, distance: Double) -> Coordinate {
        let angle = distance / earthRadius
        let course = radians(bearing)
        let lat1 = radians(latitude)
        let lon1 = radians(longitude)
        let sinLat2 = min(1, max(-1, sin(lat1) * cos(angle) + cos(lat1) * sin(angle) * cos(course)))
        let lat2 = asin(sinLat2)
        let lon2 = lon1 + atan2(sin(course) * sin(angle) * cos(lat1), cos(angle) - sin(lat1) * sinLat2)
        return Coordinate(
            uncheckedLatitude: min(90, max(-90, degrees(lat2))), longitude: normalizeLongitude(degrees(lon2)))
    }

    /// The point as a unit vector (x toward 0°N 0°E, y toward 0°N 90°E, z toward the north pole).
    var unitVector: (x: Double, y: Double, z: Double) {
        let lat = radians(latitude)
        let lon = radians(longitude)
        return (cos(lat) * cos(lon), cos(lat) * sin(lon), sin(lat))
    }

    /// The coordinate of the direction of a (not necessarily unit) vector.
    init(unitVector v: (x: Double, y: Double, z: Double)) {
        let lat = degrees(atan2(v.z, (v.x * v.x + v.y * v.y).squareRoot()))
        let lng = (v.x == 0 && v.y == 0) ? 0 : degrees(atan2(v.y, v.x))
        self.init(uncheckedLatitude: min(90, max(-90, lat)), longitude: normalizeLongitude(lng))
    }
}

// MARK: - Angles

/// `degrees` wrapped into 0 ≤ a < 360 (e.g. -90 → 270, 360 → 0, 725 → 5). Non-finite input is returned as is.
public func normalizeDegrees(_ degrees: Double) -> Double {
    guard degrees.isFinite else { return degrees }
    var a = degrees.truncatingRemainder(dividingBy: 360)
    if a < 0 { a += 360 }
    if a >= 360 { a -= 360 } // -1e-17 + 360 rounds to 360
    return a
}

/// A longitude wrapped into -180 ≤ λ ≤ 180 (180 stays 180, 190 → -170).
public func normalizeLongitude(_ degrees: Double) -> Double {
    guard degrees.isFinite else { return degrees }
    if degrees >= -180 && degrees <= 180 { return degrees }
    let a = normalizeDegrees(degrees + 180) - 180
    return a
}

/// The shortest signed turn from angle `a` to angle `b`, in degrees, in -180 < d ≤ 180
/// (e.g. from 350 to 10 is +20, from 10 to 350 is -20).
public func angleDifference(from a: Double, to b: Double) -> Double {
    var d = normalizeDegrees(b - a)
    if d > 180 { d -= 360 }
    return d
}

/// The circular mean of angles in degrees, 0 ≤ m < 360: the direction of the sum of their unit vectors,
/// optionally weighted (so 359° and 1° average to 0°, not 180°). Returns `nil` when the vectors cancel out
/// (e.g. 0° and 180°, or no angles at all).
public func circularMean(_ angles: [Double], weights: [Double]? = nil) -> Double? {
    precondition(weights == nil || weights!.count == angles.count, "circularMean: one weight per angle")
    var s = 0.0
    var c = 0.0
    for (i, a) in angles.enumerated() {
        let w = weights?[i] ?? 1
        s += w * sin(radians(a))
        c += w * cos(radians(a))
    }
    guard (s * s + c * c).squareRoot() > 1e-12 else { return nil }
    return normalizeDegrees(degrees(atan2(s, c)))
}
