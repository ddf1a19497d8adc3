// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

/// One orientation per panorama of a sequence from all the evidence, each trusted by its uncertainty: the
/// rotations measured between consecutive panoramas (``PairMotion``), compass headings (the source's metadata,
/// or the track's bearing along the direction of travel), and the level (the source's tilt and roll, or the
/// prior that the camera is upright).
///
/// An error-state Kalman filter on the rotation group with a Rauch–Tung–Striebel smoother over a fixed lag
/// (H. E. Rauch, F. Tung, C. T. Striebel, "Maximum likelihood estimates of linear dynamic systems", AIAA J. 3(8),
/// 1965; the multiplicative error state as in F. L. Markley, "Attitude error representations for Kalman
/// filtering", J. Guidance 26(2), 2003): the state is the world-from-panorama rotation `R`, its error a small
/// rotation `δ` in the world frame (`R_true = exp(δ)·R`). A measured motion predicts `R_{i+1} = R_i·Mᵀ`,
/// adding its uncertainty; headings and the level correct it. Frame `i` is final once frame `i + lag` has been
/// added (or the sequence has ended): so the orientations stream with memory bounded by the lag, and every
/// frame is informed by `lag` frames on either side.
public struct OrientationSmoother: Sendable {
    /// A compass heading of a direction fixed in the panorama.
    public struct Heading: Sendable {
        /// The direction in the panorama's frame (x right, y down, z the centre column), unit length.
        @StoredAsDoubles package var direction: SIMD3<Double>
        /// Its compass heading, degrees.
        public var heading: Double
        /// One standard deviation, degrees.
        public var sigma: Double
        /// Left out when it differs from the orientation predicted by more than this (degrees) and by more than
        /// three standard deviations of the difference expected: an outlier.
        public var gate: Double?
        /// The direction's elevation above the world's horizon (degrees) and one standard deviation of it, when
        /// known (the direction of travel on a road: 0, give or take the road's grade); `gate` applies to it too.
        public var elevation: Double?
        /// How sure ``elevation`` is, degrees (one standard deviation).
        public var elevationSigma: Double

        /// The heading of the centre column.
        public init(centre heading: Double, sigma: Double) {
            self.init(direction: SIMD3(0, 0, 1), heading: heading, sigma: sigma)
        }

        package init(
            direction: SIMD3<Double>, heading: Double, sigma: Double, gate: Double? = nil,
            elevation: Double? = nil, elevationSigma: Double = 5
        ) {
            self.direction = direction
            self.heading = heading
            self.sigma = sigma
            self.gate = gate
            self.elevation = elevation
            self.elevationSigma = elevationSigma
        }
    }

    /// What is known of one panorama.
    public struct Evidence: Sendable {
        /// The motion measured from the previous panorama to this one (nil for the first, or when none was measured).
        public var motion: PairMotion?
        /// Compass headings of directions in the picture (the direction of travel, the centre column), with their
        /// noise.
        public var headings: [Heading]
        /// Where the world's up lies in the panorama's frame (unit; `(0, −1, 0)` for an upright camera) and how
        /// sure that is (degrees).
        @StoredAsDoubles package var up: SIMD3<Double>
        /// How sure the level evidence is, degrees (one standard deviation).
        public var levelSigma: Double

        /// Evidence of one frame.
        /// - Parameters:
        ///   - motion: the motion measured from the previous panorama (nil for the first, or when none was).
        ///   - headings: compass headings of directions in the picture, with their noise.
        ///   - tilt: the panorama's tilt (degrees, as ``PanoramaPose``), 0 for an upright camera.
        ///   - roll: the panorama's roll (degrees), 0 for an upright camera.
        ///   - levelSigma: how sure `tilt` and `roll` are, degrees (one standard deviation).
        public init(motion: PairMotion?, headings: [Heading], tilt: Double = 0, roll: Double = 0, levelSigma: Double) {
            self.motion = motion
            self.headings = headings
            // World-from-panorama of a level camera at heading 0: pitch(tilt)·roll(roll); world up (0, −1, 0).
            up = (Rotation.pitch(tilt) * Rotation.roll(roll)).transposed * SIMD3(0, -1, 0)
            self.levelSigma = levelSigma
        }
    }

    /// Frames each orientation waits for before it is final.
    public let lag: Int
    /// Uncertainty (degrees) of the turn between two panoramas when it could not be measured.
    public let unmeasuredTurn: Double

    private struct Step: Sendable {
        var filtered: Rotation
        var covariance: Matrix3
        /// The prediction of this frame from the previous filtered one (unused for the first frame).
        var predicted: Rotation
        var predictedCovariance: Matrix3
    }

    /// Frames not yet final, from frame `first` on.
    private var steps: [Step] = []
    /// The newest frame's filtered state (kept when it is already final, with a lag of 0).
    private var newest: Step?
    private var first = 0
    private var settled: [Rotation] = []
    private var ended = false

    /// A smoother that holds back `lag` frames before posing one, and takes the turn of a pair that could not be
    /// measured as uncertain by `unmeasuredTurn` degrees (one standard deviation; not a limit).
    public init(lag: Int = 60, unmeasuredTurn: Double = 20) {
        self.lag = max(0, lag)
        self.unmeasuredTurn = unmeasuredTurn
    }

    /// Frames added so far.
    public var count: Int { first + steps.count }

    /// Adds the next panorama's evidence. The first panorama needs a heading.
    public mutating func add(_ evidence: Evidence) {
        precondition(!ended, "evidence added after finish()")
        var state: Rotation
        var covariance: Matrix3
        var predicted: Rotation
        var predictedCovariance: Matrix3
        var headings = evidence.headings
        if let last = newest {
            let (turn, sigma) =
                evidence.motion.map { ($0.rotation.transposed, $0.uncertainty) }
                ?? (Rotation.identity, unmeasuredTurn)
            predicted = (last.filtered * turn).orthonormalized
            predictedCovariance = last.covariance + Matrix3.identity * Self.variance(sigma)
            state = predicted
            covariance = predictedCovariance
        } else {
            // Upright (the up evidence turned onto the world's up), then turned to the first heading.
            let level = Self.rotation(taking: evidence.up, to: SIMD3(0, -1, 0))
            var yaw = 0.0
            var sigma = 180.0
            if let h = headings.first {
                let f = level * h.direction
                yaw = h.heading - atan2(f.x, f.z) * 180 / .pi
                sigma = h.sigma
                headings.removeFirst()
            }
            state = Rotation.yaw(yaw) * level
            let l = Self.variance(evidence.levelSigma)
            covariance = Matrix3(diagonal: SIMD3(l, Self.variance(sigma), l))
            if let h = evidence.headings.first { Self.updateElevation(&state, &covariance, h) }
            predicted = state
            predictedCovariance = covariance
        }
        for h in headings { Self.updateHeading(&state, &covariance, h) }
        // (The first frame's level was set from the same evidence.)
        if newest != nil { Self.updateLevel(&state, &covariance, up: evidence.up, sigma: evidence.levelSigma) }
        newest = Step(
            filtered: state, covariance: covariance, predicted: predicted, predictedCovariance: predictedCovariance)
        steps.append(newest!)
        while steps.count > lag { settleFirst() }
    }

    /// No more frames: every orientation is final.
    public mutating func finish() {
        ended = true
        while !steps.isEmpty { settleFirst() }
    }

    /// The orientations (world from panorama) that became final since the last call, in frame order.
    package mutating func takeSettled() -> [Rotation] {
        defer { settled.removeAll() }
        return settled
    }

    /// Smooths back from the newest frame to the oldest one kept and makes the oldest final.
    private mutating func settleFirst() {
        var next = steps[steps.count - 1].filtered
        var nextCovariance = steps[steps.count - 1].covariance
        for k in stride(from: steps.count - 2, through: 0, by: -1) {
            let s = steps[k]
            let after = steps[k + 1]
            let gain = s.covariance * after.predictedCovariance.inverse
            let correction = gain * (next * after.predicted.transposed).log
            next = (Rotation.exp(correction) * s.filtered).orthonormalized
            nextCovariance = s.covariance + gain * (nextCovariance - after.predictedCovariance) * gain.transposed
        }
        settled.append(next)
        steps.removeFirst()
        first += 1
    }

    // MARK: Updates

    static func variance(_ degrees: Double) -> Double {
        let r = degrees * .pi / 180
        return r * r
    }

    /// The heading of `R·direction` towards `h.heading` (and its elevation towards `h.elevation`).
    static func updateHeading(_ state: inout Rotation, _ covariance: inout Matrix3, _ h: Heading) {
        let f = state * h.direction
        let d = f.x * f.x + f.z * f.z
        guard d > 0.05 else { return } // nearly vertical: no heading
        var innovation = (h.heading * .pi / 180 - atan2(f.x, f.z)).truncatingRemainder(dividingBy: 2 * .pi)
        if innovation > .pi { innovation -= 2 * .pi } else if innovation < -.pi { innovation += 2 * .pi }
        // ∂heading/∂δ for f' = f + δ × f.
        let jacobian = SIMD3(-f.x * f.y / d, 1, -f.y * f.z / d)
        if let gate = h.gate {
            // An outlier lies beyond the gate and three standard deviations of what is expected.
            let expected = ((jacobian * (covariance * jacobian)).sum() + variance(h.sigma)).squareRoot()
            if abs(innovation) > max(gate * .pi / 180, 3 * expected) { return }
        }
        update(&state, &covariance, jacobian, innovation, variance(h.sigma))
        updateElevation(&state, &covariance, h)
    }

    /// The elevation of `R·direction` towards `h.elevation`, if it has one.
    static func updateElevation(_ state: inout Rotation, _ covariance: inout Matrix3, _ h: Heading) {
        guard let elevation = h.elevation else { return }
        // ∂elevation/∂δ for f' = f + δ × f (elevation = asin(−f.y), y down).
        let g = state * h.direction
        let gd = g.x * g.x + g.z * g.z
        guard gd > 0.05 else { return }
        let y = elevation * .pi / 180 - asin(min(1, max(-1, -g.y)))
        let gj = SIMD3(g.z, 0, -g.x) / gd.squareRoot()
        if let gate = h.gate {
            let expected = ((gj * (covariance * gj)).sum() + variance(h.elevationSigma)).squareRoot()
            if abs(y) > max(gate * .pi / 180, 3 * expected) { return }
        }
        update(&state, &covariance, gj, y, variance(h.elevationSigma))
    }

    /// `R·up` towards the world's up (0, −1, 0): its x and z components towards 0.
    static func updateLevel(_ state: inout Rotation, _ covariance: inout Matrix3, up: SIMD3<Double>, sigma: Double) {
        var u = state * up
        update(&state, &covariance, SIMD3(0, u.z, -u.y), -u.x, variance(sigma))
        u = state * up
        update(&state, &covariance, SIMD3(u.y, -u.x, 0), -u.z, variance(sigma))
    }

    /// One scalar measurement: innovation `y` with Jacobian `h` (per unit of δ) and noise variance `r`.
    static func update(
        _ state: inout Rotation, _ covariance: inout Matrix3, _ h: SIMD3<Double>, _ y: Double, _ r: Double
    ) {
        let ph = covariance * h
        let s = (h * ph).sum() + r
        guard s > 0 else { return }
        let gain = ph / s
        state = (Rotation.exp(gain * y) * state).orthonormalized
        covariance = (covariance - Matrix3(outer: gain, ph)).symmetrized
    }

    /// The smallest rotation taking unit vector `a` onto unit vector `b`.
    static func rotation(taking a: SIMD3<Double>, to b: SIMD3<Double>) -> Rotation {
        let axis = cross(a, b)
        let s = length(axis)
        let c = (a * b).sum()
        guard s > 1e-12 else { return c > 0 ? .identity : Rotation.exp(SIMD3(.pi, 0, 0)) }
        return Rotation.exp(axis / s * atan2(s, c))
    }
}

/// A 3 × 3 matrix of covariances and gains (rows).
struct Matrix3: Sendable {
    @StoredAsDoubles var r0: SIMD3<Double>
    @StoredAsDoubles var r1: SIMD3<Double>
    @StoredAsDoubles var r2: SIMD3<Double>

    static let identity = Matrix3(diagonal: SIMD3(1, 1, 1))

    init(r0: SIMD3<Double>, r1: SIMD3<Double>, r2: SIMD3<Double>) {
        self.r0 = r0
        self.r1 = r1
        self.r2 = r2
    }
    init(diagonal d: SIMD3<Double>) { self.init(r0: SIMD3(d.x, 0, 0), r1: SIMD3(0, d.y, 0), r2: SIMD3(0, 0, d.z)) }
    /// `a·bᵀ`.
    init(outer a: SIMD3<Double>, _ b: SIMD3<Double>) { self.init(r0: a.x * b, r1: a.y * b, r2: a.z * b) }

    var transposed: Matrix3 {
        Matrix3(r0: SIMD3(r0.x, r1.x, r2.x), r1: SIMD3(r0.y, r1.y, r2.y), r2: SIMD3(r0.z, r1.z, r2.z))
    }
    var symmetrized: Matrix3 { (self + transposed) * 0.5 }

    var inverse: Matrix3 {
        let c0 = cross(r1, r2)
        let c1 = cross(r2, r0)
        let c2 = cross(r0, r1)
        let det = (r0 * c0).sum()
        return Matrix3(r0: c0, r1: c1, r2: c2).transposed * (1 / det)
    }

    static func + (a: Matrix3, b: Matrix3) -> Matrix3 { Matrix3(r0: a.r0 + b.r0, r1: a.r1 + b.r1, r2: a.r2 + b.r2) }
    static func - (a: Matrix3, b: Matrix3) -> Matrix3 { Matrix3(r0: a.r0 - b.r0, r1: a.r1 - b.r1, r2: a.r2 - b.r2) }
    static func * (a: Matrix3, s: Double) -> Matrix3 { Matrix3(r0: a.r0 * s, r1: a.r1 * s, r2: a.r2 * s) }
    static func * (a: Matrix3, v: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3((a.r0 * v).sum(), (a.r1 * v).sum(), (a.r2 * v).sum())
    }
    static func * (a: Matrix3, b: Matrix3) -> Matrix3 {
        let bt = b.transposed
        func row(_ r: SIMD3<Double>) -> SIMD3<Double> { SIMD3((r * bt.r0).sum(), (r * bt.r1).sum(), (r * bt.r2).sum()) }
        return Matrix3(r0: row(a.r0), r1: row(a.r1), r2: row(a.r2))
    }
}
