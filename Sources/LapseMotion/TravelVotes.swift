// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

/// One pair's votes for where the direction of travel lies in the pictures of a camera fixed to a vehicle, on a
/// grid over the sphere (longitude every ``step`` degrees, latitude within ``latitudeRange`` of the horizon).
///
/// How a pair votes. Each correspondence that moved in the world (``MotionEstimator``'s flows: corners outside
/// what stays put, so not a car's cabin, the mount or a reflection on the glass) is derotated by the pair's
/// rotation; a scene point before a camera that travels along t moves along the great circle through t and
/// itself, away from t (the epipolar constraint `b · (t × R a) = 0` on the sphere, as J. Kopf, "360° Video
/// Stabilization", ACM TOG 35(6), 2016, uses it, and the focus of expansion), so the correspondence votes for
/// every cell on the half of that circle it moved away from: a Hough transform of the epipolar constraint. The
/// rotation may be off by a degree or two where little of the world is seen: a correspondence votes for the union
/// of the circles of the rotation measured and of its turn about the vertical alone, each turned by −1.5°, 0 and
/// 1.5° about the vertical.
///
/// Between two photos of a turning vehicle the camera travels along the chord of its arc, which lies half the
/// turn from the vehicle's axis at either end (the planar circular motion of a vehicle: D. Scaramuzza, F.
/// Fraundorfer, R. Siegwart, "Real-time monocular visual odometry for on-road vehicles with 1-point RANSAC", ICRA
/// 2009), so each circle is turned back by half the pair's rotation: the votes are for the vehicle's axis, the same
/// in every picture of a camera fixed to it.
///
/// Each vote is weighted by how steeply its circle crosses the horizon (a flow along the horizon says nothing of
/// where along it the focus lies) and shares one unit with the pair's other correspondences that start in the same
/// 10° cell of A (no part of the picture outvotes the rest by its texture alone); it remembers that cell, so that
/// ``MountEstimator`` can learn which parts of the pictures show the world.
public struct TravelVotes: Sendable, Equatable {
    /// Grid spacing, degrees.
    public static let step = 2.0
    /// Latitudes voted for: within this many degrees of the horizon (a road's grade and a camera's tilt).
    public static let latitudeRange = 30.0
    static let columns = Int(360 / step)
    static let rows = Int(2 * latitudeRange / step) + 1
    static let cellCount = rows * columns

    /// One correspondence's votes: the 10° cell of A it starts in (``sourceCell(_:)``), its weight, and the grid
    /// cells it votes for (`cells[range]`).
    struct Flow: Sendable, Equatable {
        var source: UInt16
        var weight: Float
        var range: Range<Int>
        /// The correspondence (unit vectors in A's frame and B's).
        @StoredAsDoubles var a: SIMD3<Double>
        @StoredAsDoubles var b: SIMD3<Double>
    }
    var flows: [Flow]
    var cells: [UInt16]
    /// The pair's rotation as measured (`d_B = rotation · d_A`).
    var rotation: Rotation

    /// Correspondences that voted.
    public var count: Int { flows.count }

    /// The unit vector at the middle of grid cell `index` (row-major from the highest latitude and from −180°).
    @inline(__always) static func direction(_ index: Int) -> SIMD3<Double> { directions[index] }

    /// The tangents of the rows' boundaries, from the top: latitudes `latitudeRange + step/2 − k·step`,
    /// k = 0 … ``rows`` (row k lies between boundaries k and k + 1).
    static let boundaryTangents: [Double] = (0...rows).map { k in
        tan((latitudeRange + step / 2 - Double(k) * step) * .pi / 180)
    }

    /// Every cell's unit vector, worked out once.
    static let directions: [SIMD3<Double>] = (0..<cellCount).map { index in
        let longitude = (-180 + (Double(index % columns) + 0.5) * step) * .pi / 180
        let latitude = (latitudeRange - Double(index / columns) * step) * .pi / 180
        return SIMD3(cos(latitude) * sin(longitude), -sin(latitude), cos(latitude) * cos(longitude))
    }

    /// The grid cell of a unit vector, nil beyond ``latitudeRange``.
    static func cell(_ d: SIMD3<Double>) -> Int? {
        let latitude = asin(min(1, max(-1, -d.y))) * 180 / .pi
        let row = Int(((latitudeRange - latitude) / step).rounded())
        guard row >= 0, row < rows else { return nil }
        var column = Int(((atan2(d.x, d.z) * 180 / .pi + 180) / step).rounded(.down))
        if column >= columns { column -= columns }
        return row * columns + max(0, column)
    }

    /// The 10° cell (36 × 18 over the sphere) of a unit vector.
    static func sourceCell(_ d: SIMD3<Double>) -> UInt16 {
        let longitude = atan2(d.x, d.z) * 180 / .pi
        let latitude = asin(min(1, max(-1, -d.y))) * 180 / .pi
        let column = min(35, Int(((longitude + 180) / 10).rounded(.down)))
        let row = min(17, Int(((latitude + 90) / 10).rounded(.down)))
        return UInt16(row * 36 + column)
    }

    /// The votes of the correspondences `flows` (unit vectors in A's frame and B's, those that moved in the world)
    /// of a pair whose rotation is `rotation` (`d_B = rotation · d_A`); nil when fewer than 8 moved by enough to
    /// say where they stream from.
    package static func measure(_ flows: [(a: SIMD3<Double>, b: SIMD3<Double>)], rotation: Rotation) -> TravelVotes? {
        let minimum = sin(0.3 * Double.pi / 180)
        let moving = flows.filter { length(cross(rotation * $0.a, $0.b)) > minimum }
        guard moving.count >= 8 else { return nil }
        let sources = moving.map { sourceCell($0.a) }
        var shares: [UInt16: Int] = [:]
        for s in sources { shares[s, default: 0] += 1 }
        // The sine and cosine of each column's edges (longitude −180° + k·step).
        let edges = (0...columns).map { k -> (Double, Double) in
            let longitude = (-180 + Double(k) * step) * .pi / 180
            return (sin(longitude), cos(longitude))
        }
        // The rotation measured, and its turn about the vertical alone (a vehicle turns about the vertical; a tilt
        // the fit took from people moving inside the car would move every vote up or down), each turned by up to
        // ±1.5° about the vertical; each with the rotation by half its turn back.
        let yawOnly = Rotation.exp(SIMD3(0, rotation.log.y, 0))
        let candidates = [rotation, yawOnly].flatMap { base in
            [-1.5, 0, 1.5].map { delta -> (Rotation, Rotation) in
                let r = Rotation.yaw(delta) * base
                return (r, Rotation.exp(r.log * -0.5))
            }
        }
        var votes = TravelVotes(flows: [], cells: [], rotation: rotation)
        // The grid's tables, read once here rather than through their lazy globals in the loops below.
        let grid = (directions: directions, tangents: boundaryTangents)
        // Cells already voted for by the flow at hand (cleared after each).
        let stamp = UnsafeMutableBufferPointer<Bool>.allocate(capacity: cellCount)
        stamp.initialize(repeating: false)
        defer { stamp.deallocate() }
        for (k, f) in moving.enumerated() {
            let start = votes.cells.count
            var tilt = 0.0
            for (r, back) in candidates {
                let m = r * f.a
                let c = cross(m, f.b)
                // The circle's normal and the tangent at m towards b, in the vehicle-axis frame; the half circle
                // the point moved away from is where t · u < 0.
                let n = back * (c / length(c))
                var u = f.b - m * (m * f.b).sum()
                u = back * (u / length(u))
                tilt = max(tilt, (n.x * n.x + n.z * n.z).squareRoot())
                rasterize(normal: n, away: u, edges: edges, grid: grid) { cell in
                    if !stamp[cell] {
                        stamp[cell] = true
                        votes.cells.append(UInt16(cell))
                    }
                }
            }
            for cell in votes.cells[start...] { stamp[Int(cell)] = false }
            guard tilt > 0.01, votes.cells.count > start else {
                votes.cells.removeSubrange(start...)
                continue
            }
            votes.flows.append(
                Flow(
                    source: sources[k], weight: Float(tilt) / Float(shares[sources[k]]!),
                    range: start..<votes.cells.count, a: f.a, b: f.b))
        }
        return votes.flows.count >= 8 ? votes : nil
    }

    /// Every grid cell the great circle with unit normal `n` crosses, on its half where `t · u < 0`: column by
    /// column, the circle's latitude at the column's two edges (`tan φ = (n_x sin λ + n_z cos λ) / n_y`, from
    /// `n · t = 0` with y down) and every row between.
    private static func rasterize(
        normal n: SIMD3<Double>, away u: SIMD3<Double>, edges: [(Double, Double)],
        grid: (directions: [SIMD3<Double>], tangents: [Double]), _ visit: (Int) -> Void
    ) {
        let boundaryTangents = grid.tangents
        // The row a latitude rounds to, `round((latitudeRange − φ) / step)`, from tan φ rather than φ: the number of
        // row boundaries (latitudes latitudeRange + step/2 − k·step, tangents in ``boundaryTangents``) above φ,
        // less one (−1 above the grid, ``rows`` below it): the row `round((latitudeRange − φ) / step)` gave, but at a
        // boundary itself (the upper row here, the lower one there) or within rounding error of one. No arc tangent a
        // column edge; the count is walked from the previous edge's (usually a row or two away).
        // A circle without a normal (a flow that did not move under this rotation) crosses no cell, as before.
        guard !n.x.isNaN, !n.y.isNaN, !n.z.isNaN else { return }
        var above = rows / 2
        func row(_ e: (Double, Double)) -> Int {
            let a = n.x * e.0 + n.z * e.1
            guard abs(n.y) > 1e-12 else { return a > 0 ? -1 : rows }
            let t = a / n.y
            while above < boundaryTangents.count, boundaryTangents[above] > t { above += 1 }
            while above > 0, boundaryTangents[above - 1] <= t { above -= 1 }
            return above - 1
        }
        var left = row(edges[0])
        for c in 0..<columns {
            let right = row(edges[c + 1])
            let first = max(0, min(left, right))
            let last = min(rows - 1, max(left, right))
            left = right
            guard first <= last else { continue }
            for row in first...last {
                let cell = row * columns + c
                if (grid.directions[cell] * u).sum() < 0 { visit(cell) }
            }
        }
    }
}

/// The direction of travel in the pictures of a camera fixed to a vehicle (its mount), from many pairs'
/// ``TravelVotes``, with how sure it is.
///
/// One pair's votes are noisy where people move inside the car and little of the street is seen through its
/// windows; their sum over many pairs is not, once the parts of the pictures that do not show the world are
/// known. So the votes are kept by where in the pictures they come from (a map per 10° cell of A), and the
/// estimate alternates (an expectation–maximisation): given a direction, each cell's weight is the share of its
/// votes that pass through it, squared (a window onto the street streams from the vehicle's axis pair after pair;
/// a person moves on their own); given the weights, the direction is the peak of the weighted sum. It starts from
/// the five strongest peaks of the unweighted sum (at least 20° apart), three rounds each, and keeps the one with the
/// most weighted votes through its peak (a few parts of the pictures that agree by chance make a sharp peak, but a
/// low one: on the in-car composite the true axis had 270–350, the others 90–130).
///
/// Memory: one map (11 k floats) per cell of the pictures that voted, at most 648, however long the sequence.
public struct MountEstimator: Sendable {
    private var maps: [UInt16: [Float]] = [:]
    /// The sum of every cell's map (the votes unweighted).
    private var plainSum = [Float](repeating: 0, count: TravelVotes.cellCount)
    /// Each cell's total vote weight (what its map would hold everywhere if every vote passed there).
    private var totals: [UInt16: Float] = [:]
    /// Pairs whose votes were added.
    public private(set) var pairs = 0
    private var cached: Estimate??
    /// The latest pairs' votes (at most ``recentPairs``), for how many of them agree with the estimate.
    private var recent: [TravelVotes] = []
    /// Pairs whose own votes are checked against the estimate (the latest ones).
    public static let recentPairs = 40

    /// An estimator with no votes yet.
    public init() {}

    /// Pairs whose own votes all lie more than ``breakAngle`` from the estimate when the mount has changed.
    public static let breakPairs = 8
    /// Degrees: a pair's own votes that far from the estimate count against it (``breakPairs``).
    public static let breakAngle = 15.0

    /// How many of the latest pairs show the camera moved on its vehicle, nil when it was not: of the latest
    /// ``breakPairs`` pairs, all but two or fewer put their own peak more than ``breakAngle`` degrees from
    /// `estimate`; the run of such pairs (one exception allowed) reaching back from the latest, 5 or more, is the
    /// new mount's.
    public static func breakRun(_ estimate: Estimate) -> Int? {
        let d = estimate.latestDeviations
        guard d.count >= breakPairs, d.suffix(breakPairs).filter({ $0 > breakAngle }).count >= breakPairs - 2 else {
            return nil
        }
        var start = d.count
        var near = 0
        for i in d.indices.reversed() {
            if d[i] > breakAngle {
                start = i
            } else {
                near += 1
                if near > 1 { break }
            }
        }
        let run = d.count - start
        return run >= 5 ? run : nil
    }

    /// Starts again from the latest `pairs` pairs' votes (the camera was moved: the votes before belong to the old
    /// mount).
    public mutating func restart(keeping pairs: Int) {
        let keep = recent.suffix(pairs)
        self = MountEstimator()
        for votes in keep { add(votes) }
    }

    /// Adds one pair's votes (kept for the latest ``recentPairs`` checks).
    public mutating func add(_ votes: TravelVotes) {
        for f in votes.flows {
            maps[f.source, default: [Float](repeating: 0, count: TravelVotes.cellCount)].withUnsafeMutableBufferPointer
            {
                for cell in votes.cells[f.range] { $0[Int(cell)] += f.weight }
            }
            for cell in votes.cells[f.range] { plainSum[Int(cell)] += f.weight }
            totals[f.source, default: 0] += f.weight
        }
        recent.append(votes)
        if recent.count > Self.recentPairs { recent.removeFirst() }
        pairs += 1
        cached = nil
    }

    /// What the votes say so far.
    public struct Estimate: Sendable, Equatable {
        /// The direction of travel in the pictures (x right, y down, z the centre column), unit.
        @StoredAsDoubles public var direction: SIMD3<Double>
        /// The peak of the weighted votes over the highest outside 25° of it (1: no better than elsewhere).
        public var margin: Double
        /// Degrees: how far from the peak the weighted votes fall to half of it (the peak's half width at half
        /// maximum, the median over the directions around it).
        public var spread: Double
        /// The share of the votes (by weight) of the parts of the pictures the estimate counts as showing the world
        /// (weight above ¼) that pass through the direction.
        public var agreement: Double
        /// The share of all votes (by weight) that come from parts of the pictures half or more of whose votes pass
        /// through the direction: high for a camera fixed to a vehicle whose windows show the street, near 0 when
        /// no part of the pictures keeps pointing at one place (a camera turned between photos, windows covered).
        public var consistentShare: Double
        /// Of the latest pairs (at most ``MountEstimator/recentPairs``), how many put the peak of their own votes
        /// (each part of the pictures weighted as the estimate weighs it) within 10° of the direction, and how many
        /// were checked: a camera fixed to a vehicle keeps its direction of travel in one place, pair after pair; a
        /// camera turned between photos does not.
        public var agreeing: Int
        /// Of the latest pairs, those checked (with votes of their own).
        public var checked: Int
        /// The median angle between the direction and those pairs' own peaks, degrees.
        public var deviation: Double
        /// The angles (degrees) of the latest pairs' own peaks from the direction (at most twice
        /// ``MountEstimator/breakPairs``, oldest first): the latest far off, the camera was moved
        /// (``MountEstimator/breakRun(_:)``).
        public var latestDeviations: [Double] = []
        /// Pairs whose votes were added since the last restart.
        public var pairs: Int

        /// (degrees right of the centre column, degrees above the horizon).
        public var longitudeLatitude: (longitude: Double, latitude: Double) {
            (atan2(direction.x, direction.z) * 180 / .pi, asin(min(1, max(-1, -direction.y))) * 180 / .pi)
        }
    }

    /// The estimate, nil before any pair (computed once per pair added).
    public var estimate: Estimate? {
        mutating get {
            if let cached { return cached }
            let e = compute()
            cached = .some(e)
            return e
        }
    }

    private func compute() -> Estimate? {
        guard pairs > 0, !maps.isEmpty else { return nil }
        let sources = maps.keys.sorted() // a fixed order: the same sums, to the last bit, every run
        func weighted(_ weights: [Float]) -> [Float] {
            var sum = [Float](repeating: 0, count: TravelVotes.cellCount)
            sum.withUnsafeMutableBufferPointer { out in
                // Parts weighted under 1 % add nothing to see (most of them, once the weights are learnt).
                for (k, s) in sources.enumerated() where weights[k] > 0.01 {
                    let w = weights[k]
                    maps[s]!.withUnsafeBufferPointer { m in
                        for i in out.indices { out[i] += w * m[i] }
                    }
                }
            }
            return sum
        }
        let plain = Self.smoothed(plainSum)
        var best: (estimate: Estimate, support: Float, weights: [Float])?
        for start in Self.peaks(plain, count: 5, apart: 20) {
            var peak = start
            var map = plain
            for _ in 0..<3 {
                // Each cell's share of votes through the peak (its 3 × 3 neighbourhood), squared.
                let weights = sources.map { s -> Float in
                    let share = Self.neighbourhoodMax(maps[s]!, peak) / max(totals[s]!, 1e-9)
                    return min(1, share) * min(1, share)
                }
                map = Self.smoothed(weighted(weights))
                peak = map.indices.max { map[$0] < map[$1] }!
            }
            let margin = Self.margin(map, peak)
            // The basin the most evidence agrees on: the weighted votes through its peak (a few parts of the
            // pictures that happen to agree make a sharp peak, high above the rest, but a low one).
            if best == nil || map[peak] > best!.support {
                let weights = sources.map { s -> Float in
                    let share = Self.neighbourhoodMax(maps[s]!, peak) / max(totals[s]!, 1e-9)
                    return min(1, share) * min(1, share)
                }
                let raw = weighted(weights)
                let world = sources.indices.filter { weights[$0] > 0.25 }
                let consistent = sources.indices.filter { weights[$0] >= 0.25 }.reduce(Float(0)) {
                    $0 + totals[sources[$1]]!
                }
                let everything = sources.reduce(Float(0)) { $0 + totals[$1]! }
                let through = world.reduce(Float(0)) { $0 + Self.neighbourhoodMax(maps[sources[$1]]!, peak) }
                let all = world.reduce(Float(0)) { $0 + totals[sources[$1]]! }
                best = (
                    Estimate(
                        direction: Self.centroid(raw, around: peak), margin: margin,
                        spread: Self.halfWidth(map, peak), agreement: all > 0 ? Double(through / all) : 0,
                        consistentShare: everything > 0 ? Double(consistent / everything) : 0, agreeing: 0, checked: 0,
                        deviation: 180, pairs: pairs),
                    map[peak], weights
                )
            }
        }
        guard let best else { return nil }
        var estimate = best.estimate
        // Each recent pair's own peak, its votes weighted as the estimate weighs the parts of the pictures.
        let weights = Dictionary(uniqueKeysWithValues: zip(sources, best.weights))
        var deviations: [Double] = []
        var own = [Float](repeating: 0, count: TravelVotes.cellCount)
        for votes in recent {
            own.withUnsafeMutableBufferPointer { own in
                own.update(repeating: 0)
                votes.cells.withUnsafeBufferPointer { cells in
                    for f in votes.flows {
                        let w = f.weight * (weights[f.source] ?? 0)
                        guard w > 0 else { continue }
                        // Cells are the grid's (row · columns + column, as `measure` rasterises them): in the map.
                        for cell in cells[f.range] { own[Int(cell)] += w }
                    }
                }
            }
            let smooth = Self.smoothed(own)
            guard let top = smooth.indices.max(by: { smooth[$0] < smooth[$1] }), smooth[top] > 0 else {
                deviations.append(180)
                continue
            }
            let d = (TravelVotes.direction(top) * estimate.direction).sum()
            deviations.append(acos(min(1, max(-1, d))) * 180 / .pi)
        }
        estimate.direction = Self.refined(estimate.direction, recent, weights: weights)
        estimate.latestDeviations = Array(deviations.suffix(2 * Self.breakPairs))
        estimate.checked = deviations.count
        estimate.agreeing = deviations.filter { $0 <= 10 }.count
        estimate.deviation = deviations.isEmpty ? 180 : median(deviations)
        return estimate
    }

    /// The direction refined from the votes' cell to the point: Gauss–Newton on the angular distances of the recent
    /// pairs' correspondences (those of the parts of the pictures counted as the world, weight above ¼) from their
    /// epipolar planes through the vehicle's axis, `b · (t × R a) / |t × R a|` with `t = exp(½ log R) · m` (each
    /// pair's rotation as measured, or its turn about the vertical alone, whichever more correspondences agree
    /// with), Cauchy weights on a scale of 0.5°; each step at most 2°, the whole at most 4° from the start.
    static func refined(_ start: SIMD3<Double>, _ pairs: [TravelVotes], weights: [UInt16: Float]) -> SIMD3<Double> {
        let scale = 0.5 * Double.pi / 180
        // The world's correspondences of each pair, derotated: (R a, b, the pair's half turn).
        var flows: [(m: SIMD3<Double>, b: SIMD3<Double>, half: Rotation)] = []
        for votes in pairs {
            let yawOnly = Rotation.exp(SIMD3(0, votes.rotation.log.y, 0))
            let world = votes.flows.filter { (weights[$0.source] ?? 0) > 0.25 }
            guard !world.isEmpty else { continue }
            func agreeing(_ r: Rotation) -> Int {
                let t = Rotation.exp(r.log * 0.5) * start
                return world.filter { f in
                    let c = cross(t, r * f.a)
                    let cl = length(c)
                    return cl > 0.05 && abs((f.b * c).sum()) / cl < sin(1.5 * Double.pi / 180)
                }.count
            }
            let r = agreeing(votes.rotation) >= agreeing(yawOnly) ? votes.rotation : yawOnly
            let half = Rotation.exp(r.log * 0.5)
            flows += world.map { (r * $0.a, $0.b, half) }
        }
        guard flows.count >= 8 else { return start }
        func residuals(_ m: SIMD3<Double>) -> [Double] {
            flows.map { f in
                let t = f.half * m
                let c = cross(t, f.m)
                let cl = length(c)
                return cl > 0.05 ? (f.b * c).sum() / cl : 0
            }
        }
        let helper = abs(start.y) < 0.9 ? SIMD3<Double>(0, 1, 0) : SIMD3<Double>(1, 0, 0)
        let e1 = cross(start, helper) / length(cross(start, helper))
        let e2 = cross(start, e1)
        var offset = SIMD2<Double>(0, 0)
        func direction(_ o: SIMD2<Double>) -> SIMD3<Double> {
            let v = start + o.x * e1 + o.y * e2
            return v / length(v)
        }
        for _ in 0..<6 {
            let m = direction(offset)
            let h = 1e-4
            let r0 = residuals(m)
            let rx = residuals(direction(offset + SIMD2(h, 0)))
            let ry = residuals(direction(offset + SIMD2(0, h)))
            var a00 = 0.0
            var a01 = 0.0
            var a11 = 0.0
            var g0 = 0.0
            var g1 = 0.0
            for k in r0.indices {
                let jx = (rx[k] - r0[k]) / h
                let jy = (ry[k] - r0[k]) / h
                let u = r0[k] / scale
                let w = 1 / (1 + u * u)
                a00 += w * jx * jx
                a01 += w * jx * jy
                a11 += w * jy * jy
                g0 += w * jx * r0[k]
                g1 += w * jy * r0[k]
            }
            let det = a00 * a11 - a01 * a01
            guard det > 1e-18 else { break }
            var step = SIMD2(-(a11 * g0 - a01 * g1) / det, -(a00 * g1 - a01 * g0) / det)
            let limit = 2 * Double.pi / 180
            let l = (step * step).sum().squareRoot()
            if l > limit { step *= limit / l }
            offset += step
            let total = (offset * offset).sum().squareRoot()
            let most = 4 * Double.pi / 180
            if total > most { offset *= most / total }
            if l < 1e-6 { break }
        }
        return direction(offset)
    }

    /// The map summed over each cell's 3 × 3 neighbourhood (columns wrapping).
    static func smoothed(_ map: [Float]) -> [Float] {
        let rows = TravelVotes.rows
        let columns = TravelVotes.columns
        precondition(map.count == rows * columns, "a vote map has one value a grid cell")
        return [Float](unsafeUninitializedCapacity: map.count) { out, count in
            map.withUnsafeBufferPointer { m in
                for r in 0..<rows {
                    let above = max(0, r - 1)
                    let below = min(rows - 1, r + 1)
                    let o = out.baseAddress! + r * columns
                    for c in 0..<columns {
                        let left = c == 0 ? columns - 1 : c - 1
                        let right = c + 1 == columns ? 0 : c + 1
                        // Row by row from the one above, left to right: the same order of additions as ever.
                        var s: Float = 0
                        for row in above...below {
                            let p = m.baseAddress! + row * columns
                            s += p[left]
                            s += p[c]
                            s += p[right]
                        }
                        o[c] = s
                    }
                }
            }
            count = map.count
        }
    }

    /// The largest value of `map` within one cell of `index`.
    static func neighbourhoodMax(_ map: [Float], _ index: Int) -> Float {
        let rows = TravelVotes.rows
        let columns = TravelVotes.columns
        let r = index / columns
        let c = index % columns
        var best: Float = 0
        for dr in -1...1 where (0..<rows).contains(r + dr) {
            for dc in -1...1 { best = max(best, map[(r + dr) * columns + (c + dc + columns) % columns]) }
        }
        return best
    }

    /// The `count` highest cells of `map`, each at least `apart` degrees from those before it.
    static func peaks(_ map: [Float], count: Int, apart: Double) -> [Int] {
        var chosen: [Int] = []
        let limit = cos(apart * .pi / 180)
        for i in map.indices.sorted(by: { map[$0] > map[$1] }) where map[i] > 0 {
            let d = TravelVotes.direction(i)
            if chosen.allSatisfy({ (TravelVotes.direction($0) * d).sum() < limit }) { chosen.append(i) }
            if chosen.count == count { break }
        }
        return chosen
    }

    /// The peak's value over the highest value more than 25° from it.
    static func margin(_ map: [Float], _ peak: Int) -> Double {
        let p = TravelVotes.direction(peak)
        let limit = cos(25 * Double.pi / 180)
        var outside: Float = 0
        for i in map.indices where (TravelVotes.direction(i) * p).sum() < limit { outside = max(outside, map[i]) }
        return outside > 0 ? Double(map[peak] / outside) : .infinity
    }

    /// The votes' centroid within 4° of the peak (unit vector).
    static func centroid(_ map: [Float], around peak: Int) -> SIMD3<Double> {
        let p = TravelVotes.direction(peak)
        let limit = cos(4 * Double.pi / 180)
        var sum = SIMD3<Double>.zero
        for i in map.indices {
            let d = TravelVotes.direction(i)
            if (d * p).sum() > limit { sum += Double(map[i]) * d }
        }
        let l = length(sum)
        return l > 0 ? sum / l : p
    }

    /// The median, over 16 directions from the peak along the sphere, of the angle at which the map first falls
    /// below half the peak (degrees; 90 when it never does within reach).
    static func halfWidth(_ map: [Float], _ peak: Int) -> Double {
        let p = TravelVotes.direction(peak)
        let east =
            length(cross(SIMD3(0, 1, 0), p)) > 1e-9
            ? cross(SIMD3(0, 1, 0), p) / length(cross(SIMD3(0, 1, 0), p))
            : SIMD3(1, 0, 0)
        let north = cross(p, east)
        let half = map[peak] / 2
        var widths: [Double] = []
        for k in 0..<16 {
            let a = Double(k) * .pi / 8
            let along = east * cos(a) + north * sin(a)
            var width = 90.0
            for degrees in stride(from: 1.0, through: 90, by: 1) {
                let r = degrees * .pi / 180
                guard let cell = TravelVotes.cell(p * cos(r) + along * sin(r)) else {
                    width = degrees
                    break
                }
                if map[cell] < half {
                    width = degrees
                    break
                }
            }
            widths.append(width)
        }
        return median(widths)
    }
}
