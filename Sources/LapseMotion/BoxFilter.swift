// SPDX-License-Identifier: GPL-3.0-or-later

/// Means over a (2r+1)² box of planes made row by row, columns wrapping and rows clamped: a running sum along
/// each row, then one down the columns over a ring of 2r+2 rows of those sums, so that no whole plane of
/// intermediate values is ever allocated (a few additions a pixel whatever r). The order of the additions is
/// fixed, so the same planes always give the same means to the last bit.
enum BoxFilter {
    /// Streams the box means of `channels` planes of `width × height`.
    /// - Parameters:
    ///   - w: the planes' width.
    ///   - h: their height.
    ///   - r: the box's radius: means over `(2r+1)²` pixels; `w` must exceed `2r`.
    ///   - c: the number of planes.
    ///   - rows: the rows whose means are wanted (default: every row); the sums still run from the first row, so
    ///     the means of a row are the same to the last bit whichever rows are asked for, and stop at the last row
    ///     the last one asked for needs (`r` below it).
    ///   - fill: writes row `y` of every plane into its buffer (`channels · width` values, plane by plane); it is
    ///     called once a row, rows in order.
    ///   - emit: receives the means of row `y` of every plane (`channels · width` values, plane by plane), for the
    ///     rows asked for, in order.
    static func means(
        width w: Int, height h: Int, radius r: Int, channels c: Int, rows: StrideTo<Int>? = nil,
        fill: (_ y: Int, _ row: UnsafeMutablePointer<Float>) -> Void,
        emit: (_ y: Int, _ means: UnsafePointer<Float>) -> Void
    ) {
        precondition(w > 2 * r && h > 0 && c > 0)
        let span = c * w
        let ringRows = 2 * r + 2
        let n = 1 / Float((2 * r + 1) * (2 * r + 1))
        // Scratch: one row of the planes, the ring of horizontal sums, the column sums, one row of means.
        withUnsafeTemporaryAllocation(of: Float.self, capacity: span * (ringRows + 3)) { scratch in
            let source = scratch.baseAddress!
            let ring = source + span
            let column = ring + span * ringRows
            let out = column + span
            var made = 0 // rows of horizontal sums made so far
            func sums(_ y: Int) -> UnsafeMutablePointer<Float> {
                while made <= y {
                    fill(made, source)
                    let hz = ring + (made % ringRows) * span
                    // Three planes' running sums at once: three independent chains of additions (one alone is bound
                    // by their latency), each plane's in the same order as alone. Fewer than three planes left: the
                    // last one is summed again in the spare chains.
                    var k = 0
                    while k < c {
                        let planes = min(3, c - k)
                        let v0 = source + k * w
                        let v1 = source + (k + min(1, planes - 1)) * w
                        let v2 = source + (k + planes - 1) * w
                        let o0 = hz + k * w
                        let o1 = hz + (k + min(1, planes - 1)) * w
                        let o2 = hz + (k + planes - 1) * w
                        var s0: Float = 0
                        var s1: Float = 0
                        var s2: Float = 0
                        for dx in -r...r {
                            let i = (dx + w) % w
                            s0 += v0[i]
                            s1 += v1[i]
                            s2 += v2[i]
                        }
                        for x in 0..<w {
                            o0[x] = s0
                            o1[x] = s1
                            o2[x] = s2
                            var add = x + r + 1
                            var drop = x - r
                            if add >= w { add -= w }
                            if drop < 0 { drop += w }
                            s0 += v0[add] - v0[drop]
                            s1 += v1[add] - v1[drop]
                            s2 += v2[add] - v2[drop]
                        }
                        k += planes
                    }
                    made += 1
                }
                return ring + (y % ringRows) * span
            }
            column.initialize(repeating: 0, count: span)
            for dy in -r...r {
                let hz = sums(min(max(dy, 0), h - 1))
                for i in 0..<span { column[i] += hz[i] }
            }
            // The rows asked for, and where the sums may stop.
            var wanted = [Bool](repeating: rows == nil, count: h)
            for y in rows ?? stride(from: 0, to: 0, by: 1) where y >= 0 && y < h { wanted[y] = true }
            let end = (wanted.lastIndex(of: true) ?? -1) + 1
            for y in 0..<end {
                if wanted[y] {
                    for i in 0..<span { out[i] = column[i] * n }
                    emit(y, out)
                }
                guard y + 1 < end else { break }
                let add = sums(min(y + r + 1, h - 1))
                let drop = ring + (max(y - r, 0) % ringRows) * span
                for i in 0..<span { column[i] += add[i] - drop[i] }
            }
        }
    }

    /// The box means of one plane (`width · height` values, row by row).
    static func mean(_ values: [Float], _ w: Int, _ h: Int, radius r: Int) -> [Float] {
        [Float](unsafeUninitializedCapacity: w * h) { out, count in
            values.withUnsafeBufferPointer { v in
                means(
                    width: w, height: h, radius: r, channels: 1,
                    fill: { y, row in row.update(from: v.baseAddress! + y * w, count: w) },
                    emit: { y, m in (out.baseAddress! + y * w).initialize(from: m, count: w) })
            }
            count = w * h
        }
    }
}
