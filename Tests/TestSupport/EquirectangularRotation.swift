// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia

/// Equirectangular panoramas turned by a known rotation, for tests of motion analysis.
public enum EquirectangularRotation {
    /// `pixels` seen by a camera turned by `rotation` (world from new camera = world from old · `rotation`):
    /// each output direction d shows what the input shows at `rotation · d` (as ffmpeg's `v360=e:e` with
    /// yaw/pitch/roll). Bilinear, columns wrapping; pixel centres at `(x + 0.5)/W` of the turn.
    package static func rotated(_ pixels: PixelBuffer, by rotation: Rotation) -> PixelBuffer {
        let w = pixels.width
        let h = pixels.height
        var out = PixelBuffer(width: w, height: h)
        pixels.bytes.withUnsafeBufferPointer { src in
            out.bytes.withUnsafeMutableBufferPointer { dst in
                for y in 0..<h {
                    let latitude = (0.5 - (Double(y) + 0.5) / Double(h)) * .pi
                    for x in 0..<w {
                        let longitude = ((Double(x) + 0.5) / Double(w) - 0.5) * 2 * .pi
                        let d = SIMD3(cos(latitude) * sin(longitude), -sin(latitude), cos(latitude) * cos(longitude))
                        let s = rotation * d
                        let sx = (atan2(s.x, s.z) / (2 * .pi) + 0.5) * Double(w) - 0.5
                        let sy = min(max((0.5 - asin(min(1, max(-1, -s.y))) / .pi) * Double(h) - 0.5, 0), Double(h - 1))
                        let fx = sx.rounded(.down)
                        let fy = min(sy.rounded(.down), Double(h - 2))
                        let ax = sx - fx
                        let ay = sy - fy
                        let x0 = (Int(fx) % w + w) % w
                        let x1 = (x0 + 1) % w
                        let y0 = Int(fy)
                        let y1 = y0 + 1
                        for c in 0..<3 {
                            let p00 = Double(src[(y0 * w + x0) * 4 + c])
                            let p01 = Double(src[(y0 * w + x1) * 4 + c])
                            let p10 = Double(src[(y1 * w + x0) * 4 + c])
                            let p11 = Double(src[(y1 * w + x1) * 4 + c])
                            let v = (p00 * (1 - ax) + p01 * ax) * (1 - ay) + (p10 * (1 - ax) + p11 * ax) * ay
                            dst[(y * w + x) * 4 + c] = UInt8(min(255, max(0, v.rounded())))
                        }
                        dst[(y * w + x) * 4 + 3] = 255
                    }
                }
            }
        }
        return out
    }
}
