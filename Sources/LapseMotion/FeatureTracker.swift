// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

/// Corners and their pyramidal Lucas–Kanade tracks between two ``SphereImage``s, in the pixel coordinates of
/// the finest level (J.-Y. Bouguet, "Pyramidal implementation of the Lucas Kanade feature tracker", Intel, 2000;
/// corners by the smaller eigenvalue of the structure tensor: J. Shi and C. Tomasi, "Good features to track",
/// CVPR 1994). Equirectangular pixels are nearly square near the horizon; the corners are taken within 70° of it;
/// columns wrap around.
enum FeatureTracker {
    /// Half the side of the tracking window (11 × 11 pixels).
    static let radius = 5

    /// Corners are looked for within this many degrees of the horizon.
    static let cornerLatitude = 70.0
    /// Corners are the strongest of blocks of this many pixels a side.
    static let cornerCell = 8

    /// The rows ``corners(in:scores:limit:excluded:)`` reads on a finest level `height` pixels high: every second
    /// one of the whole cells within ``cornerLatitude`` of the horizon.
    static func cornerRows(height h: Int) -> StrideTo<Int> {
        let margin = cornerMargin(height: h)
        let cells = max(0, (h - 2 * margin) / cornerCell)
        return stride(from: margin, to: margin + cells * cornerCell, by: 2)
    }

    /// Score planes given back for the next pair, with their width: a 1024 × 512 plane is 2 MB, new memory
    /// faulted in by the kernel every pair otherwise.
    private static let spareScores = Mutex<[(width: Int, scores: [Float])]>([])

    /// Gives back a plane from ``cornerScores(_:)`` of a picture `width` wide once nothing reads it, for the next
    /// (at most two kept).
    static func recycle(_ scores: [Float], width: Int) {
        spareScores.withLock { spare in
            if spare.count < 2 { spare.append((width, scores)) }
        }
    }

    /// Rows left out above and below (beyond ``cornerLatitude``) on a level `height` pixels high.
    static func cornerMargin(height h: Int) -> Int { Int((Double(h) * (90 - cornerLatitude) / 180).rounded(.up)) }

    /// The smaller eigenvalue of the 7 × 7 structure tensor of the finest level (central differences, columns
    /// wrapping), per pixel: how well a window there can be tracked; worked out only where
    /// ``corners(in:scores:limit:excluded:)`` reads it (every second pixel of its rows, ``cornerRows(height:)``),
    /// zero elsewhere.
    static func cornerScores(_ image: SphereImage) -> [Float] {
        let level = image.levels[0]
        let w = level.width
        let h = level.height
        // A plane given back (``recycle(_:)``) for this size already holds zeros wherever nothing is written here.
        let spare = spareScores.withLock { spare in
            spare.lastIndex { $0.width == w && $0.scores.count == w * h }.map { spare.remove(at: $0).scores }
        }
        var result = spare ?? [Float](repeating: 0, count: w * h)
        result.withUnsafeMutableBufferPointer { scores in
            level.pixels.withUnsafeBufferPointer { p in
                // Three planes: gx², gx·gy, gy² (zero on the first and last rows).
                BoxFilter.means(
                    width: w, height: h, radius: 3, channels: 3, rows: cornerRows(height: h),
                    fill: { y, row in
                        guard y > 0, y < h - 1 else {
                            row.initialize(repeating: 0, count: 3 * w)
                            return
                        }
                        let above = p.baseAddress! + (y - 1) * w
                        let here = above + w
                        let below = here + w
                        for x in 0..<w {
                            let right = x + 1 == w ? 0 : x + 1
                            let left = x == 0 ? w - 1 : x - 1
                            let gx = (here[right] - here[left]) * 0.5
                            let gy = (below[x] - above[x]) * 0.5
                            row[x] = gx * gx
                            row[w + x] = gx * gy
                            row[2 * w + x] = gy * gy
                        }
                    },
                    emit: { y, m in
                        let sxx = m
                        let sxy = m + w
                        let syy = m + 2 * w
                        let out = scores.baseAddress! + y * w
                        for x in stride(from: 0, to: w, by: 2) {
                            let half = (sxx[x] + syy[x]) / 2
                            out[x] = half - ((sxx[x] - syy[x]) * (sxx[x] - syy[x]) / 4 + sxy[x] * sxy[x]).squareRoot()
                        }
                    })
            }
        }
        return result
    }

    /// The strongest corner of each ``cornerCell`` × ``cornerCell`` block of the finest level within
    /// ``cornerLatitude`` degrees of the horizon (every second pixel each way: ``cornerRows(height:)``), where its
    /// score (``cornerScores(_:)``) exceeds `threshold` (luma units squared) and `excluded(x, y)` is false; the
    /// `limit` strongest of them.
    static func corners(
        in image: SphereImage, scores: [Float], threshold: Float = 10, limit: Int = 320,
        excluded: (Int, Int) -> Bool
    ) -> [SIMD2<Double>] {
        let w = image.width
        let h = image.height
        let cell = cornerCell
        precondition(w % cell == 0, "corners are picked from whole cells across the picture")
        let margin = cornerMargin(height: h)
        var result: [(Float, SIMD2<Double>)] = []
        var y0 = margin
        while y0 + cell <= h - margin {
            for x0 in stride(from: 0, to: w, by: cell) {
                var best: (Float, Int, Int)?
                for y in stride(from: y0, to: y0 + cell, by: 2) {
                    for x in stride(from: x0, to: x0 + cell, by: 2) where !excluded(x, y) {
                        let score = scores[y * w + x]
                        if score > threshold, best == nil || score > best!.0 { best = (score, x, y) }
                    }
                }
                if let best { result.append((best.0, SIMD2(Double(best.1), Double(best.2)))) }
            }
            y0 += cell
        }
        // The strongest `limit`, in picture order.
        if result.count > limit {
            let cut = result.map(\.0).sorted(by: >)[limit - 1]
            result = result.filter { $0.0 >= cut }
        }
        return result.map(\.1)
    }

    /// Where `point` of `a` lies in `b`, starting the search at `guess` (both in finest-level pixels): coarse
    /// to fine over the pyramid, at most 12 Gauss–Newton steps a level, the window's means subtracted (so a
    /// residual difference of brightness does not move the track). `nil` when the window has no texture or the
    /// track does not converge to a close match.
    /// - Parameters:
    ///   - point: the corner in `a`.
    ///   - a: the picture the corner is in.
    ///   - b: the picture to find it in.
    ///   - guess: where to start the search in `b`.
    ///   - coarsest: the coarsest level searched (all of them by default); a guess within a few pixels (tracking
    ///     back to where a track started) needs only the finest two.
    /// - Returns: the point in `b`, or nil.
    static func track(
        _ point: SIMD2<Double>, from a: SphereImage, to b: SphereImage, guess: SIMD2<Double>,
        coarsest: Int = .max
    ) -> SIMD2<Double>? {
        let r = radius
        let side = 2 * r + 1
        let count = side * side
        let wide = side + 2
        // Scratch (on the stack): the template, its gradients, B's samples, and the template's wider window (the
        // last two with the room `window` may write past them).
        let capacity = 3 * count + (count + 3) + (wide * wide + 3)
        return withUnsafeTemporaryAllocation(of: Float.self, capacity: capacity) { scratch -> SIMD2<Double>? in
            let template = scratch.baseAddress!
            let gradX = template + count
            let gradY = gradX + count
            let samples = gradY + count
            let around = samples + count + 3
            let top = min(a.levels.count - 1, coarsest)
            // Level-L coordinates of a level-0 position: (x0 − (2^L − 1)/2) / 2^L.
            func down(_ p: SIMD2<Double>, _ l: Int) -> SIMD2<Double> {
                let s = Double(1 << l)
                return (p - SIMD2(repeating: (s - 1) / 2)) / s
            }
            var g = down(guess, top)
            var residual: Float = 0
            for l in stride(from: top, through: 0, by: -1) {
                let la = a.levels[l]
                let lb = b.levels[l]
                let p = down(point, l)
                let px = Float(p.x)
                let py = Float(p.y)
                // The template and its central-difference gradients from a window two pixels wider.
                la.window(x: px, y: py, radius: r + 1, into: around)
                var mean: Float = 0
                var k = 0
                for dy in 0..<side {
                    for dx in 0..<side {
                        let c = (dy + 1) * wide + dx + 1
                        template[k] = around[c]
                        gradX[k] = (around[c + 1] - around[c - 1]) * 0.5
                        gradY[k] = (around[c + wide] - around[c - wide]) * 0.5
                        mean += template[k]
                        k += 1
                    }
                }
                mean /= Float(count)
                // The template's deviations from its mean, and the structure tensor's sums.
                var vxx = SIMD8<Float>()
                var vxy = SIMD8<Float>()
                var vyy = SIMD8<Float>()
                var i = 0
                while i + 8 <= count {
                    let gx = load8(gradX + i)
                    let gy = load8(gradY + i)
                    vxx += gx * gx
                    vxy += gx * gy
                    vyy += gy * gy
                    i += 8
                }
                var gxx = vxx.sum()
                var gxy = vxy.sum()
                var gyy = vyy.sum()
                while i < count {
                    gxx += gradX[i] * gradX[i]
                    gxy += gradX[i] * gradY[i]
                    gyy += gradY[i] * gradY[i]
                    i += 1
                }
                for k in 0..<count { template[k] -= mean }
                let det = gxx * gyy - gxy * gxy
                let half = (gxx + gyy) / 2
                let minEigen = half - ((gxx - gyy) * (gxx - gyy) / 4 + gxy * gxy).squareRoot()
                guard det > 1e-6, minEigen / Float(count) > 1 else { return nil }
                var gx = Float(g.x)
                var gy = Float(g.y)
                for _ in 0..<12 {
                    lb.window(x: gx, y: gy, radius: r, into: samples)
                    // Sums in eight lanes (one chain of additions a sum would be bound by their latency).
                    var vsum = SIMD8<Float>()
                    i = 0
                    while i + 8 <= count {
                        vsum += load8(samples + i)
                        i += 8
                    }
                    var bMean = vsum.sum()
                    while i < count {
                        bMean += samples[i]
                        i += 1
                    }
                    bMean /= Float(count)
                    let vMean = SIMD8(repeating: bMean)
                    var vbx = SIMD8<Float>()
                    var vby = SIMD8<Float>()
                    var vres = SIMD8<Float>()
                    i = 0
                    while i + 8 <= count {
                        let e = load8(template + i) - (load8(samples + i) - vMean)
                        vbx += e * load8(gradX + i)
                        vby += e * load8(gradY + i)
                        vres += e.replacing(with: -e, where: e .< SIMD8<Float>())
                        i += 8
                    }
                    var bx = vbx.sum()
                    var by = vby.sum()
                    residual = vres.sum() // read on the finest level only
                    while i < count {
                        let e = template[i] - (samples[i] - bMean)
                        bx += e * gradX[i]
                        by += e * gradY[i]
                        residual += abs(e)
                        i += 1
                    }
                    let ux = (gyy * bx - gxy * by) / det
                    let uy = (gxx * by - gxy * bx) / det
                    gx += ux
                    gy += uy
                    if ux * ux + uy * uy < 0.0004 { break }
                }
                residual /= Float(count)
                g = SIMD2(Double(gx), Double(gy))
                if l > 0 { g = g * 2 + SIMD2(repeating: 0.5) } // level-(L−1) coordinates
            }
            guard residual < 12, g.y > 0, g.y < Double(b.height - 1) else { return nil }
            return g
        }
    }
}

/// Eight floats from `p` on (any alignment).
@inline(__always) private func load8(_ p: UnsafePointer<Float>) -> SIMD8<Float> {
    UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Float>.self)
}
