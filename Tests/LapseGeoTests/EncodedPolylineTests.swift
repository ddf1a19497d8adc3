// SPDX-License-Identifier: GPL-3.0-or-later
import LapseCore
import LapseGeo
import Testing

@Suite struct EncodedPolylineTests {
    /// The vectors from ARCHITECTURE.md (Google's documented example, and the same points at precision 6).
    static let expected: [(Double, Double)] = [(38.5, -120.2), (40.7, -120.95), (43.252, -126.453)]

    @Test(arguments: [(5, "_p~iF~ps|U_ulLnnqC_mqNvxq`@"), (6, "_izlhA~rlgdF_{geC~ywl@_kwzCn`{nI")])
    func documentedVectors(precision: Int, encoded: String) throws {
        let points = try EncodedPolyline.decode(encoded, precision: precision)
        #expect(points.count == 3)
        for (p, e) in zip(points, Self.expected) {
            #expect(p.latitude == e.0)
            #expect(p.longitude == e.1)
        }
        #expect(EncodedPolyline.encode(points, precision: precision) == encoded)
        let fromValues = try Self.expected.map { try Coordinate(latitude: $0.0, longitude: $0.1) }
        #expect(EncodedPolyline.encode(fromValues, precision: precision) == encoded)
    }

    @Test(arguments: [5, 6])
    func randomRoundTrips(precision: Int) throws {
        var scale = 1.0
        for _ in 0..<precision { scale *= 10 }
        for _ in 0..<200 {
            let n = Int.random(in: 1...60)
            // Points on the precision grid survive exactly; include the extremes of the range.
            let points =
                try (0..<n).map { _ in
                    try Coordinate(
                        latitude: (Double.random(in: -90...90) * scale).rounded() / scale,
                        longitude: (Double.random(in: -180...180) * scale).rounded() / scale)
                } + [Coordinate(latitude: 90, longitude: 180), Coordinate(latitude: -90, longitude: -180)]
            let s = EncodedPolyline.encode(points, precision: precision)
            let back = try EncodedPolyline.decode(s, precision: precision)
            #expect(back == points)
            #expect(EncodedPolyline.encode(back, precision: precision) == s)
        }
        // Points off the grid come back within half a unit of the last digit, with no drift along the line.
        var p = try Coordinate(latitude: 45.123456789, longitude: 7.987654321)
        var points: [Coordinate] = []
        for _ in 0..<1000 {
            points.append(p)
            p = p.destination(bearing: .random(in: 0..<360), distance: 3.3)
        }
        let back = try EncodedPolyline.decode(
            EncodedPolyline.encode(points, precision: precision), precision: precision)
        for (a, b) in zip(points, back) {
            #expect(abs(a.latitude - b.latitude) <= 0.5 / scale + 1e-12)
            #expect(abs(a.longitude - b.longitude) <= 0.5 / scale + 1e-12)
        }
    }

    @Test func emptyAndWhitespace() throws {
        #expect(try EncodedPolyline.decode("").isEmpty)
        #expect(EncodedPolyline.encode([]) == "")
        #expect(try EncodedPolyline.decode("  _p~iF~ps|U\n").count == 1)
    }

    @Test(arguments: [
        ("_p~iF~ps|U_ulLnnqC_mqNvxq`", "ends inside a value"), // truncated in the last chunk
        ("_p~iF~ps|U_ulL", "without its longitude"),
        ("_p~iF ~ps|U", "invalid character"),
        ("_p~iF~ps|U\u{7F}", "invalid character"),
        ("~~~~~~~~~~~~~~", "overlong value"),
        ("_p~iF~ps|U_ulLnnqC_mqNvxq`@", "outside the valid range") // read at precision 4: 385°
    ])
    func brokenStrings(text: String, problem: String) {
        let precision = problem == "outside the valid range" ? 4 : 5
        let error = #expect(throws: LapseError.self) { try EncodedPolyline.decode(text, precision: precision) }
        #expect(error?.reason.contains(problem) == true, "\(String(describing: error))")
    }
}
