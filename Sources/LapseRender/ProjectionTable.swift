// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import Synchronization

/// What a projection table depends on. A change of camera heading on a level panorama is not part of it:
/// it is applied as a horizontal shift of the source coordinate when rendering.
struct ProjectionTableKey: Hashable, Sendable {
    var outputWidth: Int, outputHeight: Int
    var sourceWidth: Int, sourceHeight: Int
    var fov: Double, pitch: Double, roll: Double
    /// Relative yaw baked into the table; 0 for level panoramas (the yaw is a shift then).
    var bakedYaw: Double
    var panoramaTilt: Double, panoramaRoll: Double
    /// The panorama's projection.
    var source: SourceProjection = .equirectangular
}

/// What a panorama given to ``Projector`` is.
public enum SourceProjection: Sendable, Hashable {
    /// An equirectangular picture (2:1 for a whole sphere).
    case equirectangular
    /// The atlas of a GoPro MAX `.360` file's two streams, the first above the second (``GoProEAC``), of that size
    /// or a scale of it (a 4:2:0 chroma plane).
    case goproEAC(GoProEAC)
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
    /// Where `u` and then `v` lie (``TableMemory``: one block of `8 · count` bytes).
    private let memory: BlockPool.Block
    /// Output pixels: `outputWidth × outputHeight`.
    var count: Int { key.outputWidth * key.outputHeight }

    /// Fixed-point source columns, `count` of them, in `[0, (sourceWidth − 1)·256)`. Valid while the table is.
    var u: UnsafeBufferPointer<UInt32> {
        UnsafeBufferPointer(start: UnsafeRawPointer(memory.base).assumingMemoryBound(to: UInt32.self), count: count)
    }
    /// Fixed-point source rows, `count` of them. Valid while the table is.
    var v: UnsafeBufferPointer<Int32> {
        UnsafeBufferPointer(
            start: UnsafeRawPointer(memory.base + 4 * count).assumingMemoryBound(to: Int32.self), count: count)
    }

    /// `body` with the columns and rows, the table kept alive while it runs.
    func withTaps<R>(_ body: (UnsafeBufferPointer<UInt32>, UnsafeBufferPointer<Int32>) throws -> R) rethrows -> R {
        try withExtendedLifetime(self) { try body(u, v) }
    }

    deinit { TableMemory.blocks.give(memory) }

    /// Spacing (output pixels) of the grid on which the mapping is computed exactly; between its points it is
    /// interpolated bilinearly (see ``init(key:exact:)``).
    static let gridStep = 8
    /// Largest error of the interpolated mapping a cell may have at its centre, in 1/256 source pixels; a cell
    /// with more (near a pole, where longitude turns fast) is computed pixel by pixel.
    static let gridTolerance: Float = 4

    /// The table of `key`.
    /// - Parameters:
    ///   - key: the source and output sizes, the pose and camera the table maps.
    ///   - exact: compute every pixel's source position (for comparison); by default the mapping is
    ///     computed exactly on a grid every ``gridStep`` output pixels and interpolated bilinearly between, and
    ///     every cell whose centre the interpolation misses by more than ``gridTolerance`` (1/64 px), that reaches
    ///     within 21° of a pole or that straddles the seam is computed exactly. The mapping's curvature over 8
    ///     pixels of a 90° view moves a sample by about 0.004 source pixels, so the two tables agree to within
    ///     their rounding (a few 1/256 px) while the grid's costs about a third of the time (a stabilised
    ///     hyperlapse needs a table a frame).
    init(key: ProjectionTableKey, exact: Bool = false) {
        self.key = key
        let ow = key.outputWidth
        let oh = key.outputHeight
        let t = tan(radians(key.fov / 2))
        let tv = t * Double(oh) / Double(ow)
        // pano-from-camera: Rr(−panoRoll)·Rp(−tilt)·Ry(yaw)·Rp(pitch)·Rr(roll).
        let m =
            Rotation.roll(-key.panoramaRoll) * Rotation.pitch(-key.panoramaTilt)
            * Rotation.camera(yaw: key.bakedYaw, pitch: key.pitch, roll: key.roll)
        let mapping = Mapping(
            m: m, t: t, tv: tv, ow: ow, oh: oh, sourceWidth: key.sourceWidth, sourceHeight: key.sourceHeight)
        // Every element is written below.
        memory = TableMemory.blocks.take(bytes: 8 * ow * oh)
        if case .goproEAC(let eac) = key.source {
            Self.fillCubeMap(mapping, eac, key: key, u: u, v: v)
            return
        }
        let step = Self.gridStep
        let grid = !exact && ow > 2 * step && oh > 2 * step ? Grid(mapping, step: step) : nil
        // Safe to share: each band writes only its own rows of both tables.
        nonisolated(unsafe) let uBase = UnsafeMutablePointer(mutating: u.baseAddress!)
        nonisolated(unsafe) let vBase = UnsafeMutablePointer(mutating: v.baseAddress!)
        if let grid {
            RowBands.run(rows: grid.rows - 1) { cellRows in
                for r in cellRows { grid.fill(cellRow: r, u: uBase, v: vBase) }
            }
        } else {
            RowBands.run(rows: oh) { rows in
                for j in rows { mapping.exactRow(j, u: uBase + j * ow, v: vBase + j * ow) }
            }
        }
    }

    /// A GoPro MAX atlas's table: every pixel's ray placed in the atlas by ``GoProEAC/position(_:scale:)`` (the
    /// source size a scale of the atlas: ½ for chroma), exactly (a cube map's faces meet at edges no grid follows),
    /// columns kept below the last so that no wrap applies.
    private static func fillCubeMap(
        _ mapping: Mapping, _ eac: GoProEAC, key: ProjectionTableKey, u: UnsafeBufferPointer<UInt32>,
        v: UnsafeBufferPointer<Int32>
    ) {
        let ow = mapping.ow
        let scale = Double(key.sourceWidth) / Double(eac.atlasWidth)
        let uMax = Double((key.sourceWidth - 1) * 256 - 1)
        let vMax = Double((key.sourceHeight - 1) * 256 - 1)
        nonisolated(unsafe) let uBase = UnsafeMutablePointer(mutating: u.baseAddress!)
        nonisolated(unsafe) let vBase = UnsafeMutablePointer(mutating: v.baseAddress!)
        RowBands.run(rows: mapping.oh) { rows in
            for j in rows {
                let (a, c) = mapping.ray(row: j)
                let a64 = SIMD3<Double>(Double(a.x), Double(a.y), Double(a.z))
                let c64 = SIMD3<Double>(Double(c.x), Double(c.y), Double(c.z))
                for i in 0..<ow {
                    let x = Double(mapping.xStart) + Double(i) * Double(mapping.xStep)
                    let p = eac.position(a64 * x + c64, scale: scale)
                    uBase[j * ow + i] = UInt32(min(max(p.x * 256, 0), uMax).rounded())
                    vBase[j * ow + i] = Int32(min(max(p.y * 256, 0), vMax).rounded())
                }
            }
        }
    }

    /// Output pixel → source position, as the formulas above.
    struct Mapping: Sendable {
        let m: Rotation
        let t: Double, tv: Double
        let ow: Int, oh: Int
        let uScale: Float, uOffset: Float, vScale: Float, vOffset: Float
        let wrap: Int32, vMax: Int32

        init(m: Rotation, t: Double, tv: Double, ow: Int, oh: Int, sourceWidth: Int, sourceHeight: Int) {
            self.m = m
            self.t = t
            self.tv = tv
            self.ow = ow
            self.oh = oh
            uScale = Float(Double(sourceWidth - 1) * Double(ProjectionTable.one) / (2 * .pi))
            uOffset = Float(Double(sourceWidth - 1) * Double(ProjectionTable.one) / 2)
            vScale = Float(Double(sourceHeight - 1) * Double(ProjectionTable.one) / .pi)
            vOffset = Float(Double(sourceHeight - 1) * Double(ProjectionTable.one) / 2)
            wrap = Int32(sourceWidth - 1) << 8
            // Bilinear reads rows y0 and y0 + 1: keep v 1/256 px above the last row so y0 + 1 exists.
            vMax = Int32(sourceHeight - 1) * ProjectionTable.one - 1
        }

        var xStart: Float { Float(t * (1 / Double(ow) - 1)) }
        var xStep: Float { Float(2 * t / Double(ow)) }

        /// Row `j`'s ray is `x·a + c` for x along the row.
        func ray(row j: Int) -> (a: SIMD3<Float>, c: SIMD3<Float>) {
            let y = tv * (Double(2 * j + 1) / Double(oh) - 1)
            // d = m·(x, y, 1) = x·column0 + (y·column1 + column2)
            return (
                SIMD3<Float>(Float(m.r0.x), Float(m.r1.x), Float(m.r2.x)),
                SIMD3<Float>(Float(m.r0.y * y + m.r0.z), Float(m.r1.y * y + m.r1.z), Float(m.r2.y * y + m.r2.z))
            )
        }

        func exactRow(_ j: Int, u: UnsafeMutablePointer<UInt32>, v: UnsafeMutablePointer<Int32>) {
            let (a, c) = ray(row: j)
            ProjectionTable.row(
                u: u, v: v, count: ow, a: a, c: c, xStart: xStart, xStep: xStep,
                uScale: uScale, uOffset: uOffset, vScale: vScale, vOffset: vOffset, wrap: wrap, vMax: vMax)
        }

        /// θ and φ of pixels `first`, `first + spacing`, … (`count` of them) of the row whose ray is `x·a + c`,
        /// branch-free (vectorised).
        @inline(__always)
        func angles(
            a: SIMD3<Float>, c: SIMD3<Float>, first: Int, spacing: Int, count: Int,
            theta: UnsafeMutablePointer<Float>, phi: UnsafeMutablePointer<Float>
        ) {
            let start = Float(first) * xStep + xStart
            let step = Float(spacing) * xStep
            let ax = a.x
            let ay = a.y
            let az = a.z
            let cx = c.x
            let cy = c.y
            let cz = c.z
            for k in 0..<count {
                let x = Float(k) * step + start
                let dx = ax * x + cx
                let dy = ay * x + cy
                let dz = az * x + cz
                theta[k] = ProjectionTable.atan2(dx, dz)
                phi[k] = ProjectionTable.atan2(dy, (dx * dx + dz * dz).squareRoot())
            }
        }

        /// Longitude and latitude (radians, as the table's formulas) of output pixel `i` of a row whose ray is
        /// `x·a + c`.
        @inline(__always)
        func angles(_ i: Int, a: SIMD3<Float>, c: SIMD3<Float>) -> (theta: Float, phi: Float) {
            var theta: Float = 0
            var phi: Float = 0
            angles(a: a, c: c, first: i, spacing: 1, count: 1, theta: &theta, phi: &phi)
            return (theta, phi)
        }
    }

    /// The mapping computed exactly every `step` pixels (and on the last row and column).
    struct Grid: Sendable {
        let mapping: Mapping
        let step: Int
        /// Grid columns and rows: pixel `min(k·step, size − 1)`.
        let columns: Int, rows: Int
        /// θ and φ at the grid points, row by row (θ in [−π, π], unwrapped cell by cell).
        let theta: [Float], phi: [Float]
        /// Cells (`(columns − 1) × (rows − 1)`) the interpolation misses: computed exactly.
        let exactCells: [Bool]

        init(_ mapping: Mapping, step: Int) {
            self.mapping = mapping
            self.step = step
            let ow = mapping.ow
            let oh = mapping.oh
            let columns = (ow - 1 + step - 1) / step + 1
            let rows = (oh - 1 + step - 1) / step + 1
            self.columns = columns
            self.rows = rows
            let cells = columns - 1
            var theta = [Float](repeating: 0, count: columns * rows)
            var phi = theta
            theta.withUnsafeMutableBufferPointer { t in
                phi.withUnsafeMutableBufferPointer { p in
                    for r in 0..<rows {
                        let (a, c) = mapping.ray(row: min(r * step, oh - 1))
                        let row = r * columns
                        mapping.angles(
                            a: a, c: c, first: 0, spacing: step, count: cells, theta: t.baseAddress! + row,
                            phi: p.baseAddress! + row)
                        // the last column: pixel ow − 1
                        (t[row + cells], p[row + cells]) = mapping.angles(ow - 1, a: a, c: c)
                    }
                }
            }
            var exact = [Bool](repeating: false, count: cells * (rows - 1))
            // The exact angles at each cell's centre (pixel (x0 + x1)/2 of row (y0 + y1)/2; every cell but the last
            // of a row is `step` wide).
            var centreTheta = [Float](repeating: 0, count: cells)
            var centrePhi = centreTheta
            for r in 0..<(rows - 1) {
                let y0 = r * step
                let y1 = min((r + 1) * step, oh - 1)
                let ym = (y0 + y1) / 2
                let (a, cc) = mapping.ray(row: ym)
                centreTheta.withUnsafeMutableBufferPointer { t in
                    centrePhi.withUnsafeMutableBufferPointer { p in
                        mapping.angles(
                            a: a, c: cc, first: step / 2, spacing: step, count: cells - 1, theta: t.baseAddress!,
                            phi: p.baseAddress!)
                    }
                }
                (centreTheta[cells - 1], centrePhi[cells - 1]) = mapping.angles(
                    ((cells - 1) * step + ow - 1) / 2, a: a, c: cc)
                let fy = Float(ym - y0) / Float(y1 - y0)
                for c in 0..<cells {
                    let x0 = c * step
                    let x1 = min((c + 1) * step, ow - 1)
                    let corners = Self.corners(theta, phi, columns, r, c)
                    let fx = Float((x0 + x1) / 2 - x0) / Float(x1 - x0)
                    let (th, ph) = (centreTheta[c], centrePhi[c])
                    let ith = Self.lerp(
                        Self.lerp(corners.t00, corners.t10, fx), Self.lerp(corners.t01, corners.t11, fx), fy)
                    let iph = Self.lerp(
                        Self.lerp(corners.p00, corners.p10, fx), Self.lerp(corners.p01, corners.p11, fx), fy)
                    var dth = abs(ith - th)
                    dth = min(dth, abs(dth - 2 * .pi))
                    let span = max(
                        abs(corners.t10 - corners.t00), abs(corners.t01 - corners.t00), abs(corners.t11 - corners.t00))
                    let pole =
                        max(abs(corners.p00), abs(corners.p10), abs(corners.p01), abs(corners.p11)) > Self.poleLatitude
                    let i = r * columns + c
                    let seam =
                        corners.t10 != theta[i + 1] || corners.t01 != theta[i + columns]
                        || corners.t11 != theta[i + columns + 1]
                    exact[r * cells + c] =
                        pole || seam || span > 1 || dth * mapping.uScale > ProjectionTable.gridTolerance
                        || abs(iph - ph) * mapping.vScale > ProjectionTable.gridTolerance
                }
            }
            self.theta = theta
            self.phi = phi
            exactCells = exact
        }

        /// Cells reaching further from the horizon (radians, 69°) are computed exactly: towards a pole the
        /// longitude turns faster than a grid can follow.
        static let poleLatitude: Float = 1.2

        @inline(__always) static func lerp(_ a: Float, _ b: Float, _ f: Float) -> Float { a + (b - a) * f }

        /// The four corners of cell (r, c), θ unwrapped to within π of the top-left's.
        @inline(__always)
        static func corners(_ theta: [Float], _ phi: [Float], _ columns: Int, _ r: Int, _ c: Int)
            -> (t00: Float, t10: Float, t01: Float, t11: Float, p00: Float, p10: Float, p01: Float, p11: Float)
        {
            let i = r * columns + c
            let t00 = theta[i]
            func near(_ x: Float) -> Float { x - t00 > .pi ? x - 2 * .pi : (x - t00 < -.pi ? x + 2 * .pi : x) }
            return (
                t00, near(theta[i + 1]), near(theta[i + columns]), near(theta[i + columns + 1]),
                phi[i], phi[i + 1], phi[i + columns], phi[i + columns + 1]
            )
        }

        /// Writes the table's rows of cell row `r` (its last row too for the last cell row): each row's source
        /// positions stepped linearly across each cell (a fixed 8-wide, branch-free loop the compiler
        /// vectorises), then the cells that need it computed exactly.
        func fill(cellRow r: Int, u: UnsafeMutablePointer<UInt32>, v: UnsafeMutablePointer<Int32>) {
            let ow = mapping.ow
            let oh = mapping.oh
            let cells = columns - 1
            let y0 = r * step
            let y1 = min((r + 1) * step, oh - 1)
            let last = r == rows - 2 ? y1 : y1 - 1
            let uScale = mapping.uScale
            let uOffset = mapping.uOffset
            let vScale = mapping.vScale
            let vOffset = mapping.vOffset
            let wrap = mapping.wrap
            let vMax = mapping.vMax
            // Per cell: its left and right edges' θ and φ at the top and their change to the bottom.
            var tl = [Float](repeating: 0, count: cells)
            var tlD = tl
            var tr = tl
            var trD = tl
            var pl = tl
            var plD = tl
            var pr = tl
            var prD = tl
            var inv = tl
            for c in 0..<cells {
                let k = Self.corners(theta, phi, columns, r, c)
                (tl[c], tlD[c], tr[c], trD[c]) = (k.t00, k.t01 - k.t00, k.t10, k.t11 - k.t10)
                (pl[c], plD[c], pr[c], prD[c]) = (k.p00, k.p01 - k.p00, k.p10, k.p11 - k.p10)
                inv[c] = 1 / Float(min((c + 1) * step, ow - 1) - c * step)
            }
            // Per cell of a row: source position at its left edge and its step per pixel (fixed point).
            var uStart = [Float](repeating: 0, count: cells)
            var uStep = uStart
            var vStart = uStart
            var vStep = uStart
            let dy = 1 / Float(y1 - y0)
            let full = step == 8 ? (ow - 1) / 8 : 0 // cells of 8 pixels; the last may be shorter (and has x1 too)
            for j in y0...last {
                let fy = Float(j - y0) * dy
                for c in 0..<cells {
                    let left = tl[c] + tlD[c] * fy
                    let right = tr[c] + trD[c] * fy
                    let leftPhi = pl[c] + plD[c] * fy
                    let rightPhi = pr[c] + prD[c] * fy
                    uStart[c] = left * uScale + uOffset
                    uStep[c] = (right - left) * uScale * inv[c]
                    vStart[c] = leftPhi * vScale + vOffset
                    vStep[c] = (rightPhi - leftPhi) * vScale * inv[c]
                }
                let ur = u + j * ow
                let vr = v + j * ow
                // As ``row`` (cells across the seam are computed exactly, so no wrap but its last step).
                @inline(__always) func put(_ i: Int, _ uRaw: Float, _ vRaw: Float) {
                    let uf = max(uRaw, 0) + 8_388_608
                    var ui = Int32(bitPattern: uf.bitPattern & 0x7F_FFFF)
                    ui = ui >= wrap ? ui &- wrap : ui
                    let vf = max(vRaw, 0) + 8_388_608
                    ur[i] = UInt32(bitPattern: ui)
                    vr[i] = min(Int32(bitPattern: vf.bitPattern & 0x7F_FFFF), vMax)
                }
                for c in 0..<min(full, cells) {
                    let us = uStart[c]
                    let ud = uStep[c]
                    let vs = vStart[c]
                    let vd = vStep[c]
                    let base = c * 8
                    for k in 0..<8 { put(base + k, us + ud * Float(k), vs + vd * Float(k)) }
                }
                for c in min(full, cells)..<cells {
                    let x0 = c * step
                    let end = c == cells - 1 ? ow - 1 : min((c + 1) * step, ow - 1) - 1
                    for i in x0...end {
                        put(i, uStart[c] + uStep[c] * Float(i - x0), vStart[c] + vStep[c] * Float(i - x0))
                    }
                }
                if full == cells {
                    // The last pixel of the row is the last grid column's.
                    let c = cells - 1
                    put(
                        ow - 1, uStart[c] + uStep[c] * Float(ow - 1 - c * step),
                        vStart[c] + vStep[c] * Float(ow - 1 - c * step))
                }
                var c = 0
                while c < cells {
                    guard exactCells[r * cells + c] else {
                        c += 1
                        continue
                    }
                    // A run of cells computed exactly.
                    var e = c
                    while e + 1 < cells, exactCells[r * cells + e + 1] { e += 1 }
                    let x0 = c * step
                    let end = e == cells - 1 ? ow - 1 : min((e + 1) * step, ow - 1) - 1
                    let (a, cc) = mapping.ray(row: j)
                    ProjectionTable.row(
                        u: ur + x0, v: vr + x0, count: end - x0 + 1, a: a, c: cc,
                        xStart: mapping.xStart + Float(x0) * mapping.xStep, xStep: mapping.xStep,
                        uScale: uScale, uOffset: uOffset, vScale: vScale, vOffset: vOffset, wrap: wrap, vMax: vMax)
                    c = e + 1
                }
            }
        }
    }
}

extension ProjectionTable {
    /// One row of the table in Float arithmetic, branch-free so the compiler vectorises it (measured: 1280×720
    /// in ~16 ms a core, against ~70 ms with Double and libm's atan2).
    @inline(__always)
    static func row(
        u: UnsafeMutablePointer<UInt32>, v: UnsafeMutablePointer<Int32>, count: Int,
        a: SIMD3<Float>, c: SIMD3<Float>, xStart: Float, xStep: Float,
        uScale: Float, uOffset: Float, vScale: Float, vOffset: Float, wrap: Int32, vMax: Int32
    ) {
        let ax = a.x
        let ay = a.y
        let az = a.z
        let cx = c.x
        let cy = c.y
        let cz = c.z
        for i in 0..<count {
            let x = Float(i) * xStep + xStart
            let dx = ax * x + cx
            let dy = ay * x + cy
            let dz = az * x + cz
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
        let ax = abs(x)
        let ay = abs(y)
        let hi = max(ax, ay)
        let lo = min(ax, ay)
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

/// Splits rows into bands for the sampling loops, and runs them across the cores only where that nests in nothing.
///
/// Lapse has one execution model (ARCHITECTURE.md, "Execution"): frame work runs on Swift's cooperative pool, one
/// task a frame, several frames at once (a hyperlapse renders one frame more than there are cores); blocking work
/// runs on a ``LapseCore/BlockingQueue``, off the pool. So inside a task the bands run one after another on the
/// task's thread (the other cores have frames of their own; spreading a frame's rows too would block a pool thread
/// waiting for Dispatch's and ask the cores for two layers of parallelism). Only a caller outside the pool — a
/// single view rendered on a ``LapseCore/BlockingQueue`` (`lapse view`, its `--bench`) — has its rows spread across
/// the cores with `DispatchQueue.concurrentPerform`.
enum RowBands {
    /// Number of cores to use (at least 1).
    static let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)

    /// Calls `body` with disjoint, consecutive row ranges covering `0..<rows`: in parallel outside a Swift task
    /// (several bands per core balance uneven work); inside one, once with all the rows, on the calling thread.
    static func run(rows: Int, _ body: @Sendable (Range<Int>) -> Void) {
        let inTask = withUnsafeCurrentTask { $0 != nil }
        let bands = inTask ? 1 : min(rows, cores == 1 ? 1 : cores * 4)
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

/// The memory of projection tables, kept for the next table of the same size. A stabilised hyperlapse makes a
/// table a frame (its rotation changes every frame), of megabytes (8 bytes an output pixel): allocated afresh,
/// each would be mapped, faulted in and zeroed by the kernel (glibc maps blocks above the CLI's 1 MB mmap
/// threshold). At most ``kept`` blocks wait here, of any sizes (about as many as frames render at once; the
/// oldest is freed to make room), so a process that renders many sizes keeps no more than that.
enum TableMemory {
    static let kept = 4
    static let blocks = BlockPool(maxBlocks: kept)
}
