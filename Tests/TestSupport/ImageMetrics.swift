// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia

/// Image comparison for tests: SSIM and PSNR on the BT.709 luma of two equal-size RGBA images
/// (alpha ignored).
public enum ImageMetrics {
    /// Mean SSIM over 8×8 windows with step 4 (Wang et al., "Image quality assessment: from error visibility
    /// to structural similarity", IEEE TIP 2004; C1 = (0.01·255)², C2 = (0.03·255)²). 1 means identical.
    public static func ssim(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
        precondition(a.width == b.width && a.height == b.height, "ssim: sizes differ")
        let la = luma(a)
        let lb = luma(b)
        let w = a.width
        let h = a.height
        let win = min(8, w, h)
        let step = max(1, win / 2)
        let c1: Double = 2.55 * 2.55
        let c2: Double = 7.65 * 7.65
        var total = 0.0
        var count = 0
        var y = 0
        while y + win <= h {
            var x = 0
            while x + win <= w {
                var sa = 0.0
                var sb = 0.0
                var saa = 0.0
                var sbb = 0.0
                var sab = 0.0
                for yy in y..<y + win {
                    for xx in x..<x + win {
                        let p = la[yy * w + xx]
                        let q = lb[yy * w + xx]
                        sa += p
                        sb += q
                        saa += p * p
                        sbb += q * q
                        sab += p * q
                    }
                }
                let n = Double(win * win)
                let ma = sa / n
                let mb = sb / n
                let va = saa / n - ma * ma
                let vb = sbb / n - mb * mb
                let cov = sab / n - ma * mb
                total += ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2))
                count += 1
                x += step
            }
            y += step
        }
        return count == 0 ? 1 : total / Double(count)
    }

    /// PSNR in dB over R, G and B (infinity when identical).
    /// - Parameter excluding: a rectangle (columns `x..<x + width`, rows `y..<y + height`) left out, e.g. a
    ///   credit drawn into one image only; the PSNR is over the other pixels.
    /// The mean R, G and B over every pixel (0…255).
    public static func meanColour(_ p: PixelBuffer) -> SIMD3<Double> {
        var s = SIMD3<Double>.zero
        for i in stride(from: 0, to: p.bytes.count, by: 4) {
            s += SIMD3(Double(p.bytes[i]), Double(p.bytes[i + 1]), Double(p.bytes[i + 2]))
        }
        return s / Double(p.width * p.height)
    }

    public static func psnr(
        _ a: PixelBuffer, _ b: PixelBuffer,
        excluding box: (x: Int, y: Int, width: Int, height: Int)? = nil
    ) -> Double {
        precondition(a.width == b.width && a.height == b.height, "psnr: sizes differ")
        var sum = 0.0
        var count = 0
        for y in 0..<a.height {
            let skip = box.map { y >= $0.y && y < $0.y + $0.height } ?? false
            for x in 0..<a.width {
                if skip, let box, x >= box.x && x < box.x + box.width { continue }
                let i = (y * a.width + x) * 4
                for c in 0..<3 {
                    let d = Double(a.bytes[i + c]) - Double(b.bytes[i + c])
                    sum += d * d
                }
                count += 3
            }
        }
        let mse = count == 0 ? 0 : sum / Double(count)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    static func luma(_ p: PixelBuffer) -> [Double] {
        var out = [Double](repeating: 0, count: p.width * p.height)
        for i in 0..<out.count {
            out[i] =
                0.2126 * Double(p.bytes[i * 4]) + 0.7152 * Double(p.bytes[i * 4 + 1]) + 0.0722
                * Double(p.bytes[i * 4 + 2])
        }
        return out
    }
}
