// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

/// What a projection table depends on. A change of camera heading on a level panorama is not part of it:
/// it is applied as a horizontal shift of the source coordinate when rendering.
struct ProjectionTableKey: Hashable, Sendable {
    var outputWidth: Int, outputHeight: Int
    var sourceWidth: Int, sourceHeight: Int
    var fov: Double, pitch: Double, roll: Double
    /// Relative yaw baked into the table; 0 for level panoramas (the yaw is a shift then).
    var bakedYaw: Double
    var panoramaTilt: Double, panoramaRoll: Double
}

/// For every output pixel, the source position it samples, in fixed point with ``fractionBits`` fractional
/// bits: `u` in `[0, (sourceWidth − 1)·256)` (wrapped), `v` clamped so every tap of the kernel lies inside the
/// image.
///
/// The ray through the centre of output pixel (i, j) is `(t·((2i+1)/W − 1), t·(H/W)·((2j+1)/H − 1), 1)` with
/// `t = tan(fov/2)` (x right, y down, z forward), rotated by the camera's pitch and roll (and the panorama's
/// correction); longitude `θ = atan2(x, z)`, latitude below the horizon `φ = atan2(y, hypot(x, z))`;
/// the source sample is `u = (θ/2π + 0.5)·(Ws − 1)`, `v = (φ/π + 0.5)·(Hs − 1)` in pixel-index coordinates
/// (pixel centres at whole numbers): longitude −180° is the centre of the first column and +180° the centre of
/// the last, the poles the centres of the first and last rows. These are the formulas of ffmpeg 5.1's `v360`
/// filter (`flat_to_xyz`, `xyz_to_equirect` and its `scale`/`rescale` helpers in libavfilter/vf_v360.c),
/// checked against the ffmpeg CLI to within its 14-bit weights. Horizontally the picture repeats every
/// `Ws − 1` columns, so a heading change is a shift modulo `Ws − 1`.
final class ProjectionTable: Sendable {
    static let fractionBits: UInt32 = 8
    static let one: Int32 = 1 << 8

    let key: ProjectionTableKey
    /// Fixed-point source columns, `outputWidth × outputHeight`, in `[0, (sourceWidth − 1)·256)`.
    let u: [UInt32]
    /// Fixed-point source rows, `outputWidth × outputHeight`.
    let v: [Int32]

    init(key: ProjectionTableKey) {
        self.key = key
        let ow = key.outputWidth, oh = key.outputHeight
        let t = tan(radians(key.fov / 2))
        let tv = t * Double(oh) / Double(ow)
        // pano-from-camera: Rr(−panoRoll)·Rp(−tilt)·Ry(yaw)·Rp(pitch)·Rr(roll).
        let m = Rotation.roll(-key.panoramaRoll) * Rotation.pitch(-key.panoramaTilt)
            * Rotation.camera(yaw: key.bakedYaw, pitch: key.pitch, roll: key.roll)
        let uScale = Float(Double(key.sourceWidth - 1) * Double(Self.one) / (2 * .pi))
        let uOffset = Float(Double(key.sourceWidth - 1) * Double(Self.one) / 2)
        let vScale = Float(Double(key.sourceHeight - 1) * Double(Self.one) / .pi)
        let vOffset = Float(Double(key.sourceHeight - 1) * Double(Self.one) / 2)
        let wrap = Int32(key.sourceWidth - 1) << 8
        // Bilinear reads rows y0 and y0 + 1: keep v 1/256 px above the last row so y0 + 1 exists.
        let vMax = Int32(key.sourceHeight - 1) * Self.one - 1
        var us = [UInt32](repeating: 0, count: ow * oh)
        var vs = [Int32](repeating: 0, count: ow * oh)
        us.withUnsafeMutableBufferPointer { ub in
            vs.withUnsafeMutableBufferPointer { vb in
                // Safe to share: each band writes only its own rows of both tables.
                nonisolated(unsafe) let uBase = ub.baseAddress!
                nonisolated(unsafe) let vBase = vb.baseAddress!
                RowBands.run(rows: oh) { rows in
                    for j in rows {
                        let y = tv * (Double(2 * j + 1) / Double(oh) - 1)
                        // d = m·(x, y, 1) = x·column0 + (y·column1 + column2)
                        Self.row(u: uBase + j * ow, v: vBase + j * ow, count: ow,
                                 a: SIMD3<Float>(Float(m.r0.x), Float(m.r1.x), Float(m.r2.x)),
                                 c: SIMD3<Float>(Float(m.r0.y * y + m.r0.z), Float(m.r1.y * y + m.r1.z), Float(m.r2.y * y + m.r2.z)),
                                 xStart: Float(t * (1 / Double(ow) - 1)), xStep: Float(2 * t / Double(ow)),
                                 uScale: uScale, uOffset: uOffset, vScale: vScale, vOffset: vOffset, wrap: wrap, vMax: vMax)
                    }
                }
            }
        }
        u = us
        v = vs
    }
}

extension ProjectionTable {
    /// One row of the table in Float arithmetic, branch-free so the compiler vectorises it (measured: 1280×720
    /// in ~16 ms a core, against ~70 ms with Double and libm's atan2).
    @inline(__always)
    static func row(u: UnsafeMutablePointer<UInt32>, v: UnsafeMutablePointer<Int32>, count: Int,
                    a: SIMD3<Float>, c: SIMD3<Float>, xStart: Float, xStep: Float,
                    uScale: Float, uOffset: Float, vScale: Float, vOffset: Float, wrap: Int32, vMax: Int32) {
        let ax = a.x, ay = a.y, az = a.z, cx = c.x, cy = c.y, cz = c.z
        for i in 0..<count {
            let x = Float(i) * xStep + xStart
            let dx = ax * x + cx, dy = ay * x + cy, dz = az * x + cz
            let theta = atan2(dx, dz)
            let phi = atan2(dy, (dx * dx + dz * dz).squareRoot())
            // Round to whole 1/256 px with the 2²³ trick (the values are below 2²³): after adding 2²³ the
            // mantissa holds the rounded integer.
            let uf = max(theta * uScale + uOffset, 0) + 8_388_608
            var ui = Int32(bitPattern: uf.bitPattern & 0x7F_FFFF)
            ui = ui >= wrap ? ui &- wrap : ui
            let vf = max(phi * vScale + vOffset, 0) + 8_388_608
            u[i] = UInt32(bitPattern: ui)
            v[i] = min(Int32(bitPattern: vf.bitPattern & 0x7F_FFFF), vMax)
        }
    }

    /// atan2 within 3·10⁻⁷ rad (plus Float rounding): octant reduction to atan(a), a = min/max in [0, 1],
    /// then an odd polynomial a·P(a²) of degree 13 (coefficients fitted to atan on [0, 1] by
    /// Chebyshev-weighted least squares; max error 2.5·10⁻⁷ rad, 0.0002 px on a 4096-wide panorama).
    /// atan2(0, 0) is 0.
    @inline(__always)
    static func atan2(_ y: Float, _ x: Float) -> Float {
        let ax = abs(x), ay = abs(y)
        let hi = max(ax, ay), lo = min(ax, ay)
        let a = hi == 0 ? 0 : lo / hi
        let s = a * a
        var p: Float = 0.0068117926
        p = p * s - 0.0336042191
        p = p * s + 0.0796236719
        p = p * s - 0.132333422
        p = p * s + 0.198078156
        p = p * s - 0.333173681
        p = p * s + 0.999996112
        var r = a * p
        r = ay > ax ? Float.pi / 2 - r : r
        r = x < 0 ? Float.pi - r : r
        return y < 0 ? -r : r
    }
}

/// Splits rows into bands and runs them across the cores with `DispatchQueue.concurrentPerform`.
enum RowBands {
    /// Number of cores to use (at least 1).
    static let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)

    /// Calls `body` with disjoint, consecutive row ranges covering `0..<rows`, in parallel.
    /// Several bands per core balance uneven work (e.g. other processes on the machine).
    static func run(rows: Int, _ body: @Sendable (Range<Int>) -> Void) {
        let bands = min(rows, cores == 1 ? 1 : cores * 4)
        if bands <= 1 {
            body(0..<rows)
            return
        }
        DispatchQueue.concurrentPerform(iterations: bands) { b in
            body((rows * b / bands)..<(rows * (b + 1) / bands))
        }
    }

    /// Output tile size for the sampling loops: a tile's source footprint stays in the L1/L2 cache, where a
    /// whole output row would sweep a curve across hundreds of source rows (measured: ~2× faster).
    static let tileWidth = 64, tileHeight = 16

    /// Visits `rows × 0..<width` tile by tile: calls `body(row, columns)` for each row segment of a tile.
    @inline(__always)
    static func tiles(rows: Range<Int>, width: Int, _ body: (Int, Range<Int>) -> Void) {
        var top = rows.lowerBound
        while top < rows.upperBound {
            let bottom = min(top + tileHeight, rows.upperBound)
            var left = 0
            while left < width {
                let right = min(left + tileWidth, width)
                for j in top..<bottom { body(j, left..<right) }
                left = right
            }
            top = bottom
        }
    }
}
