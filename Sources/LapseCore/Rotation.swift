// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A 3×3 rotation matrix acting on direction vectors in the projection's frame: x right, y down, z forward
/// (the frame of ffmpeg's `v360`). Rows are stored as `SIMD3<Double>`. Angles in degrees.
///
/// A panorama posed (heading, tilt, roll) has the world-from-panorama rotation `yaw(heading)·pitch(tilt)·roll(roll)`
/// (see `PanoramaPose`); a camera (heading, pitch, roll) has `yaw(heading)·pitch(pitch)·roll(roll)`. "World" is
/// level with z towards north and x towards east.
package struct Rotation: Equatable, Sendable {
    // Rows stored as plain Doubles (``StoredAsDoubles``: no 32-byte vector in a stored property).
    @StoredAsDoubles package var r0: SIMD3<Double>
    @StoredAsDoubles package var r1: SIMD3<Double>
    @StoredAsDoubles package var r2: SIMD3<Double>

    package init(r0: SIMD3<Double>, r1: SIMD3<Double>, r2: SIMD3<Double>) {
        self.r0 = r0
        self.r1 = r1
        self.r2 = r2
    }

    package static let identity = Rotation(r0: [1, 0, 0], r1: [0, 1, 0], r2: [0, 0, 1])

    /// Turn about the vertical axis by `degrees`; positive turns forward towards the right (east of north).
    package static func yaw(_ degrees: Double) -> Rotation {
        let c = cos(degrees * .pi / 180)
        let s = sin(degrees * .pi / 180)
        return Rotation(r0: [c, 0, s], r1: [0, 1, 0], r2: [-s, 0, c])
    }

    /// Turn about the horizontal (x) axis by `degrees`; positive turns forward upwards.
    package static func pitch(_ degrees: Double) -> Rotation {
        let c = cos(degrees * .pi / 180)
        let s = sin(degrees * .pi / 180)
        return Rotation(r0: [1, 0, 0], r1: [0, c, -s], r2: [0, s, c])
    }

    /// Turn about the forward (z) axis by `degrees`; positive turns right downwards (clockwise from behind).
    package static func roll(_ degrees: Double) -> Rotation {
        let c = cos(degrees * .pi / 180)
        let s = sin(degrees * .pi / 180)
        return Rotation(r0: [c, -s, 0], r1: [s, c, 0], r2: [0, 0, 1])
    }

    /// Camera-to-world rotation for yaw, then pitch, then roll (ffmpeg `v360` rotation order `ypr`).
    package static func camera(yaw: Double, pitch: Double, roll: Double) -> Rotation {
        Rotation.yaw(yaw) * Rotation.pitch(pitch) * Rotation.roll(roll)
    }

    /// The rotation by `|v|` radians about the axis `v` (right-handed in this frame; Rodrigues' formula).
    package static func exp(_ v: SIMD3<Double>) -> Rotation {
        let angle = (v * v).sum().squareRoot()
        guard angle > 1e-15 else {
            return Rotation(r0: [1, -v.z, v.y], r1: [v.z, 1, -v.x], r2: [-v.y, v.x, 1]).orthonormalized
        }
        let k = v / angle
        let c = cos(angle)
        let s = sin(angle)
        let t = 1 - c
        return Rotation(
            r0: [t * k.x * k.x + c, t * k.x * k.y - s * k.z, t * k.x * k.z + s * k.y],
            r1: [t * k.x * k.y + s * k.z, t * k.y * k.y + c, t * k.y * k.z - s * k.x],
            r2: [t * k.x * k.z - s * k.y, t * k.y * k.z + s * k.x, t * k.z * k.z + c])
    }

    /// The axis-angle vector (radians) of this rotation: `Rotation.exp(r.log) == r`.
    package var log: SIMD3<Double> {
        let trace = r0.x + r1.y + r2.z
        let c = min(1, max(-1, (trace - 1) / 2))
        let angle = acos(c)
        let w = SIMD3<Double>(r2.y - r1.z, r0.z - r2.x, r1.x - r0.y)
        if angle < 1e-9 { return w / 2 }
        if angle < .pi - 1e-6 { return w * (angle / (2 * sin(angle))) }
        // Near 180°: the axis from the diagonal (the column of the largest diagonal element of (R + I)/2).
        let d = SIMD3<Double>(r0.x, r1.y, r2.z)
        var axis: SIMD3<Double>
        if d.x >= d.y && d.x >= d.z {
            axis = [(d.x + 1) / 2, (r0.y + r1.x) / 4, (r0.z + r2.x) / 4]
        } else if d.y >= d.z {
            axis = [(r0.y + r1.x) / 4, (d.y + 1) / 2, (r1.z + r2.y) / 4]
        } else {
            axis = [(r0.z + r2.x) / 4, (r1.z + r2.y) / 4, (d.z + 1) / 2]
        }
        axis /= (axis * axis).sum().squareRoot()
        if (axis * w).sum() < 0 { axis = -axis }
        return axis * angle
    }

    /// The rotation angle in degrees, 0…180.
    package var angle: Double {
        let w = SIMD3<Double>(r2.y - r1.z, r0.z - r2.x, r1.x - r0.y)
        return atan2((w * w).sum().squareRoot() / 2, (r0.x + r1.y + r2.z - 1) / 2) * 180 / .pi
    }

    /// (yaw, pitch, roll) in degrees with `self == camera(yaw:pitch:roll:)`: yaw in (−180, 180], pitch in
    /// [−90, 90].
    package var yawPitchRoll: (yaw: Double, pitch: Double, roll: Double) {
        // self·(0,0,1) = (cos p · sin y, −sin p, cos p · cos y); self·(1,0,0)'s y component = cos p · sin r.
        let f = SIMD3<Double>(r0.z, r1.z, r2.z)
        let pitch = asin(min(1, max(-1, -f.y)))
        let yaw = atan2(f.x, f.z)
        let roll = atan2(r1.x, r1.y)
        return (yaw * 180 / .pi, pitch * 180 / .pi, roll * 180 / .pi)
    }

    package var transposed: Rotation {
        Rotation(r0: [r0.x, r1.x, r2.x], r1: [r0.y, r1.y, r2.y], r2: [r0.z, r1.z, r2.z])
    }

    /// The nearest rotation (Gram–Schmidt on the rows), to remove rounding drift after many products.
    package var orthonormalized: Rotation {
        let a = r0 / (r0 * r0).sum().squareRoot()
        var b = r1 - a * (a * r1).sum()
        b /= (b * b).sum().squareRoot()
        let c = SIMD3<Double>(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
        return Rotation(r0: a, r1: b, r2: c)
    }

    package static func * (a: Rotation, b: Rotation) -> Rotation {
        let bt = b.transposed
        func row(_ r: SIMD3<Double>) -> SIMD3<Double> {
            [(r * bt.r0).sum(), (r * bt.r1).sum(), (r * bt.r2).sum()]
        }
        return Rotation(r0: row(a.r0), r1: row(a.r1), r2: row(a.r2))
    }

    package static func * (a: Rotation, v: SIMD3<Double>) -> SIMD3<Double> {
        [(a.r0 * v).sum(), (a.r1 * v).sum(), (a.r2 * v).sum()]
    }
}
