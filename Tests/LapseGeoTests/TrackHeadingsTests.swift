// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

@testable import LapseGeo

@Suite struct TrackHeadingsTests {
    /// A deterministic Gaussian for the noise.
    struct Noise {
        var state: UInt64
        mutating func uniform() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (Double(state >> 11) + 0.5) / Double(1 << 53)
        }
        mutating func gaussian(_ sigma: Double) -> Double {
            sigma * (-2 * log(uniform())).squareRoot() * cos(2 * .pi * uniform())
        }
    }

    /// A straight road heading 63°, a fix every 2.5 m with 3 m of GPS noise (east and north each): every
    /// heading within 5° of the road's.
    @Test func noisyStraightTrack() {
        var noise = Noise(state: 11)
        let start = Coordinate(uncheckedLatitude: 48.85, longitude: 2.35)
        let fixes = (0..<120).map { i in
            start.destination(bearing: 63, distance: 2.5 * Double(i))
                .destination(bearing: 90, distance: noise.gaussian(3)).destination(
                    bearing: 0, distance: noise.gaussian(3))
        }
        let headings = TrackHeadings.headings(fixes)
        let errors = headings.map { abs(angleDifference(from: 63, to: $0!)) }
        #expect(errors.max()! < 5, "max \(errors.max()!)°")
        // The bearing to the next fix, as headings were taken before, is far off.
        let naive = (0..<119).map { abs(angleDifference(from: 63, to: fixes[$0].initialBearing(to: fixes[$0 + 1]))) }
        #expect(naive.max()! > 45)
    }

    /// Ten fixes within 2 m at a stop on a road heading 200°: the stop's headings are the road's (no turn).
    @Test func stopGivesNoTurn() {
        var noise = Noise(state: 5)
        let start = Coordinate(uncheckedLatitude: 52.44, longitude: 6.89)
        var fixes = (0..<20).map { start.destination(bearing: 200, distance: 5 * Double($0)) }
        let stop = fixes.last!
        fixes += (0..<10).map { _ in stop.destination(bearing: noise.uniform() * 360, distance: noise.uniform() * 1) }
        fixes += (1...20).map { stop.destination(bearing: 200, distance: 5 * Double($0)) }
        let headings = TrackHeadings.headings(fixes)
        for h in headings { #expect(abs(angleDifference(from: 200, to: h!)) < 1) }
    }

    /// A track that never leaves a spot has no heading.
    @Test func noHeadingWithoutTravel() {
        let spot = Coordinate(uncheckedLatitude: 0, longitude: 0)
        let fixes = (0..<5).map { spot.destination(bearing: Double($0) * 72, distance: 1) }
        #expect(TrackHeadings.headings(fixes).allSatisfy { $0 == nil })
    }
}
