// SPDX-License-Identifier: GPL-3.0-or-later
import LapseMedia

/// Inter-frame change detection: remembers, for every pixel of the logical screen, the source colour that
/// was last drawn there (or "transparent"), and turns each new frame into the rectangle of pixels that
/// changed, with unchanged pixels made transparent.
///
/// Comparing against the colour last *drawn* (not the previous source frame) keeps slow drifts from adding up:
/// a pixel is redrawn as soon as it moved more than its tolerance away from what is shown (`tolerance`, or a
/// per-pixel map from ``FrameAnalysis/toleranceMap(_:width:height:tolerance:)``).
struct FrameDiffer {
    let width: Int
    let height: Int
    /// Largest per-channel difference for a pixel to count as unchanged (when no per-pixel map is given).
    var tolerance: Int
    /// Packed RGBA (R lowest) of what is displayed; 0 = transparent.
    private var reference: [UInt32]

    init(width: Int, height: Int, tolerance: Int) {
        self.width = width
        self.height = height
        self.tolerance = tolerance
        reference = [UInt32](repeating: 0, count: width * height)
    }

    /// The result of comparing a frame with what is displayed.
    struct Comparison {
        /// Bounding box of the pixels to draw (nil: none).
        var changed: GIFRect?
        /// Some pixel is displayed opaque but transparent in the new frame: the canvas must be cleared first.
        var needsClear: Bool
    }

    /// The alpha below which a pixel is transparent in a GIF (which has no partial transparency): a little under
    /// half, so that a half-transparent edge stays opaque whether its alpha came exactly (128 in a PNG) or coded
    /// lossily (VP9's alpha plane wobbles by ±6 around it, which a threshold of 128 turned into a see-through
    /// hairline and holes).
    static let alphaThreshold: UInt32 = 112

    /// A frame's pixels packed one word per pixel, alpha made binary (< ``alphaThreshold`` → fully transparent 0,
    /// else 255).
    static func binarized(_ frame: PixelBuffer) -> [UInt32] {
        var out = [UInt32](repeating: 0, count: frame.width * frame.height)
        frame.bytes.withUnsafeBytes { raw in
            let src = raw.bindMemory(to: UInt32.self)
            out.withUnsafeMutableBufferPointer { dst in
                for i in 0..<dst.count {
                    let v = src[i]
                    dst[i] = v >> 24 < alphaThreshold ? 0 : v | 0xFF00_0000
                }
            }
        }
        return out
    }

    @inline(__always)
    private static func same(_ a: UInt32, _ b: UInt32, _ tolerance: Int32) -> Bool {
        if a == b { return true }
        if a == 0 || b == 0 { return false }
        let dr = Int32(a & 0xFF) - Int32(b & 0xFF)
        let dg = Int32(a >> 8 & 0xFF) - Int32(b >> 8 & 0xFF)
        let db = Int32(a >> 16 & 0xFF) - Int32(b >> 16 & 0xFF)
        return abs(dr) <= tolerance && abs(dg) <= tolerance && abs(db) <= tolerance
    }

    /// Compares `frame` (from ``binarized(_:)``) with what is displayed.
    /// - Parameters:
    ///   - frame: the frame's pixels, packed RGBA, the screen's size.
    ///   - tolerances: per pixel of the screen, replacing `tolerance` when given.
    /// - Returns: the box of the pixels to draw, and whether the canvas must be cleared first.
    func compare(_ frame: [UInt32], tolerances: [UInt8]? = nil) -> Comparison {
        var minX = width
        var minY = height
        var maxX = -1
        var maxY = -1
        var needsClear = false
        let tol = Int32(tolerance)
        let w = width
        reference.withUnsafeBufferPointer { ref in
            frame.withUnsafeBufferPointer { cur in
                for y in 0..<height {
                    let row = y * w
                    var rowMin = -1
                    var rowMax = -1
                    for x in 0..<w {
                        let n = cur[row + x]
                        let o = ref[row + x]
                        if Self.same(n, o, tolerances.map { Int32($0[row + x]) } ?? tol) { continue }
                        if n == 0 {
                            needsClear = true
                            continue
                        }
                        if rowMin < 0 { rowMin = x }
                        rowMax = x
                    }
                    if rowMin >= 0 {
                        minX = min(minX, rowMin)
                        maxX = max(maxX, rowMax)
                        minY = min(minY, y)
                        maxY = y
                    }
                }
            }
        }
        let rect = maxX < 0 ? nil : GIFRect(x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1)
        return Comparison(changed: rect, needsClear: needsClear)
    }

    /// Forgets what is displayed (after a frame disposed to the background: the canvas is transparent).
    mutating func clear() {
        reference.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
    }

    /// The RGBA pixels of `rect` to draw for `frame`: changed pixels opaque, unchanged ones alpha 0.
    /// Records the changed pixels as displayed.
    mutating func draw(_ frame: [UInt32], in rect: GIFRect, tolerances: [UInt8]? = nil) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: rect.width * rect.height * 4)
        let tol = Int32(tolerance)
        let w = width
        reference.withUnsafeMutableBufferPointer { ref in
            frame.withUnsafeBufferPointer { cur in
                out.withUnsafeMutableBytes { raw in
                    let dst = raw.bindMemory(to: UInt32.self)
                    for y in 0..<rect.height {
                        let srcRow = (rect.y + y) * w + rect.x
                        let dstRow = y * rect.width
                        for x in 0..<rect.width {
                            let n = cur[srcRow + x]
                            if n == 0 || Self.same(n, ref[srcRow + x], tolerances.map { Int32($0[srcRow + x]) } ?? tol)
                            {
                                continue
                            }
                            dst[dstRow + x] = n
                            ref[srcRow + x] = n
                        }
                    }
                }
            }
        }
        return out
    }
}
