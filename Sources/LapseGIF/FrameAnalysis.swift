// SPDX-License-Identifier: GPL-3.0-or-later

/// Measurements of a frame's content that steer how it is encoded.
///
/// The error measure they follow is SSIM's (Wang et al. 2004, the measure of `bench/gif.sh`): within a window,
/// an error of variance e costs about e / (σ² + C2) (C2 = (0.03 × 255)² ≈ 58.5), so errors that are invisible in
/// textured areas (large σ²) are expensive where the picture is smooth, and a uniform offset costs almost
/// nothing while noise or a few stale pixels in a flat area cost a lot.
enum FrameAnalysis {
    /// Local variance (luma, levels²) above which an 8×8 block counts as flat no longer.
    static let flatVariance = 0.25
    /// Local variance up to which a block counts as smooth (gradients, walls, sky, skin: banding shows there).
    static let smoothVariance = 16.0
    /// Share of smooth blocks from which a frame is encoded as a smooth frame.
    static let smoothFrameShare = 0.6

    /// Share (0…1) of the frame's fully opaque 8×8 blocks whose luma variance is between ``flatVariance`` and
    /// ``smoothVariance``: textured only by fine noise or a gentle gradient. 0 for a frame with no such block.
    /// - Parameters:
    ///   - frame: packed RGBA (R lowest), `width × height`, 0 for transparent pixels.
    ///   - width: the frame's width in pixels.
    ///   - height: the frame's height in pixels.
    /// - Returns: the share, 0…1.
    static func smoothShare(_ frame: [UInt32], width: Int, height: Int) -> Double {
        var blocks = 0
        var smooth = 0
        frame.withUnsafeBufferPointer { f in
            var by = 0
            while by + 8 <= height {
                var bx = 0
                while bx + 8 <= width {
                    var sum = 0
                    var sum2 = 0
                    var opaque = true
                    for y in by..<by + 8 where opaque {
                        for x in bx..<bx + 8 {
                            let v = f[y * width + x]
                            if v == 0 {
                                opaque = false
                                break
                            }
                            // BT.601 luma in 1/256 levels.
                            let l = (77 * Int(v & 0xFF) + 150 * Int(v >> 8 & 0xFF) + 29 * Int(v >> 16 & 0xFF)) >> 4
                            sum += l
                            sum2 += l * l
                        }
                    }
                    if opaque {
                        blocks += 1
                        // Variance in (1/16 level)², back to levels².
                        let mean = Double(sum) / 64
                        let variance = (Double(sum2) / 64 - mean * mean) / 256
                        if variance > flatVariance && variance <= smoothVariance { smooth += 1 }
                    }
                    bx += 8
                }
                by += 8
            }
        }
        return blocks == 0 ? 0 : Double(smooth) / Double(blocks)
    }

    /// Per pixel, how far (largest channel difference, levels) it may be from what is displayed and still be
    /// left as it is: `min(tolerance, r / 4)` where r is the largest channel range of its 3×3 neighbourhood.
    /// A pixel in a flat neighbourhood must match exactly (a stale pixel there is a visible speck and costs
    /// SSIM most); in textured ones the small difference is masked. `nil` when `tolerance` is 0.
    static func toleranceMap(_ frame: [UInt32], width w: Int, height h: Int, tolerance: Int) -> [UInt8]? {
        guard tolerance > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: w * h)
        let cap = UInt32(min(255, tolerance))
        frame.withUnsafeBufferPointer { f in
            out.withUnsafeMutableBufferPointer { o in
                for y in 0..<h {
                    let y0 = max(0, y - 1)
                    let y1 = min(h - 1, y + 1)
                    for x in 0..<w {
                        let x0 = max(0, x - 1)
                        let x1 = min(w - 1, x + 1)
                        var loR: UInt32 = 255
                        var loG: UInt32 = 255
                        var loB: UInt32 = 255
                        var hiR: UInt32 = 0
                        var hiG: UInt32 = 0
                        var hiB: UInt32 = 0
                        for yy in y0...y1 {
                            for xx in x0...x1 {
                                let v = f[yy * w + xx]
                                let r = v & 0xFF
                                let g = v >> 8 & 0xFF
                                let b = v >> 16 & 0xFF
                                loR = min(loR, r)
                                hiR = max(hiR, r)
                                loG = min(loG, g)
                                hiG = max(hiG, g)
                                loB = min(loB, b)
                                hiB = max(hiB, b)
                            }
                        }
                        let range = max(hiR - loR, hiG - loG, hiB - loB)
                        o[y * w + x] = UInt8(min(cap, range / 4))
                    }
                }
            }
        }
        return out
    }
}
