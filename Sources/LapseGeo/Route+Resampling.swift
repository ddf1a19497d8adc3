// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

extension Route {
    /// The most points ``resampled(every:smoothing:)`` returns: 500 000, a route of 5 000 km at the default
    /// spacing of 10 m (an 11-hour hyperlapse at 12 fps). What a job keeps for each point — its match, its frame,
    /// its line on the preview page — comes to about 1 kB, so the cap holds a job's route to about 0.5 GB (a
    /// 277-byte pole-to-pole GPX made `lapse preview` build 4 million points and take 3.9 GB).
    public static let maximumResampledPoints = 500_000

    /// Points every `spacing` metres along the path, each with the heading of the road ahead.
    ///
    /// - Distances are measured along the path (haversine segments), carried across the ends of segments: the
    ///   k-th point lies `k · spacing` metres from the start. The start and the end are always included, so the
    ///   last gap is between 0 (exclusive) and `spacing` metres. Repeated points (zero-length segments) are
    ///   skipped; a route whose points all coincide gives one point with heading 0.
    /// - Headings: the direction of the path (great-circle tangent) averaged as unit vectors — so 359° and 1°
    ///   average to 0°, not 180° — over the path within `smoothing` metres before and after the point, each
    ///   piece weighted by its length. A sharp corner thus turns the heading gradually over `2 · smoothing`
    ///   metres, always the short way round. With `smoothing` 0 the heading is the exact tangent; where the
    ///   average cancels out (a U-turn right at the point) the exact tangent is used too.
    /// - Elevation and time are interpolated linearly between the source points around each sample when both
    ///   have them.
    ///
    /// - Parameters:
    ///   - spacing: metres between points, > 0.
    ///   - smoothing: half-width of the heading window in metres, ≥ 0 (default 20).
    /// - Returns: at least one point; `distanceAlongRoute` rises from 0 to ``length``.
    /// - Throws: ``LapseError`` `.usage` when `spacing` is not positive and finite, `smoothing` is negative, or the
    ///   spacing would give more than ``maximumResampledPoints`` points; `.invalidInput` when the route has no points.
    public func resampled(every spacing: Double, smoothing: Double = 20) throws -> [RoutePoint] {
        guard spacing.isFinite, spacing > 0 else {
            throw LapseError.usage("spacing must be a positive number of metres")
        }
        guard smoothing.isFinite, smoothing >= 0 else { throw LapseError.usage("heading smoothing must be ≥ 0 metres") }
        guard !points.isEmpty else { throw LapseError(.invalidInput, name, "the route has no points") }
        let path = PathGeometry(points)
        let total = path.length
        guard total > 0 else {
            let p = points[0]
            return [
                RoutePoint(
                    coordinate: p.coordinate, distanceAlongRoute: 0, heading: 0,
                    elevation: p.elevation, time: p.time)
            ]
        }
        // Sample distances: 0, spacing, 2·spacing, … and the end (not duplicated when it falls on the grid).
        try Self.checkPointCount(length: total, spacing: spacing)
        let steps = Int((total / spacing).rounded(.down))
        var distances = (0...steps).map { Double($0) * spacing }
        if total - distances[distances.count - 1] > spacing * 1e-9 {
            distances.append(total)
        } else {
            distances[distances.count - 1] = total
        }
        return sampled(path, at: distances, smoothing: smoothing)
    }

    /// One point at each of the route's own points, in order (none skipped, none added: the k-th point is
    /// ``points``[k], also where consecutive points coincide), with the heading of the road as
    /// ``resampled(every:smoothing:)`` gives it and elevation and time as the point has them.
    /// - Parameter smoothing: half-width of the heading window in metres, ≥ 0 (default 20).
    /// - Returns: one point per route point; `distanceAlongRoute` rises from 0 to ``length`` (equal where points
    ///   coincide). A route whose points all coincide has heading 0 everywhere.
    /// - Throws: ``LapseError`` `.usage` when `smoothing` is negative; `.invalidInput` when the route has no points.
    public func vertices(smoothing: Double = 20) throws -> [RoutePoint] {
        guard smoothing.isFinite, smoothing >= 0 else { throw LapseError.usage("heading smoothing must be ≥ 0 metres") }
        guard !points.isEmpty else { throw LapseError(.invalidInput, name, "the route has no points") }
        let path = PathGeometry(points)
        guard path.length > 0 else {
            return points.map {
                RoutePoint(
                    coordinate: $0.coordinate, distanceAlongRoute: 0, heading: 0, elevation: $0.elevation,
                    time: $0.time)
            }
        }
        return zip(sampled(path, at: path.cumulative, smoothing: smoothing), points).map { sample, own in
            var p = sample
            p.coordinate = own.coordinate
            p.elevation = own.elevation
            p.time = own.time
            return p
        }
    }

    /// The points of `path` at `distances` (rising, within its length).
    private func sampled(_ path: PathGeometry, at distances: [Double], smoothing: Double) -> [RoutePoint] {
        var result: [RoutePoint] = []
        result.reserveCapacity(distances.count)
        var segment = path.firstSegment
        var windowStart = path.firstSegment
        for s in distances {
            // The segment holding s: cumulative[i] ≤ s < cumulative[i+1] (or the last one at the very end).
            while let next = path.segment(after: segment), path.cumulative[next] <= s { segment = next }
            let position = path.position(segment: segment, at: s)
            let tangent = path.tangent(segment: segment, at: s, position: position)
            let heading =
                smoothing == 0
                ? tangent
                : path.averageHeading(from: s - smoothing, to: s + smoothing, startSegment: &windowStart) ?? tangent
            let a = points[segment]
            let b = points[segment + 1]
            let f = path.fraction(segment: segment, at: s)
            var elevation: Double?
            if let ea = a.elevation, let eb = b.elevation { elevation = ea + (eb - ea) * f }
            var time: Date?
            if let ta = a.time, let tb = b.time { time = ta.addingTimeInterval(tb.timeIntervalSince(ta) * f) }
            result.append(
                RoutePoint(
                    coordinate: position, distanceAlongRoute: s, heading: heading,
                    elevation: elevation, time: time))
        }
        return result
    }
}

extension Route {
    /// Throws when a point every `spacing` metres along `length` metres would be more than
    /// ``maximumResampledPoints`` points.
    fileprivate static func checkPointCount(length: Double, spacing: Double) throws {
        guard length / spacing < Double(maximumResampledPoints) else {
            throw LapseError.usage(
                """
                a point every \(NumberText.compact(spacing)) m along \(Int(length / 1000)) km is more than \
                \(maximumResampledPoints) points (the most a job takes); use a larger spacing or a shorter route
                """
            )
        }
    }
}

/// Cumulative distances and segment geometry of a path, for resampling.
/// Segment i runs from point i to point i+1; only segments of positive length are visited.
struct PathGeometry {
    let points: [TrackPoint]
    /// Metres from the start to each point.
    let cumulative: [Double]
    /// Indices of the segments with positive length, in order.
    private let segments: [Int]
    /// For each segment index, its position in `segments` (or the next one with positive length).
    private let order: [Int]

    init(_ points: [TrackPoint]) {
        self.points = points
        var cumulative = [Double](repeating: 0, count: points.count)
        var segments: [Int] = []
        var order = [Int](repeating: 0, count: max(0, points.count - 1))
        for i in 0..<max(0, points.count - 1) {
            let d = points[i].coordinate.distance(to: points[i + 1].coordinate)
            cumulative[i + 1] = cumulative[i] + d
            order[i] = segments.count
            if d > 0 { segments.append(i) }
        }
        self.cumulative = cumulative
        self.segments = segments
        self.order = order
    }

    var length: Double { cumulative.last ?? 0 }
    var firstSegment: Int { segments.first ?? 0 }

    func segment(after i: Int) -> Int? {
        let k = order[i] + 1
        return k < segments.count ? segments[k] : nil
    }

    func fraction(segment i: Int, at s: Double) -> Double {
        let len = cumulative[i + 1] - cumulative[i]
        return min(1, max(0, (s - cumulative[i]) / len))
    }

    func position(segment i: Int, at s: Double) -> Coordinate {
        points[i].coordinate.interpolated(to: points[i + 1].coordinate, fraction: fraction(segment: i, at: s))
    }

    /// Direction of the great circle of segment i at `position` (which lies on it at distance s), degrees.
    /// Measured toward the farther end of the segment so that it stays accurate right next to a vertex.
    func tangent(segment i: Int, at s: Double, position: Coordinate) -> Double {
        let a = points[i].coordinate
        let b = points[i + 1].coordinate
        if fraction(segment: i, at: s) <= 0.5 { return position.initialBearing(to: b) }
        return normalizeDegrees(position.initialBearing(to: a) + 180)
    }

    /// Length-weighted circular mean of the path's direction between distances `lo` and `hi` (clamped to the path);
    /// `nil` when the directions cancel out. `startSegment` is advanced monotonically (callers ask in rising order).
    func averageHeading(from lo: Double, to hi: Double, startSegment: inout Int) -> Double? {
        let lo = max(0, lo)
        let hi = min(length, hi)
        while let next = segment(after: startSegment), cumulative[startSegment + 1] <= lo { startSegment = next }
        var sx = 0.0
        var sy = 0.0
        var j: Int? = startSegment
        while let i = j, cumulative[i] < hi {
            let a = max(lo, cumulative[i])
            let b = min(hi, cumulative[i + 1])
            if b > a {
                let mid = (a + b) / 2
                let heading = tangent(segment: i, at: mid, position: position(segment: i, at: mid)) * .pi / 180
                sx += (b - a) * sin(heading)
                sy += (b - a) * cos(heading)
            }
            j = segment(after: i)
        }
        guard (sx * sx + sy * sy).squareRoot() > 1e-9 * max(1, hi - lo) else { return nil }
        return normalizeDegrees(atan2(sx, sy) * 180 / .pi)
    }
}

/// Where a route jumps: two consecutive points farther apart than a route's points can be bridged (see
/// ``Route/resampled(every:smoothing:jumpsOver:)``).
public struct RouteJump: Sendable, Equatable {
    /// Index in ``Route/points`` of the point before the jump (the one after it is `after + 1`).
    public var after: Int
    /// Metres between the two points.
    public var length: Double

    /// A jump after point `after` of `length` metres.
    public init(after: Int, length: Double) {
        self.after = after
        self.length = length
    }
}

extension Route {
    /// Points every `spacing` metres along each leg of the route, where a leg ends at a jump: two consecutive
    /// points more than `jump` metres apart (two trips among one folder of photos). Within a leg the points are
    /// those of ``resampled(every:smoothing:)`` (a leg of one point, or of points that coincide, gives that one
    /// point with heading 0); no point lies inside a jump, and `distanceAlongRoute` counts the jumps' lengths
    /// too, so it keeps rising from leg to leg.
    ///
    /// - Parameters:
    ///   - spacing: metres between points, > 0.
    ///   - smoothing: half-width of the heading window in metres, ≥ 0 (default 20); a heading never reaches
    ///     across a jump.
    ///   - jump: the longest step between consecutive points that is still a leg's, metres, > 0.
    /// - Returns: the points, and the jumps in route order.
    /// - Throws: as ``resampled(every:smoothing:)`` (the point limit counts the legs' lengths, not the jumps'),
    ///   and ``LapseError`` `.usage` when `jump` is not positive.
    public func resampled(every spacing: Double, smoothing: Double = 20, jumpsOver jump: Double) throws -> (
        points: [RoutePoint], jumps: [RouteJump]
    ) {
        try legs(jumpsOver: jump) { parts in
            if spacing.isFinite, spacing > 0 {
                try Self.checkPointCount(length: parts.reduce(0) { $0 + $1.length }, spacing: spacing)
            }
        } sample: {
            try $0.resampled(every: spacing, smoothing: smoothing)
        }
    }

    /// As ``vertices(smoothing:)``, each leg apart, where a leg ends at a jump (as in
    /// ``resampled(every:smoothing:jumpsOver:)``): one point per route point, headings never reaching across a jump.
    /// - Returns: the points, and the jumps in route order.
    /// - Throws: as ``vertices(smoothing:)``, and ``LapseError`` `.usage` when `jump` is not positive.
    public func vertices(smoothing: Double = 20, jumpsOver jump: Double) throws -> (
        points: [RoutePoint], jumps: [RouteJump]
    ) {
        try legs(jumpsOver: jump) { _ in
        } sample: {
            try $0.vertices(smoothing: smoothing)
        }
    }

    /// The route cut into legs at its jumps, each leg's points from `sample`, distances carried from leg to leg
    /// (the jumps' lengths included); `check` sees the legs first.
    private func legs(
        jumpsOver jump: Double, check: ([Route]) throws -> Void, sample: (Route) throws -> [RoutePoint]
    ) throws -> (points: [RoutePoint], jumps: [RouteJump]) {
        guard !jump.isNaN, jump > 0 else {
            throw LapseError.usage("the longest step of a leg must be a positive number of metres")
        }
        guard !points.isEmpty else { throw LapseError(.invalidInput, name, "the route has no points") }
        var jumps: [RouteJump] = []
        var legs: [Range<Int>] = []
        var start = 0
        for i in 0..<(points.count - 1) {
            let d = points[i].coordinate.distance(to: points[i + 1].coordinate)
            guard d > jump else { continue }
            jumps.append(RouteJump(after: i, length: d))
            legs.append(start..<(i + 1))
            start = i + 1
        }
        legs.append(start..<points.count)
        guard !jumps.isEmpty else { return (try sample(self), []) }
        let parts = legs.map { Route(points: Array(points[$0]), name: name) }
        try check(parts)
        var result: [RoutePoint] = []
        var still: [Range<Int>] = [] // points of legs that go nowhere (one photo between two jumps)
        var offset = 0.0
        for (k, part) in parts.enumerated() {
            let first = result.count
            for var p in try sample(part) {
                p.distanceAlongRoute += offset
                result.append(p)
            }
            if part.length == 0 { still.append(first..<result.count) }
            offset += part.length + (k < jumps.count ? jumps[k].length : 0)
        }
        // A leg without length has no direction of its own: it keeps the one it came with (the leg before's last),
        // or, first of all, the one the next leg sets off in — not north.
        for range in still {
            let before = result[..<range.lowerBound].last?.heading
            let after = result[range.upperBound...].first?.heading
            guard let heading = before ?? after else { continue }
            for i in range { result[i].heading = heading }
        }
        return (result, jumps)
    }
}
