// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

/// Measures ``PairMotion`` between two consecutive panoramas from their pixels.
///
/// 1. **What moves with the camera is left out**: pixels of A with texture that stay the same in B at the same
///    place (a car's dashboard and interior, the mount, a blurred nadir) are masked, unless nearly everything
///    stays (the camera stood still: the rotation is then the identity).
/// 2. **Yaw, coarsely**: the circular cross-correlation of the two pictures' gradient magnitudes over the
///    columns, on the two coarsest levels (128 and 256 wide), within 60° of the horizon.
/// 3. **Correspondences**: corners of A (``FeatureTracker``) predicted into B by the rotation so far and tracked
///    by pyramidal Lucas–Kanade, kept when tracking back lands within a pixel of the start; done twice, the
///    second time from the rotation the first fit gave.
/// 4. **Rotation**: RANSAC over pairs of correspondences (Horn's closed form, B. K. P. Horn, "Closed-form
///    solution of absolute orientation using unit quaternions", JOSA A 4(4), 1987), then the rotation and the
///    direction of travel t together by iteratively reweighted Gauss–Newton on the epipolar constraint
///    `b · (t × R a) = 0` (Cauchy weights), so that near objects, which move with the camera's travel, do not pull
///    the rotation: the spherical form of the essential-matrix model that J. Kopf, "360° Video Stabilization",
///    ACM TOG 35(6), 2016, estimates between keyframes. t's sign makes the scene stream out of it.
public struct MotionEstimator: Sendable {
    /// Pixels a pair needs to agree on (after the fit) for a measurement.
    public var minimumInliers = 12

    /// An estimator with the default threshold (``minimumInliers``).
    public init() {}

    /// The motion from `a` to `b`, or `nil` when too few correspondences agree (featureless or unrelated
    /// pictures).
    public func motion(from a: SphereImage, to b: SphereImage) -> PairMotion? {
        if a.width != b.width {
            let width = min(a.width, b.width)
            return motion(from: a.reduced(toWidth: width), to: b.reduced(toWidth: width))
        }
        let mask = Self.staticMask(a, b)
        if mask.fraction > 0.95 {
            return PairMotion(
                rotation: .identity, uncertainty: 0.05, tracked: 0, inliers: 0, travel: nil, travelUncertainty: nil,
                parallax: 0,
                staticFraction: mask.fraction,
                exposure: Self.exposure(a, b, [(SIMD3(0, 0, 1), SIMD3(0, 0, 1))], same: true))
        }
        // Every corner is tracked; those whose window reaches a static pixel are marked.
        let scores = FeatureTracker.cornerScores(a)
        defer { FeatureTracker.recycle(scores, width: a.width) }
        let corners = FeatureTracker.corners(in: a, scores: scores) { _, _ in false }
        let near = mask.dilated(radius: 3)
        let still = corners.map { near.isStatic(Int($0.x) / 2, Int($0.y) / 2) }
        // The best of the yaw candidates: the one whose predictions track the most of every eighth corner outside
        // what stays put (what stays put tracks at no turn whatever the world did); then every corner from it.
        // Fewer than a tenth tracked: the pictures do not overlap (nothing to measure).
        var candidates = Self.coarseYaws(a, b, mask: mask)
        // No turn at all is always a candidate: what moves on its own (people inside a car whose windows show
        // little) can put the correlation's peaks elsewhere.
        if !candidates.isEmpty, !candidates.contains(where: { min($0, 360 - $0) < 2 }) { candidates.append(0) }
        var best = (yaw: candidates.first ?? 0, tracked: -1)
        let moving = corners.indices.filter { !still[$0] }
        let pool = moving.count >= 80 ? moving : Array(corners.indices)
        let sample = Array(stride(from: 0, to: pool.count, by: max(1, pool.count / 40)).map { pool[$0] })
        for yaw in candidates where candidates.count > 1 {
            let found = Self.correspondences(
                sample.map { corners[$0] }, sample.map { still[$0] }, from: a, to: b,
                predicted: Rotation.yaw(-yaw)
            ).count
            if found > best.tracked { best = (yaw, found) }
            if 2 * found >= sample.count { break }
        }
        if candidates.count > 1, 10 * best.tracked < sample.count {
            // Nothing that moves tracks at any turn (people moving inside a car that stands): the picture as a whole
            // may still stand; else the pictures do not overlap.
            let everything = stride(from: 0, to: corners.count, by: max(1, corners.count / 40)).map { corners[$0] }
            let found = Self.correspondences(
                everything, everything.map { _ in false }, from: a, to: b, predicted: .identity
            ).count
            guard 2 * found >= everything.count else { return nil }
            best = (0, found)
        }
        var tracks = Self.correspondences(corners, still, from: a, to: b, predicted: Rotation.yaw(-best.yaw))
        // Pixels that stay put are the camera's own (a dashboard) when the world moves, and the distant world's
        // too when the camera neither turns nor travels far between the two. So two fits: the world's (what stays
        // put left out) and everything's; everything's is taken when it explains the world's correspondences as
        // well as the world's own fit does (the far field then holds it), the world's when what stays put pulled
        // everything's away from it.
        var world: Fit?
        var all: Fit?
        for round in 0..<2 {
            if round > 0 {
                // Again from the rotation found, when the first predictions left many corners untracked.
                guard 10 * tracks.count < 8 * corners.count, let best = world ?? all else { break }
                tracks = Self.correspondences(corners, still, from: a, to: b, predicted: best.rotation)
            }
            let threshold = round == 0 ? 0.6 : 0.3
            let moving = tracks.filter { !$0.still }.map { ($0.a, $0.b) }
            world = fit(moving, threshold: threshold)
            all = moving.count == tracks.count ? world : fit(tracks.map { ($0.a, $0.b) }, threshold: threshold)
        }
        guard
            let chosen = Self.choose(
                world: world, all: all, worldPairs: tracks.filter { !$0.still }.map { ($0.a, $0.b) },
                total: tracks.count)
        else { return nil }
        var motion = PairMotion(
            rotation: chosen.rotation, uncertainty: chosen.uncertainty, tracked: chosen.count,
            inliers: chosen.inliers, travel: chosen.travel.map { chosen.rotation.transposed * $0 },
            travelUncertainty: chosen.travel == nil ? nil : chosen.travelUncertainty,
            parallax: chosen.parallax, staticFraction: mask.fraction,
            exposure: Self.exposure(a, b, tracks.map { ($0.a, $0.b) }, same: false))
        // The world's corners already tracked (and checked back) are not tracked again for the votes.
        var tracked: [SIMD2<Double>: SIMD3<Double>] = [:]
        for t in tracks where !t.still { tracked[t.corner] = t.b }
        motion.travelVotes = TravelVotes.measure(
            Self.flows(a, b, scores: scores, near: near, rotation: chosen.rotation, tracked: tracked),
            rotation: chosen.rotation)
        return motion
    }

    /// The world's flows for ``TravelVotes``: the 400 strongest corners of A outside what stays put (a car's
    /// cabin, a reflection on its windows: the whole corner budget goes to what moves), tracked into B from where
    /// `rotation` puts them (or where `tracked` says they were found in B, as seen from A's corner pixels: the
    /// motion's own correspondences, tracked from a coarser prediction: the same corner, found within the tracker's
    /// convergence of where this prediction would find it), those that moved by more than 0.4° (what hardly moves
    /// is the far field or the camera's own); in A's picture order.
    static func flows(
        _ a: SphereImage, _ b: SphereImage, scores: [Float], near: StaticMask, rotation: Rotation,
        tracked: [SIMD2<Double>: SIMD3<Double>] = [:]
    ) -> [(a: SIMD3<Double>, b: SIMD3<Double>)] {
        let corners = FeatureTracker.corners(in: a, scores: scores, limit: 400) { x, y in near.isStatic(x / 2, y / 2) }
        let fresh = corners.filter { tracked[$0] == nil }
        var found = tracked
        for t in correspondences(fresh, fresh.map { _ in false }, from: a, to: b, predicted: rotation) {
            found[t.corner] = t.b
        }
        let moved = cos(0.4 * Double.pi / 180)
        return corners.compactMap { p in
            guard let q = found[p] else { return nil }
            let d = SphereImage.direction(x: p.x, y: p.y, width: a.width)
            return (d * q).sum() < moved ? (d, q) : nil
        }
    }

    /// The median ratio, per channel, of B's colour over A's at corresponding points (both between 12 and 240,
    /// neither dark nor clipped); at least 12 of them (or, with `same`, every pixel of the colour pictures compared
    /// in place: the camera stood still).
    static func exposure(
        _ a: SphereImage, _ b: SphereImage, _ pairs: [(a: SIMD3<Double>, b: SIMD3<Double>)], same: Bool
    ) -> SIMD3<Double>? {
        var ratios: [[Double]] = [[], [], []]
        func add(_ ca: SIMD3<Float>, _ cb: SIMD3<Float>) {
            for c in 0..<3 where ca[c] > 12 && ca[c] < 240 && cb[c] > 12 && cb[c] < 240 {
                ratios[c].append(Double(cb[c] / ca[c]))
            }
        }
        if same {
            for (ca, cb) in zip(a.colour, b.colour) { add(ca, cb) }
        } else {
            for p in pairs { add(a.colour(at: p.a), b.colour(at: p.b)) }
        }
        guard ratios.allSatisfy({ $0.count >= 12 }) else { return nil }
        return SIMD3(median(ratios[0]), median(ratios[1]), median(ratios[2]))
    }

    /// A corner of A tracked into B (unit vectors), whether its window reaches pixels that stay put, and where the
    /// corner is in A (finest-level pixels).
    typealias Track = (a: SIMD3<Double>, b: SIMD3<Double>, still: Bool, corner: SIMD2<Double>)

    /// RANSAC and the refinement on `pairs`; nil with fewer than ``minimumInliers`` agreeing.
    private func fit(_ pairs: [(a: SIMD3<Double>, b: SIMD3<Double>)], threshold: Double) -> Fit? {
        guard pairs.count >= minimumInliers,
            let initial = Self.ransac(pairs, threshold: threshold),
            let refined = Self.refine(pairs, rotation: initial),
            refined.inliers >= minimumInliers
        else { return nil }
        return refined
    }

    /// The world's fit when what stays put pulled everything's away from the world: much of the picture moved
    /// (at least 30 % of the correspondences are outside what stays put, or the world's fit turns by more than
    /// 10°), and the world's fit explains twice as
    /// many of those (within 0.5° of the epipolar planes) as everything's, and more than a few, found in 4 or more
    /// of the 12 sectors of 30° of longitude (the world is seen around, not two people in a car). Else everything's
    /// (more corners, the far field among them); without a world's fit, everything's only when little of the
    /// picture moved and that little agrees with it (half of it within 2° of its epipolar planes; else it could
    /// be the stillness of the camera's own pixels alone: nothing is measured), or when what moved is confined to
    /// three sectors of 30° of longitude or fewer (people inside a car that stands).
    static func choose(world: Fit?, all: Fit?, worldPairs: [(a: SIMD3<Double>, b: SIMD3<Double>)], total: Int) -> Fit? {
        let limit = sin(0.5 * .pi / 180)
        guard let all else { return world }
        let byAll = epipolarInliers(worldPairs, rotation: all.rotation, limit: limit).count
        func sectors(_ indices: [Int]) -> Int {
            Set(indices.map { Int((atan2(worldPairs[$0].a.x, worldPairs[$0].a.z) / .pi + 1) * 6) % 12 }).count
        }
        guard let world else {
            // A handful of moving corners that fit no motion of their own (near points, tracked roughly): they
            // need only lie within 2° of everything's epipolar planes. Or what moves is confined to three of the 12
            // sectors of 30° of longitude or fewer (people inside a car standing still): the rest stood still.
            let loose = epipolarInliers(worldPairs, rotation: all.rotation, limit: sin(2 * .pi / 180)).count
            let few = (6..<24).contains(worldPairs.count) && 2 * loose >= worldPairs.count
            return few || sectors(Array(worldPairs.indices)) <= 3 ? all : nil
        }
        let agreeing = epipolarInliers(worldPairs, rotation: world.rotation, limit: limit)
        let byWorld = agreeing.count
        // A turn of more than 10° moves the far field too: what stays put then is the camera's own.
        let moved = 10 * worldPairs.count >= 3 * total || world.rotation.angle > 10
        // The world is seen around: its agreeing correspondences lie in 4 or more of the 12 sectors of 30° of
        // longitude (two people moving inside a car whose windows show nothing fill one or two).
        let pulled = moved && byWorld >= 2 * byAll + 5 && (world.inliers >= 40 || byAll < 12) && sectors(agreeing) >= 4
        return pulled ? world : all
    }

    // MARK: Static pixels

    struct StaticMask {
        /// One flag per pixel of the half level.
        let flags: [Bool]
        let width: Int
        /// Share of the textured pixels that are static.
        let fraction: Double
        func isStatic(_ x: Int, _ y: Int) -> Bool { flags[y * width + min(max(x, 0), width - 1)] }

        /// The mask grown by `radius` pixels (a square), columns wrapping and rows clamped: a pixel is set when any
        /// of the `(2r+1)²` around it is. Separable: each row's flags spread along it (a running count of the set
        /// flags in the window), then those rows' down the columns.
        func dilated(radius r: Int) -> StaticMask {
            let h = flags.count / width
            let w = width
            precondition(w > 2 * r)
            var across = [Bool](repeating: false, count: flags.count)
            flags.withUnsafeBufferPointer { f in
                across.withUnsafeMutableBufferPointer { out in
                    for y in 0..<h {
                        let row = f.baseAddress! + y * w
                        let o = out.baseAddress! + y * w
                        var count = 0
                        for dx in -r...r where row[(dx + w) % w] { count += 1 }
                        for x in 0..<w {
                            o[x] = count > 0
                            var add = x + r + 1
                            var drop = x - r
                            if add >= w { add -= w }
                            if drop < 0 { drop += w }
                            count += (row[add] ? 1 : 0) - (row[drop] ? 1 : 0)
                        }
                    }
                }
            }
            // Down the columns as bytes (a Bool is stored as 0 or 1), OR-ed a row at a time.
            var grown = [UInt8](repeating: 0, count: flags.count)
            across.withUnsafeBufferPointer { a in
                a.withMemoryRebound(to: UInt8.self) { bytes in
                    grown.withUnsafeMutableBufferPointer { out in
                        for y in 0..<h {
                            let o = out.baseAddress! + y * w
                            for dy in max(0, y - r)...min(h - 1, y + r) {
                                let row = bytes.baseAddress! + dy * w
                                for x in 0..<w { o[x] |= row[x] }
                            }
                        }
                    }
                }
            }
            return StaticMask(flags: grown.map { $0 != 0 }, width: width, fraction: fraction)
        }
    }

    /// Pixels of the half level whose 5 × 5 neighbourhood has texture (a standard deviation over 3 luma units)
    /// and correlates with the same neighbourhood of B by more than 0.95 (normalised cross-correlation, so an
    /// exposure change between the two does not hide what stayed put).
    static func staticMask(_ a: SphereImage, _ b: SphereImage) -> StaticMask {
        let w = a.levels[1].width
        let h = a.levels[1].height
        var flags = [Bool](repeating: false, count: w * h)
        var textured = 0
        var still = 0
        a.levels[1].pixels.withUnsafeBufferPointer { la in
            b.levels[1].pixels.withUnsafeBufferPointer { lb in
                // Five planes: A, B, A², B², A·B.
                BoxFilter.means(
                    width: w, height: h, radius: 2, channels: 5,
                    fill: { y, row in
                        let pa = la.baseAddress! + y * w
                        let pb = lb.baseAddress! + y * w
                        for x in 0..<w {
                            row[x] = pa[x]
                            row[w + x] = pb[x]
                            row[2 * w + x] = pa[x] * pa[x]
                            row[3 * w + x] = pb[x] * pb[x]
                            row[4 * w + x] = pa[x] * pb[x]
                        }
                    },
                    emit: { y, m in
                        let ma = m
                        let mb = m + w
                        let aa = m + 2 * w
                        let bb = m + 3 * w
                        let ab = m + 4 * w
                        for x in 0..<w {
                            let va = aa[x] - ma[x] * ma[x]
                            let vb = bb[x] - mb[x] * mb[x]
                            guard va > 9 else { continue }
                            textured += 1
                            let correlation = (ab[x] - ma[x] * mb[x]) / max(1e-6, (va * max(vb, 0)).squareRoot())
                            if correlation > 0.95 {
                                flags[y * w + x] = true
                                still += 1
                            }
                        }
                    })
            }
        }
        return StaticMask(flags: flags, width: w, fraction: textured == 0 ? 1 : Double(still) / Double(textured))
    }

    // MARK: Coarse yaw

    /// How far B may be turned right of A about the vertical, degrees in [0, 360), best first: the column
    /// shifts at the three highest peaks of the correlation of the pictures' gradient magnitudes (static pixels
    /// of A left out), each refined on the half level.
    static func coarseYaws(_ a: SphereImage, _ b: SphereImage, mask: StaticMask?) -> [Double] {
        func gradients(_ level: SphereImage.Level, masked: Bool, scale: Int) -> [Float] {
            let w = level.width
            let h = level.height
            var g = [Float](repeating: 0, count: w * h)
            let margin = h / 6 // 60° of latitude either side of the horizon
            for y in max(1, margin)..<min(h - 1, h - margin) {
                for x in 0..<w {
                    let i = y * w + x
                    let right = x + 1 == w ? i + 1 - w : i + 1
                    let left = x == 0 ? i - 1 + w : i - 1
                    let gx = level.pixels[right] - level.pixels[left]
                    let gy = level.pixels[i + w] - level.pixels[i - w]
                    g[i] = (gx * gx + gy * gy).squareRoot()
                    if masked, let mask, mask.isStatic(x * scale, y * scale) { g[i] = 0 }
                }
            }
            var smooth = BoxFilter.mean(g, w, h, radius: 1)
            let mean = smooth.reduce(0, +) / Float(smooth.count)
            for i in smooth.indices { smooth[i] -= mean }
            return smooth
        }
        // Σ ga(x, y) · gb(x − shift, y), columns wrapping: each row in two runs without a wrap, eight products at a
        // time into eight partial sums (one chain of additions would be bound by their latency).
        func score(_ ga: [Float], _ gb: [Float], _ w: Int, _ shift: Int) -> Float {
            let h = ga.count / w
            var sums = SIMD8<Float>()
            var tail: Float = 0
            ga.withUnsafeBufferPointer { pa in
                gb.withUnsafeBufferPointer { pb in
                    func run(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ n: Int) {
                        var i = 0
                        while i + 8 <= n {
                            let va = UnsafeRawPointer(a + i).loadUnaligned(as: SIMD8<Float>.self)
                            let vb = UnsafeRawPointer(b + i).loadUnaligned(as: SIMD8<Float>.self)
                            sums += va * vb
                            i += 8
                        }
                        while i < n {
                            tail += a[i] * b[i]
                            i += 1
                        }
                    }
                    // Column x of A meets column x − shift of B: x < shift wraps to x − shift + w.
                    let s = (shift % w + w) % w
                    for y in 0..<h {
                        let a = pa.baseAddress! + y * w
                        let b = pb.baseAddress! + y * w
                        run(a, b + w - s, s)
                        run(a + s, b, w - s)
                    }
                }
            }
            return sums.sum() + tail
        }
        // On the two coarsest levels (128 and 256 wide); the mask is on level 1.
        let c = a.levels.count - 1
        let f = c - 1
        let coarseA = gradients(a.levels[c], masked: true, scale: 1 << (c - 1))
        let coarseB = gradients(b.levels[c], masked: false, scale: 1 << (c - 1))
        let wc = a.levels[c].width
        let coarse = (0..<wc).map { score(coarseA, coarseB, wc, $0) }
        let peaks = (0..<wc).filter { s in
            coarse[s] >= coarse[(s + 1) % wc] && coarse[s] > coarse[(s + wc - 1) % wc]
        }.sorted { coarse[$0] > coarse[$1] }.prefix(3)
        let fineA = gradients(a.levels[f], masked: true, scale: 1 << (f - 1))
        let fineB = gradients(b.levels[f], masked: false, scale: 1 << (f - 1))
        let wf = a.levels[f].width
        return peaks.map { best in
            var scores: [Int: Float] = [:]
            for s in (2 * best - 3)...(2 * best + 3) { scores[s] = score(fineA, fineB, wf, (s % wf + wf) % wf) }
            let top = scores.max { $0.value < $1.value }!.key
            var shift = Double(top)
            if let l = scores[top - 1], let r = scores[top + 1] {
                let c = scores[top]!
                let denominator = l - 2 * c + r
                if denominator < 0 { shift += Double(max(-0.5, min(0.5, 0.5 * (l - r) / denominator))) }
            }
            let yaw = (shift / Double(wf) * 360).truncatingRemainder(dividingBy: 360)
            return yaw < 0 ? yaw + 360 : yaw
        }
    }

    // MARK: Correspondences

    /// The corners tracked from A into B (unit vectors, and their `still` flag), the search started where
    /// `predicted` puts them, kept when the track back lands within a pixel of the corner.
    static func correspondences(
        _ corners: [SIMD2<Double>], _ still: [Bool], from a: SphereImage, to b: SphereImage,
        predicted: Rotation
    ) -> [Track] {
        let w = a.width
        var result: [Track] = []
        for (p, isStill) in zip(corners, still) {
            let da = SphereImage.direction(x: p.x, y: p.y, width: w)
            let guess = SphereImage.pixel(of: predicted * da, width: w)
            guard let q = FeatureTracker.track(p, from: a, to: b, guess: SIMD2(guess.x, guess.y)),
                let back = FeatureTracker.track(q, from: b, to: a, guess: p, coarsest: 1)
            else { continue }
            var dx = abs(back.x - p.x)
            if dx > Double(w) / 2 { dx = Double(w) - dx }
            guard dx * dx + (back.y - p.y) * (back.y - p.y) < 1 else { continue }
            result.append((da, SphereImage.direction(x: q.x, y: q.y, width: w), isStill, p))
        }
        return result
    }

    // MARK: Fits

    /// The rotation `R` maximising `Σ w · b·(R a)` (Horn's unit-quaternion solution).
    static func horn(_ pairs: [(a: SIMD3<Double>, b: SIMD3<Double>)], weights: [Double]? = nil) -> Rotation {
        var s = [[Double]](repeating: [0, 0, 0], count: 3)
        for (k, p) in pairs.enumerated() {
            let w = weights?[k] ?? 1
            let a = [p.a.x, p.a.y, p.a.z]
            let b = [p.b.x, p.b.y, p.b.z]
            for i in 0..<3 { for j in 0..<3 { s[i][j] += w * a[i] * b[j] } }
        }
        let (xx, xy, xz) = (s[0][0], s[0][1], s[0][2])
        let (yx, yy, yz) = (s[1][0], s[1][1], s[1][2])
        let (zx, zy, zz) = (s[2][0], s[2][1], s[2][2])
        let n: [[Double]] = [
            [xx + yy + zz, yz - zy, zx - xz, xy - yx],
            [yz - zy, xx - yy - zz, xy + yx, zx + xz],
            [zx - xz, xy + yx, -xx + yy - zz, yz + zy],
            [xy - yx, zx + xz, yz + zy, -xx - yy + zz]
        ]
        let q = SymmetricEigen(n).vectors[0]
        let (q0, qx, qy, qz) = (q[0], q[1], q[2], q[3])
        return Rotation(
            r0: [q0 * q0 + qx * qx - qy * qy - qz * qz, 2 * (qx * qy - q0 * qz), 2 * (qx * qz + q0 * qy)],
            r1: [2 * (qy * qx + q0 * qz), q0 * q0 - qx * qx + qy * qy - qz * qz, 2 * (qy * qz - q0 * qx)],
            r2: [2 * (qz * qx - q0 * qy), 2 * (qz * qy + q0 * qx), q0 * q0 - qx * qx - qy * qy + qz * qz])
    }

    /// The rotation that most pairs agree with to within `threshold` degrees of the epipolar model: rotations
    /// from samples of two pairs (a fixed sequence, so results repeat; as many as make drawing two agreeing pairs
    /// 99.9 % sure, 20 to 300), each scored with the direction
    /// of travel that fits it best; refitted (Horn) on the largest agreeing set.
    static func ransac(_ pairs: [(a: SIMD3<Double>, b: SIMD3<Double>)], threshold: Double) -> Rotation? {
        guard pairs.count >= 2 else { return nil }
        let limit = sin(threshold * .pi / 180)
        var generator = SplitMix64(seed: 0x5EED)
        var best: [Int] = []
        var needed = 300
        var iteration = 0
        while iteration < needed {
            iteration += 1
            let i = Int(generator.next() % UInt64(pairs.count))
            var j = Int(generator.next() % UInt64(pairs.count - 1))
            if j >= i { j += 1 }
            // Two pairs far apart on the sphere determine a rotation well.
            guard (pairs[i].a * pairs[j].a).sum() < 0.98 else { continue }
            let r = horn([pairs[i], pairs[j]])
            let agreeing = epipolarInliers(pairs, rotation: r, limit: limit)
            if agreeing.count > best.count {
                best = agreeing
                // Samples enough to draw two agreeing pairs at least once with probability 0.999.
                let w = Double(best.count) / Double(pairs.count)
                if w > 0.999 { break }
                needed = min(300, max(20, Int((Foundation.log(0.001) / Foundation.log(1 - w * w)).rounded(.up))))
            }
        }
        guard best.count >= 3 else { return nil }
        return horn(best.map { pairs[$0] })
    }

    /// The pairs within `limit` (sine of the angle) of the epipolar planes of `rotation` and the direction of
    /// travel most nearly perpendicular to every `R a × b` (or, with no parallax, of `R a`).
    static func epipolarInliers(_ pairs: [(a: SIMD3<Double>, b: SIMD3<Double>)], rotation: Rotation, limit: Double)
        -> [Int]
    {
        let m = pairs.map { rotation * $0.a }
        var scatter = [[Double]](repeating: [0, 0, 0], count: 3)
        var moved = 0.0
        for k in pairs.indices {
            let n = cross(m[k], pairs[k].b)
            let v = [n.x, n.y, n.z]
            moved += length(n)
            for i in 0..<3 { for j in i..<3 { scatter[i][j] += v[i] * v[j] } }
        }
        guard moved / Double(pairs.count) > limit else {
            return pairs.indices.filter { length(cross(m[$0], pairs[$0].b)) < limit }
        }
        let e = SymmetricEigen(scatter).vectors[2]
        var t = SIMD3(e[0], e[1], e[2])
        if pairs.indices.reduce(0.0, { $0 + ((pairs[$1].b - m[$1]) * t).sum() }) > 0 { t = -t }
        return pairs.indices.filter { k in
            let c = cross(t, m[k])
            let cl = length(c)
            guard cl > 0.05 else { return length(cross(m[k], pairs[k].b)) < 3 * limit }
            // On the plane through t and R a, and streaming away from t (or hardly moving): a point before the
            // camera cannot move towards the focus of expansion.
            return abs((pairs[k].b * c).sum()) / cl < limit && towards(t, m[k], pairs[k].b) < limit
        }
    }

    /// How far (sine of the angle) `b` lies from `m` towards the focus of expansion `t`, along the great
    /// circle through them; negative when it moved away from t, as the scene does.
    static func towards(_ t: SIMD3<Double>, _ m: SIMD3<Double>, _ b: SIMD3<Double>) -> Double {
        var away = m * (m * t).sum() - t
        let l = length(away)
        guard l > 1e-9 else { return 0 }
        away /= l
        return -((b - m) * away).sum()
    }

    struct Fit {
        var rotation: Rotation
        /// Direction of travel in B's frame.
        @OptionalStoredAsDoubles var travel: SIMD3<Double>?
        /// One standard deviation of the direction of travel's error, degrees.
        var travelUncertainty: Double
        var uncertainty: Double
        var count: Int
        var inliers: Int
        var parallax: Double
    }

    /// Rotation and direction of travel from all pairs, starting from `rotation`: t where the derotated flow
    /// streams out of (``focusOfExpansion``), then Gauss–Newton steps of the rotation on the distances of each `b`
    /// from the plane through t and `R a`, with the far field pinning what those leave loose; Cauchy weights
    /// with a scale from the residuals' median; at the end t itself refined on the same distances
    /// (``refineTravel``). With too little parallax for t, the rotation alone is fitted
    /// (reweighted Horn).
    static func refine(_ pairs: [(a: SIMD3<Double>, b: SIMD3<Double>)], rotation start: Rotation) -> Fit? {
        var rotation = start
        var weights = [Double](repeating: 1, count: pairs.count)
        var travel: SIMD3<Double>?
        var travelSigma = 180.0
        var scale = 0.0
        var parallax = 0.0
        var information = [[Double]](repeating: [0, 0, 0], count: 3)
        for iteration in 0..<8 {
            let m = pairs.map { rotation * $0.a }
            let n = pairs.indices.map { cross(m[$0], pairs[$0].b) }
            parallax = median(n.map { asin(min(1, length($0))) * 180 / .pi })
            if parallax > 0.1 {
                // t: where the flow streams out of (searched afresh on the first and the fifth iteration, then
                // kept): the epipolar planes alone leave it loose along the horizon when most corners lie near it.
                let t: SIMD3<Double>
                if let known = travel, iteration != 0 && iteration != 4 {
                    t = known
                } else if let found = focusOfExpansion(m, pairs.map(\.b), weights: weights) {
                    t = found
                } else {
                    return nil
                }
                travel = t
                // Gauss–Newton on the epipolar distances.
                var residuals = [Double](repeating: 0, count: pairs.count)
                var jacobians = [SIMD3<Double>](repeating: .zero, count: pairs.count)
                var usable = [Bool](repeating: false, count: pairs.count)
                for k in pairs.indices {
                    let c = cross(t, m[k])
                    let cl = length(c)
                    // Too near the focus of expansion to say anything, or moving towards it (not the scene).
                    guard cl > 0.05, towards(t, m[k], pairs[k].b) < 3 * scaleOrDefault(scale) else { continue }
                    residuals[k] = (pairs[k].b * c).sum() / cl
                    jacobians[k] = cross(m[k], cross(pairs[k].b, t)) / cl
                    usable[k] = true
                }
                scale = max(0.0003, 1.4826 * median(pairs.indices.filter { usable[$0] }.map { abs(residuals[$0]) }))
                var h = [[Double]](repeating: [0, 0, 0], count: 3)
                var g = SIMD3<Double>.zero
                for k in pairs.indices {
                    guard usable[k] else {
                        weights[k] = 0
                        continue
                    }
                    let u = residuals[k] / (2.385 * scale)
                    weights[k] = 1 / (1 + u * u)
                    let j = jacobians[k]
                    let jv = [j.x, j.y, j.z]
                    for r in 0..<3 { for c in 0..<3 { h[r][c] += weights[k] * jv[r] * jv[c] } }
                    g += weights[k] * residuals[k] * j
                }
                information = h
                // The far field: what hardly moves along its epipolar circle (distant points, and points towards
                // the focus of expansion or away from it) pins the rotation about the axes the epipolar distances
                // leave loose (a forward camera's yaw, for points near the horizon). A Cauchy weight with a scale
                // of 0.3° keeps the near points, which stream along their circles, out of it.
                let farScale = 0.3 * Double.pi / 180
                for k in pairs.indices where usable[k] || length(cross(t, m[k])) <= 0.05 {
                    let d = pairs[k].b - m[k]
                    var away = m[k] * (m[k] * t).sum() - t
                    let al = length(away)
                    guard al > 1e-9 else { continue }
                    away /= al
                    let along = (d * away).sum()
                    let u = along / farScale
                    let w = 0.5 / (1 + u * u)
                    let j = -cross(m[k], away)
                    let jv = [j.x, j.y, j.z]
                    for r in 0..<3 { for c in 0..<3 { h[r][c] += w * jv[r] * jv[c] } }
                    g += w * along * j
                }
                guard let step = solve3(h, -g) else { return nil }
                rotation = (Rotation.exp(step) * rotation).orthonormalized
                if length(step) < 1e-7 { break }
            } else {
                travel = nil
                let residuals = pairs.indices.map { length(pairs[$0].b - m[$0]) }
                scale = max(0.0003, 1.4826 * median(residuals))
                for k in pairs.indices {
                    let u = residuals[k] / (2.385 * scale)
                    weights[k] = 1 / (1 + u * u)
                }
                let next = horn(pairs, weights: weights)
                let change = (next * rotation.transposed).angle
                rotation = next
                // Information of a rotation fit: each pair constrains the two directions perpendicular to it.
                var h = [[Double]](repeating: [0, 0, 0], count: 3)
                for k in pairs.indices {
                    let v = [m[k].x, m[k].y, m[k].z]
                    for r in 0..<3 { for c in 0..<3 { h[r][c] += weights[k] * ((r == c ? 1 : 0) - v[r] * v[c]) } }
                }
                information = h
                if change < 1e-5 { break }
            }
        }
        if let t0 = travel {
            // The direction of travel where the epipolar planes meet best, from where the flow streams out of.
            let (t, sigma) = refineTravel(
                pairs.map { rotation * $0.a }, pairs.map(\.b), from: t0, scale: scaleOrDefault(scale))
            travel = t
            travelSigma = sigma
        }
        let inliers = weights.filter { $0 > 0.5 }.count
        let smallest = SymmetricEigen(information).values[2]
        let sigma = smallest > 0 ? scale / smallest.squareRoot() * 180 / .pi : 180
        return Fit(
            rotation: rotation, travel: travel, travelUncertainty: travelSigma, uncertainty: max(0.05, sigma),
            count: pairs.count,
            inliers: inliers, parallax: parallax)
    }
}

// MARK: - Small helpers

/// The direction of travel t refined from `start` (the focus of expansion) by Gauss–Newton on the epipolar
/// distances `b·(t×m)/|t×m|` of the derotated correspondences `m`, `b` (Cauchy weights, scale from the residuals'
/// median; points near t, or moving towards it, left out), with one standard deviation of its error (degrees)
/// from the fit's information.
func refineTravel(_ m: [SIMD3<Double>], _ b: [SIMD3<Double>], from start: SIMD3<Double>, scale: Double) -> (
    SIMD3<Double>, Double
) {
    var t = start / length(start)
    var scale = scale
    var sigma = 180.0
    for _ in 0..<10 {
        let helper = abs(t.y) < 0.9 ? SIMD3<Double>(0, 1, 0) : SIMD3<Double>(1, 0, 0)
        var e1 = cross(t, helper)
        e1 /= length(e1)
        let e2 = cross(t, e1)
        var r: [Double] = []
        var j: [SIMD2<Double>] = []
        for k in m.indices {
            let c = cross(t, m[k])
            let cl = length(c)
            guard cl > 0.05, MotionEstimator.towards(t, m[k], b[k]) < 3 * scale else { continue }
            let residual = (b[k] * c).sum() / cl
            let gradient = cross(m[k], b[k]) / cl - residual * cross(m[k], c) / (cl * cl)
            r.append(residual)
            j.append(SIMD2((gradient * e1).sum(), (gradient * e2).sum()))
        }
        guard r.count >= 8 else { break }
        scale = max(0.0003, 1.4826 * median(r.map(abs)))
        var h00 = 0.0
        var h01 = 0.0
        var h11 = 0.0
        var g0 = 0.0
        var g1 = 0.0
        for k in r.indices {
            let u = r[k] / (2.385 * scale)
            let w = 1 / (1 + u * u)
            h00 += w * j[k].x * j[k].x
            h01 += w * j[k].x * j[k].y
            h11 += w * j[k].y * j[k].y
            g0 += w * r[k] * j[k].x
            g1 += w * r[k] * j[k].y
        }
        let det = h00 * h11 - h01 * h01
        guard det > 1e-18 else { break }
        let smallest = (h00 + h11) / 2 - (((h00 - h11) / 2) * ((h00 - h11) / 2) + h01 * h01).squareRoot()
        sigma = smallest > 0 ? scale / smallest.squareRoot() * 180 / .pi : 180
        var a = -(h11 * g0 - h01 * g1) / det
        var c = -(h00 * g1 - h01 * g0) / det
        // At most 5° a step: weak geometry must not throw t far from where the flow streams out of.
        let limit = 5 * Double.pi / 180
        let step = (a * a + c * c).squareRoot()
        if step > limit {
            a *= limit / step
            c *= limit / step
        }
        t += a * e1 + c * e2
        t /= length(t)
        if a * a + c * c < 1e-12 { break }
    }
    return (t, sigma)
}

/// The direction t the derotated flow `b − m` streams out of: the one maximising `Σ w · (b − m)·â(t)`, â the unit
/// tangent at m pointing away from t (for a pure translation every flow lies along â of the true t, so the sum
/// peaks there). Searched on a 10° grid over the sphere, then refined to 2° and 0.4°.
func focusOfExpansion(_ m: [SIMD3<Double>], _ b: [SIMD3<Double>], weights: [Double]) -> SIMD3<Double>? {
    let flows = m.indices.compactMap { k -> (SIMD3<Double>, SIMD3<Double>, Double)? in
        let d = b[k] - m[k]
        return weights[k] > 0.05 && length(d) > 1e-7 ? (m[k], d, weights[k]) : nil
    }
    guard flows.count >= 3 else { return nil }
    // The coarse grid on at most 120 of them, the refinements on all.
    let few = flows.count > 120 ? stride(from: 0, to: flows.count, by: flows.count / 120 + 1).map { flows[$0] } : flows
    let coarseFlows = FlowColumns(few)
    let allFlows = FlowColumns(flows)
    func direction(_ longitude: Double, _ latitude: Double) -> SIMD3<Double> {
        SIMD3(cos(latitude) * sin(longitude), -sin(latitude), cos(latitude) * cos(longitude))
    }
    var best = (score: -Double.infinity, longitude: 0.0, latitude: 0.0)
    let coarse = 10 * Double.pi / 180
    for i in 0..<36 {
        for j in -8...8 {
            let lon = Double(i) * coarse
            let lat = Double(j) * coarse
            let v = coarseFlows.score(direction(lon, lat))
            if v > best.score { best = (v, lon, lat) }
        }
    }
    best.score = -Double.infinity
    for step in [2.0, 0.4] {
        let h = step * Double.pi / 180
        let centre = best
        for i in -5...5 {
            for j in -5...5 {
                let lon = centre.longitude + Double(i) * h
                let lat = min(max(centre.latitude + Double(j) * h, -.pi / 2), .pi / 2)
                let v = allFlows.score(direction(lon, lat))
                if v > best.score { best = (v, lon, lat) }
            }
        }
    }
    return direction(best.longitude, best.latitude)
}

/// Flows (point p, its derotated motion d, weight w) four at a time, each four stored coordinate by coordinate
/// (px ×4, py ×4, pz ×4, dx ×4, dy ×4, dz ×4, w ×4: 28 values), the last four padded with flows of no weight, for
/// ``score(_:)``.
private struct FlowColumns {
    /// The values, 28 for every four flows.
    var values: [Double] = []

    init(_ flows: [(SIMD3<Double>, SIMD3<Double>, Double)]) {
        values.reserveCapacity((flows.count + 3) / 4 * 28)
        for q in stride(from: 0, to: flows.count, by: 4) {
            for c in 0..<7 {
                for k in q..<(q + 4) {
                    // Past the last flow, padding: a unit point (so its tangent is defined) that counts for nothing.
                    guard k < flows.count else {
                        values.append(c == 2 ? 1 : 0)
                        continue
                    }
                    let (p, d, w) = flows[k]
                    values.append(c < 3 ? p[c] : c < 6 ? d[c - 3] : w)
                }
            }
        }
    }

    /// `Σ w · d·â / |â|` over the flows, â = p (p·t) − t (the tangent at p pointing away from t); flows whose
    /// |â| is under 1e−9 (p at ±t) count nothing. Each term is worked out four flows at a time; the terms are added
    /// one after another, in the flows' order (the same sum, to the last bit, as adding them one flow at a time).
    func score(_ t: SIMD3<Double>) -> Double {
        let tx = SIMD4(repeating: t.x)
        let ty = SIMD4(repeating: t.y)
        let tz = SIMD4(repeating: t.z)
        var s = 0.0
        values.withUnsafeBufferPointer { v in
            for q in stride(from: 0, to: v.count, by: 28) {
                func load(_ k: Int) -> SIMD4<Double> {
                    UnsafeRawPointer(v.baseAddress! + q + 4 * k).loadUnaligned(as: SIMD4<Double>.self)
                }
                let x = load(0)
                let y = load(1)
                let z = load(2)
                let pt = x * tx + y * ty + z * tz
                let ax = x * pt - tx
                let ay = y * pt - ty
                let az = z * pt - tz
                let l = (ax * ax + ay * ay + az * az).squareRoot()
                let dot = load(3) * ax + load(4) * ay + load(5) * az
                let valid = l .> SIMD4(repeating: 1e-9)
                // Lanes at ±t divide by nothing and are dropped (pointwiseMax is not inlined: a call a step).
                let term = load(6) * dot / l
                let terms = SIMD4<Double>().replacing(with: term, where: valid)
                s += terms[0]
                s += terms[1]
                s += terms[2]
                s += terms[3]
            }
        }
        return s
    }
}

/// The residual scale of the previous iteration, or 0.3° before there is one (radians).
@inline(__always) func scaleOrDefault(_ scale: Double) -> Double { scale > 0 ? scale : 0.3 * .pi / 180 }

@inline(__always) func cross(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> SIMD3<Double> {
    SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
}

@inline(__always) func length(_ v: SIMD3<Double>) -> Double { (v * v).sum().squareRoot() }

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/// x with h·x = g for a symmetric positive definite 3 × 3 h; nil when singular.
func solve3(_ h: [[Double]], _ g: SIMD3<Double>) -> SIMD3<Double>? {
    let a = h
    let det =
        a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
        + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
    guard abs(det) > 1e-18 else { return nil }
    func column(_ c: Int) -> [[Double]] {
        var m = a
        for r in 0..<3 { m[r][c] = g[r] }
        return m
    }
    func d(_ m: [[Double]]) -> Double {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    }
    return SIMD3(d(column(0)) / det, d(column(1)) / det, d(column(2)) / det)
}
