// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

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
        let sw = Double(key.sourceWidth), sh = Double(key.sourceHeight)
        let t = tan(radians(key.fov / 2))
        let tv = t * Double(oh) / Double(ow)
        // pano-from-camera: Rr(−panoRoll)·Rp(−tilt)·Ry(yaw)·Rp(pitch)·Rr(roll).
        let m = Rotation.roll(-key.panoramaRoll) * Rotation.pitch(-key.panoramaTilt)
            * Rotation.camera(yaw: key.bakedYaw, pitch: key.pitch, roll: key.roll)
        let wrap = Int64(key.sourceWidth - 1) << 8
        let scale = Double(Self.one)
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
                        for i in 0..<ow {
                            let x = t * (Double(2 * i + 1) / Double(ow) - 1)
                            let d = m * SIMD3<Double>(x, y, 1)
                            let theta = atan2(d.x, d.z)
                            let phi = atan2(d.y, (d.x * d.x + d.z * d.z).squareRoot())
                            let uf = (theta / (2 * .pi) + 0.5) * (sw - 1)
                            let vf = (phi / .pi + 0.5) * (sh - 1)
                            var ui = Int64((uf * scale).rounded()) % wrap
                            if ui < 0 { ui += wrap }
                            let vi = Int32((vf * scale).rounded())
                            uBase[j * ow + i] = UInt32(ui)
                            vBase[j * ow + i] = min(max(vi, 0), vMax)
                        }
                    }
                }
            }
        }
        u = us
        v = vs
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
