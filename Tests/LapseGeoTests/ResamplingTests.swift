// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import Testing

@Suite struct ResamplingTests {
    /// An L-shaped route in Toronto: 237 m east, then 163 m north (a right-angle corner).
    static func corner() throws -> Route {
        let start = try Coordinate(latitude: 43.6532, longitude: -79.3832)
        let turn = start.destination(bearing: 90, distance: 237)
        let end = turn.destination(bearing: 0, distance: 163)
        return Route(coordinates: [start, turn, end])
    }

    @Test func everyTenMetresAlongThePath() throws {
        let route = try Self.corner()
        let points = try route.resampled(every: 10)
        let total = route.length
        #expect(abs(total - 400) < 1e-6)
        #expect(points.count == 41) // 0, 10, …, 400
        #expect(points.first!.coordinate == route.points.first!.coordinate)
        #expect(points.last!.coordinate.distance(to: route.points.last!.coordinate) < 1e-6)
        for (a, b) in zip(points, points.dropFirst()) {
            #expect(abs(b.distanceAlongRoute - a.distanceAlongRoute - 10) < 0.5)
        }
        // Measured independently: the distance from the start along the real path (east leg, then north leg).
        let start = route.points[0].coordinate
        let turn = route.points[1].coordinate
        for p in points {
            let alongPath =
                p.distanceAlongRoute <= 237
                ? start.distance(to: p.coordinate)
                : 237 + turn.distance(to: p.coordinate)
            #expect(abs(alongPath - p.distanceAlongRoute) < 0.01)
        }
        // Straight stretches: consecutive points 10 m apart in a straight line too.
        for (a, b) in zip(points, points.dropFirst()) where b.distanceAlongRoute <= 230 || a.distanceAlongRoute >= 240 {
            #expect(abs(a.coordinate.distance(to: b.coordinate) - 10) < 0.5)
        }
    }

    @Test func endKeptWhenNotOnTheGrid() throws {
        let a = try Coordinate(latitude: 0, longitude: 0)
        let route = Route(coordinates: [a, a.destination(bearing: 45, distance: 25)])
        let points = try route.resampled(every: 10)
        #expect(points.map { ($0.distanceAlongRoute * 1e6).rounded() / 1e6 } == [0, 10, 20, 25])
    }

    @Test func distanceCarriedAcrossSegmentEnds() throws {
        // Segments of 7 m: samples at 10 m spacing must fall inside segments, not restart at each vertex.
        var c = try Coordinate(latitude: 52.52, longitude: 13.405)
        var coordinates = [c]
        for _ in 0..<20 {
            c = c.destination(bearing: 60, distance: 7)
            coordinates.append(c)
        }
        let points = try Route(coordinates: coordinates).resampled(every: 10)
        #expect(points.count == 15) // 0…130 and 140
        for (a, b) in zip(points, points.dropFirst()) {
            #expect(abs(a.coordinate.distance(to: b.coordinate) - (b.distanceAlongRoute - a.distanceAlongRoute)) < 1e-3)
        }
        for p in points { #expect(abs(angleDifference(from: 60, to: p.heading)) < 0.01) }
    }

    @Test func rightAngleCornerTurnsNinetyDegreesWithoutAJump() throws {
        let points = try Self.corner().resampled(every: 10)
        #expect(abs(points.first!.heading - 90) < 0.01)
        #expect(abs(points.last!.heading - 0) < 0.01 || abs(points.last!.heading - 360) < 0.01)
        var turned = 0.0
        for (a, b) in zip(points, points.dropFirst()) {
            let step = angleDifference(from: a.heading, to: b.heading)
            // Only ever left (a great circle heading "east" at 43.65°N itself turns right by ~0.002° over 237 m).
            #expect(step <= 0.01, "heading turned right by \(step)° at \(b.distanceAlongRoute) m")
            #expect(step > -45, "jump of \(step)° at \(b.distanceAlongRoute) m")
            turned += step
        }
        #expect(abs(turned + 90) < 0.01)
        for p in points { // all between north and east: never facing backwards
            #expect(p.heading <= 90.01 || p.heading >= 359.99)
        }
        // Without smoothing the heading switches exactly at the corner.
        let raw = try Self.corner().resampled(every: 10, smoothing: 0)
        for p in raw {
            let expected = p.distanceAlongRoute < 237 ? 90.0 : 0.0
            #expect(abs(angleDifference(from: expected, to: p.heading)) < 0.01)
        }
    }

    @Test func headingsNearNorthAverageToNorth() throws {
        // A zig-zag around due north (bearings 355° and 5°) must average to ~0°, never ~180°.
        var c = try Coordinate(latitude: 60, longitude: 10)
        var coordinates = [c]
        for i in 0..<40 {
            c = c.destination(bearing: i % 2 == 0 ? 355 : 5, distance: 5)
            coordinates.append(c)
        }
        let points = try Route(coordinates: coordinates).resampled(every: 10, smoothing: 20)
        for p in points.dropFirst(4).dropLast(4) {
            #expect(abs(angleDifference(from: 0, to: p.heading)) < 1.5, "heading \(p.heading)")
        }
    }

    @Test func repeatedAndZeroLengthPointsGiveNoNaN() throws {
        let a = try Coordinate(latitude: 48.8566, longitude: 2.3522)
        let b = a.destination(bearing: 180, distance: 30)
        let route = Route(coordinates: [
            a, a, a, b, b, b.destination(bearing: 180, distance: 5), b.destination(bearing: 180, distance: 5)
        ])
        let points = try route.resampled(every: 10)
        #expect(points.count == 5)
        for p in points {
            #expect(!p.heading.isNaN && !p.coordinate.latitude.isNaN && !p.coordinate.longitude.isNaN)
            #expect(abs(p.heading - 180) < 0.01)
        }
        let single = try Route(coordinates: [a, a, a]).resampled(every: 10)
        #expect(single.count == 1 && single[0].heading == 0 && single[0].coordinate == a)
        #expect(throws: LapseError.self) { try Route(coordinates: []).resampled(every: 10) }
        #expect(throws: LapseError.self) { try Route(coordinates: [a, b]).resampled(every: 0) }
        #expect(throws: LapseError.self) { try Route(coordinates: [a, b]).resampled(every: .nan) }
        let huge = #expect(throws: LapseError.self) {
            try Route(coordinates: [a, a.destination(bearing: 0, distance: 200_000)]).resampled(every: 0.01)
        }
        #expect(huge?.code == .usage)
    }

    @Test func uTurnFallsBackToTheTangent() throws {
        let a = try Coordinate(latitude: 10, longitude: 10)
        let b = a.destination(bearing: 90, distance: 50)
        let points = try Route(coordinates: [a, b, a]).resampled(every: 10)
        for p in points { #expect(!p.heading.isNaN) }
        #expect(abs(points[0].heading - 90) < 0.01)
        #expect(abs(points.last!.heading - 270) < 0.01)
    }

    @Test func acrossTheAntimeridian() throws {
        let a = try Coordinate(latitude: -16.8, longitude: 179.99)
        let b = try Coordinate(latitude: -16.8, longitude: -179.99)
        let route = Route(coordinates: [a, b])
        // 0.02° of longitude at 16.8°S: 111 195.08 · cos 16.8° · 0.02 = 2 128.98 m, nearly due east.
        #expect(abs(route.length - 2128.984) < 0.001)
        let points = try route.resampled(every: 100)
        #expect(points.count == 23)
        for (p, q) in zip(points, points.dropFirst()) {
            #expect(abs(p.coordinate.distance(to: q.coordinate) - (q.distanceAlongRoute - p.distanceAlongRoute)) < 1e-6)
            #expect(abs(angleDifference(from: 90, to: p.heading)) < 0.01)
            #expect(abs(p.coordinate.latitude + 16.8) < 0.001)
        }
    }

    @Test func nearThePole() throws {
        // A path over the north pole: straight (one great circle), so headings follow the circle: north, then south.
        let a = try Coordinate(latitude: 89.99, longitude: 30)
        let b = try Coordinate(latitude: 89.99, longitude: -150)
        let route = Route(coordinates: [a, b])
        #expect(abs(route.length - 0.02 * 111_195.0802) < 0.01)
        let points = try route.resampled(every: 100, smoothing: 0)
        #expect(points.count == 24)
        #expect(abs(points[0].heading) < 1e-6)
        #expect(abs(points.last!.heading - 180) < 1e-6)
        for (p, q) in zip(points, points.dropFirst()) {
            #expect(abs(p.coordinate.distance(to: q.coordinate) - (q.distanceAlongRoute - p.distanceAlongRoute)) < 1e-6)
        }
    }

    @Test func elevationAndTimeInterpolated() throws {
        let a = try Coordinate(latitude: 0, longitude: 0)
        let b = a.destination(bearing: 0, distance: 20)
        let t0 = Date(timeIntervalSince1970: 1_000_000)
        let route = Route(points: [
            TrackPoint(a, elevation: 100, time: t0),
            TrackPoint(b, elevation: 120, time: t0.addingTimeInterval(4))
        ])
        let points = try route.resampled(every: 5)
        #expect(points.map { $0.elevation! } == [100, 105, 110, 115, 120])
        #expect(points.map { $0.time!.timeIntervalSince(t0) } == [0, 1, 2, 3, 4])
    }
}

@Suite struct RouteTests {
    @Test func appendDropsTheSharedSeamPoint() throws {
        let a = try Coordinate(latitude: 1, longitude: 1)
        let b = try Coordinate(latitude: 1, longitude: 1.001)
        let c = try Coordinate(latitude: 1.001, longitude: 1.001)
        var route = Route(coordinates: [a, b])
        route.append(Route(coordinates: [b, c]))
        #expect(route.coordinates == [a, b, c])
        route.append(Route(coordinates: [a]))
        #expect(route.coordinates == [a, b, c, a])
        #expect(abs(route.length - (a.distance(to: b) + b.distance(to: c) + c.distance(to: a))) < 1e-9)
    }

    /// Two trips in one folder: 30 m north in Amsterdam, then 530 km on, 25 m east. No point lies inside the jump,
    /// each leg is resampled on its own (its headings its own), and distances go on rising across the jump.
    @Test func legsAreResampledApartAcrossAJump() throws {
        let a = try Coordinate(latitude: 52.3676, longitude: 4.9041)
        let b = try Coordinate(latitude: 53.1821, longitude: -2.8613)
        let route = Route(coordinates: [
            a, a.destination(bearing: 0, distance: 15), a.destination(bearing: 0, distance: 30),
            b, b.destination(bearing: 90, distance: 25)
        ])
        let (points, jumps) = try route.resampled(every: 10, jumpsOver: 100)
        let gap = a.destination(bearing: 0, distance: 30).distance(to: b)
        #expect(jumps == [RouteJump(after: 2, length: gap)])
        #expect(points.count == 4 + 4) // 0, 10, 20, 30; then 0, 10, 20, 25 of the second leg
        let distances = points.map(\.distanceAlongRoute)
        let expected = [0, 10, 20, 30].map(Double.init) + [0, 10, 20, 25].map { 30 + gap + Double($0) }
        for (d, e) in zip(distances, expected) { #expect(abs(d - e) < 1e-6) }
        #expect(points.prefix(4).allSatisfy { abs($0.heading - 0) < 0.01 || abs($0.heading - 360) < 0.01 })
        #expect(points.suffix(4).allSatisfy { abs($0.heading - 90) < 0.5 })
        #expect(points[4].coordinate.distance(to: b) < 1e-6)
        // Nothing between the trips: every point within a leg's reach of a photo.
        #expect(points.allSatisfy { p in route.points.contains { $0.coordinate.distance(to: p.coordinate) <= 15 } })
        // Without a jump longer than the limit, the route is resampled whole, as before.
        let whole = try route.resampled(every: 10, jumpsOver: 1e7)
        let plain = try route.resampled(every: 10)
        #expect(whole.jumps.isEmpty && whole.points == plain)
        // A leg of one photo is that photo, heading 0.
        let single = try Route(coordinates: [a, b]).resampled(every: 10, jumpsOver: 100)
        #expect(single.points.map(\.coordinate) == [a, b] && single.points.map(\.heading) == [0, 0])
    }

    /// A leg of one photo between two jumps has no direction of its own: it keeps the one the leg before ended in
    /// (a first leg of one photo, the one the next sets off in), not north (issue #45, item 22).
    @Test func aOnePhotoLegKeepsItsNeighboursHeading() throws {
        let a = try Coordinate(latitude: 52.3676, longitude: 4.9041)
        let lone = a.destination(bearing: 0, distance: 2000)
        let c = a.destination(bearing: 0, distance: 5000)
        let east = [0.0, 10, 20].map { a.destination(bearing: 90, distance: $0) }
        let south = [0.0, 10, 20].map { c.destination(bearing: 200, distance: $0) }
        let (points, jumps) = try Route(coordinates: east + [lone] + south).vertices(jumpsOver: 100)
        #expect(jumps.count == 2)
        #expect(abs(points[3].heading - 90) < 0.5, "\(points.map(\.heading))")
        #expect(points.suffix(3).allSatisfy { abs($0.heading - 200) < 0.5 })
        let first = try Route(coordinates: [lone] + south).resampled(every: 10, jumpsOver: 100).points
        #expect(abs(first[0].heading - 200) < 0.5, "\(first.map(\.heading))")
    }

    /// Every point of the route a point (your photos, each a frame): in order, at the route's own coordinates, with
    /// the distance along the route and the smoothed heading of resampling; points that coincide (a stop, a
    /// duplicate) kept, at the same distance; legs apart across a jump, distances rising across it.
    @Test func verticesAreTheRoutesOwnPoints() throws {
        let a = try Coordinate(latitude: 52.3676, longitude: 4.9041)
        let b = try Coordinate(latitude: 53.1821, longitude: -2.8613)
        let first = [0.0, 7, 7, 19, 30].map { a.destination(bearing: 0, distance: $0) }
        let route = Route(coordinates: first + [b, b.destination(bearing: 90, distance: 25)])
        let (points, jumps) = try route.vertices(jumpsOver: 100)
        #expect(points.map(\.coordinate) == route.coordinates)
        let gap = first.last!.distance(to: b)
        #expect(jumps == [RouteJump(after: 4, length: gap)])
        let expected = [0.0, 7, 7, 19, 30, 30 + gap, 55 + gap]
        for (p, e) in zip(points, expected) { #expect(abs(p.distanceAlongRoute - e) < 1e-6) }
        #expect(points.prefix(5).allSatisfy { abs(angleDifference(from: 0, to: $0.heading)) < 0.01 })
        #expect(points.suffix(2).allSatisfy { abs($0.heading - 90) < 0.5 })
        // One leg: the same points as the whole route's, with the headings resampling gives at those distances.
        let leg = Route(coordinates: first)
        let own = try leg.vertices()
        let whole = try leg.vertices(jumpsOver: 1e7)
        #expect(own.count == 5 && own == whole.points)
        // A route whose points all coincide: each its own point, heading 0.
        let still = try Route(coordinates: [a, a, a]).vertices()
        #expect(
            still.map(\.coordinate) == [a, a, a] && still.allSatisfy { $0.heading == 0 && $0.distanceAlongRoute == 0 })
    }
}
