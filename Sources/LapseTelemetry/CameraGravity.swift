// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

/// Which way gravity pulled, as a camera measured it at a time of its video.
public struct CameraGravity: Sendable, Equatable {
    /// Seconds from the video's start.
    public var time: Double
    /// Unit vector of gravity's direction in the camera's frame: x to the picture's right, y down it, z out of
    /// the lens (GoPro's `GRAV` as its cameras write it: an upright camera reads about (0, 1, 0)).
    @StoredAsDoubles public var vector: SIMD3<Double>

    /// Gravity at `time` seconds from the video's start: `vector`, a unit vector in the camera's frame.
    public init(time: Double, vector: SIMD3<Double>) {
        self.time = time
        self.vector = vector
    }

    /// The camera's tilt and roll in degrees as ``LapseRender/PanoramaPose`` has them (tilt: how far the forward
    /// axis is pitched up; roll: about the forward axis): the world's up is −vector in the camera frame, so
    /// tilt = asin(−z) and roll = atan2(x, y).
    public var level: (tilt: Double, roll: Double) {
        let g = vector / max(1e-12, (vector * vector).sum().squareRoot())
        return (asin(min(1, max(-1, -g.z))) * 180 / .pi, atan2(g.x, g.y) * 180 / .pi)
    }
}

extension GPMF {
    /// The gravity vectors in one payload whose samples span `start` … `start + duration` seconds of the video:
    /// every `GRAV` sample (HERO8 and later, MAX: one a frame, int16 scaled by `SCAL`), made unit length and
    /// spread evenly over the span. Vectors of no length are left out.
    /// - Throws: ``LapseError`` `.invalidInput` for a payload that does not parse (see ``parse(_:)``).
    public static func gravity(in payload: [UInt8], start: Double, duration: Double) throws -> [CameraGravity] {
        gravity(inStreams: streams(try parse(payload)), start: start, duration: duration)
    }

    /// ``gravity(in:start:duration:)`` of a payload's streams, parsed already.
    static func gravity(inStreams streams: [Item], start: Double, duration: Double) -> [CameraGravity] {
        var out: [CameraGravity] = []
        for stream in streams {
            guard let grav = stream.item("GRAV") else { continue }
            let values = scaled(grav.numbers(), in: stream)
            let n = values.count / 3
            for i in 0..<n {
                let v = SIMD3(values[3 * i], values[3 * i + 1], values[3 * i + 2])
                let length = (v * v).sum().squareRoot()
                guard length.isFinite, length > 1e-6 else { continue }
                out.append(CameraGravity(time: start + duration * Double(i) / Double(n), vector: v / length))
            }
        }
        return out
    }
}
