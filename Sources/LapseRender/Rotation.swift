// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// A 3×3 rotation matrix acting on direction vectors in the projection's frame: x right, y down, z forward
/// (the frame of ffmpeg's `v360`). Rows are stored as `SIMD3<Double>`.
struct Rotation: Equatable {
    var r0: SIMD3<Double>, r1: SIMD3<Double>, r2: SIMD3<Double>

    static let identity = Rotation(r0: [1, 0, 0], r1: [0, 1, 0], r2: [0, 0, 1])

    /// Turn about the vertical axis by `degrees`; positive turns forward towards the right (east of north).
    static func yaw(_ degrees: Double) -> Rotation {
        let c = cos(radians(degrees)), s = sin(radians(degrees))
        return Rotation(r0: [c, 0, s], r1: [0, 1, 0], r2: [-s, 0, c])
    }

    /// Turn about the horizontal (x) axis by `degrees`; positive turns forward upwards.
    static func pitch(_ degrees: Double) -> Rotation {
        let c = cos(radians(degrees)), s = sin(radians(degrees))
        return Rotation(r0: [1, 0, 0], r1: [0, c, -s], r2: [0, s, c])
    }

    /// Turn about the forward (z) axis by `degrees`; positive turns right downwards (clockwise from behind).
    static func roll(_ degrees: Double) -> Rotation {
        let c = cos(radians(degrees)), s = sin(radians(degrees))
        return Rotation(r0: [c, -s, 0], r1: [s, c, 0], r2: [0, 0, 1])
    }

    /// Camera-to-world rotation for yaw, then pitch, then roll (ffmpeg `v360` rotation order `ypr`).
    static func camera(yaw: Double, pitch: Double, roll: Double) -> Rotation {
        Rotation.yaw(yaw) * Rotation.pitch(pitch) * Rotation.roll(roll)
    }

    var transposed: Rotation {
        Rotation(r0: [r0.x, r1.x, r2.x], r1: [r0.y, r1.y, r2.y], r2: [r0.z, r1.z, r2.z])
    }

    static func * (a: Rotation, b: Rotation) -> Rotation {
        let bt = b.transposed
        func row(_ r: SIMD3<Double>) -> SIMD3<Double> {
            [(r * bt.r0).sum(), (r * bt.r1).sum(), (r * bt.r2).sum()]
        }
        return Rotation(r0: row(a.r0), r1: row(a.r1), r2: row(a.r2))
    }

    static func * (a: Rotation, v: SIMD3<Double>) -> SIMD3<Double> {
        [(a.r0 * v).sum(), (a.r1 * v).sum(), (a.r2 * v).sum()]
    }
}
