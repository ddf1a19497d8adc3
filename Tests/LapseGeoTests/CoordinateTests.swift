// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import Testing

@Suite struct CoordinateTests {
    @Test(arguments: [
        (91.0, 0.0), (-90.0001, 0.0), (0.0, 180.5), (0.0, -181.0), (Double.nan, 0.0), (0.0, Double.infinity)
    ])
    func rejectsOutOfRange(lat: Double, lng: Double) {
        #expect(throws: LapseError.self) { try Coordinate(latitude: lat, longitude: lng) }
    }

    @Test func acceptsBounds() throws {
        _ = try Coordinate(latitude: 90, longitude: 180)
        _ = try Coordinate(latitude: -90, longitude: -180)
    }

    @Test func parsesText() throws {
        let c = try Coordinate.parse(" 43.6532, -79.3832 ")
        #expect(c.latitude == 43.6532 && c.longitude == -79.3832)
        #expect(c.description == "43.6532,-79.3832")
        for bad in ["", "43.6", "a,b", "1,2,3", "91,0"] {
            #expect(throws: LapseError.self) { try Coordinate.parse(bad) }
        }
        let e = #expect(throws: LapseError.self) { try Coordinate.parse("91,0") }
        #expect(e?.reason.contains("latitude 91") == true)
    }

    @Test func codableRoundTripAndValidation() throws {
        let c = try Coordinate(latitude: 1.5, longitude: -2.25)
        let data = try JSONEncoder().encode(c)
        #expect(try JSONDecoder().decode(Coordinate.self, from: data) == c)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Coordinate.self, from: Data(#"{"latitude":91,"longitude":0}"#.utf8))
        }
    }

    /// Reference values: one degree of a great circle is R·π/180 = 111 195.08 m for R = 6 371 008.8 m.
    @Test func distanceOfOneDegree() throws {
        let a = try Coordinate(latitude: 0, longitude: 0)
        #expect(abs(a.distance(to: try Coordinate(latitude: 0, longitude: 1)) - 111_195.0802) < 0.001)
        #expect(abs(a.distance(to: try Coordinate(latitude: 1, longitude: 0)) - 111_195.0802) < 0.001)
        #expect(a.distance(to: a) == 0)
        // Antipodes: half the circumference.
        #expect(abs(a.distance(to: try Coordinate(latitude: 0, longitude: 180)) - .pi * earthRadius) < 0.001)
    }

    /// Ed Williams' worked example (Aviation Formulary): LAX (33°57'N 118°24'W) → JFK (40°38'N 73°47'W) is
    /// 0.623585 rad of arc, initial course 1.150035 rad (65.892°).
    @Test func knownCityPair() throws {
        let lax = try Coordinate(latitude: 33 + 57.0 / 60, longitude: -(118 + 24.0 / 60))
        let jfk = try Coordinate(latitude: 40 + 38.0 / 60, longitude: -(73 + 47.0 / 60))
        let d = lax.distance(to: jfk)
        #expect(abs(d / earthRadius - 0.623585) < 1e-6, "got \(d)")
        let b = lax.initialBearing(to: jfk)
        #expect(abs(b - 1.150035 * 180 / .pi) < 1e-4, "got \(b)")
    }

    @Test func antimeridian() throws {
        let west = try Coordinate(latitude: 10, longitude: 179.999)
        let east = try Coordinate(latitude: 10, longitude: -179.999)
        let d = west.distance(to: east)
        // 0.002° of longitude at 10°N: 111 195.08 · cos 10° · 0.002 = 219.01 m.
        #expect(abs(d - 219.0147) < 0.01, "got \(d)")
        #expect(abs(west.initialBearing(to: east) - 90) < 0.01)
        #expect(abs(east.initialBearing(to: west) - 270) < 0.01)
        let mid = west.interpolated(to: east, fraction: 0.5)
        #expect(abs(abs(mid.longitude) - 180) < 1e-9)
        let next = west.destination(bearing: 90, distance: 219.0147)
        #expect(abs(next.longitude - (-179.999)) < 1e-6)
    }

    @Test func nearThePoles() throws {
        let a = try Coordinate(latitude: 89.9, longitude: 0)
        let b = try Coordinate(latitude: 89.9, longitude: 180)
        // Across the pole: 0.2° of a meridian.
        #expect(abs(a.distance(to: b) - 0.2 * 111_195.0802) < 0.01)
        #expect(abs(a.initialBearing(to: b) - 0) < 1e-6)
        let pole = try Coordinate(latitude: 90, longitude: 0)
        #expect(abs(a.distance(to: pole) - 0.1 * 111_195.0802) < 0.01)
        // From anywhere toward the north pole the bearing is north; toward the south pole south.
        #expect(abs(a.initialBearing(to: pole)) < 1e-9)
        let south = try Coordinate(latitude: -89.5, longitude: 45)
        #expect(abs(south.initialBearing(to: try Coordinate(latitude: -90, longitude: 0)) - 180) < 1e-6)
        // Interpolating across the pole passes through it.
        let mid = a.interpolated(to: b, fraction: 0.5)
        #expect(abs(mid.latitude - 90) < 1e-9)
    }

    @Test func bearingsInRange() throws {
        let o = try Coordinate(latitude: 0, longitude: 0)
        #expect(abs(o.initialBearing(to: try Coordinate(latitude: 0, longitude: -1)) - 270) < 1e-9)
        #expect(abs(o.initialBearing(to: try Coordinate(latitude: -1, longitude: 0)) - 180) < 1e-9)
        #expect(o.initialBearing(to: o) == 0)
        for _ in 0..<500 {
            let p = try Coordinate(latitude: .random(in: -90...90), longitude: .random(in: -180...180))
            let q = try Coordinate(latitude: .random(in: -90...90), longitude: .random(in: -180...180))
            let b = p.initialBearing(to: q)
            #expect(b >= 0 && b < 360)
        }
    }

    @Test func destinationInvertsDistanceAndBearing() throws {
        for _ in 0..<200 {
            let p = try Coordinate(latitude: .random(in: -80...80), longitude: .random(in: -180...180))
            let bearing = Double.random(in: 0..<360)
            let dist = Double.random(in: 1...2_000_000)
            let q = p.destination(bearing: bearing, distance: dist)
            #expect(abs(p.distance(to: q) - dist) < 1e-3)
            #expect(abs(angleDifference(from: bearing, to: p.initialBearing(to: q))) < 1e-6)
        }
    }

    @Test func interpolationLiesOnTheSegment() throws {
        let a = try Coordinate(latitude: 43.6532, longitude: -79.3832)
        let b = try Coordinate(latitude: 45.5017, longitude: -73.5673)
        let total = a.distance(to: b)
        for f in [0.0, 0.1, 0.25, 0.5, 0.9, 1.0] {
            let p = a.interpolated(to: b, fraction: f)
            #expect(abs(a.distance(to: p) - f * total) < 1e-3)
            #expect(abs(p.distance(to: b) - (1 - f) * total) < 1e-3)
        }
        // Tiny segments stay accurate.
        let c = a.destination(bearing: 30, distance: 0.05)
        #expect(abs(a.distance(to: a.interpolated(to: c, fraction: 0.5)) - 0.025) < 1e-6)
        #expect(
            a.interpolated(to: a, fraction: 0.5) == a || a.distance(to: a.interpolated(to: a, fraction: 0.5)) < 1e-6)
    }

    @Test func angleHelpers() {
        #expect(normalizeDegrees(-90) == 270)
        #expect(normalizeDegrees(360) == 0)
        #expect(normalizeDegrees(725) == 5)
        #expect(normalizeDegrees(-1e-17) < 360)
        #expect(normalizeLongitude(190) == -170)
        #expect(normalizeLongitude(180) == 180)
        #expect(normalizeLongitude(-540) == -180)
        #expect(angleDifference(from: 350, to: 10) == 20)
        #expect(angleDifference(from: 10, to: 350) == -20)
        #expect(angleDifference(from: 0, to: 180) == 180)
        #expect(abs(circularMean([359, 1])!) < 1e-9 || abs(circularMean([359, 1])! - 360) < 1e-9)
        #expect(abs(circularMean([350, 10, 20])! - 6.70495) < 1e-4)
        #expect(circularMean([0, 180]) == nil)
        #expect(circularMean([]) == nil)
        #expect(abs(circularMean([0, 90], weights: [1, 3])! - 71.565) < 0.001)
    }
}
