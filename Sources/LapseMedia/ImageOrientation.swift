// SPDX-License-Identifier: GPL-3.0-or-later

/// The EXIF/TIFF `Orientation` tag (values 1–8): how the stored pixels must be turned to be displayed upright.
///
/// Source: TIFF 6.0 §"Orientation" and Exif 2.32 §4.6.4 (tag 0x0112). Value 1 is "as stored".
public enum ImageOrientation: Int, Sendable, CaseIterable {
    case up = 1
    case upMirrored, down, downMirrored, leftMirrored, right, rightMirrored, left

    /// Whether width and height swap when displayed (values 5–8).
    public var swapsAxes: Bool { rawValue >= 5 }
}

extension PixelBuffer {
    /// The image turned as `orientation` says, so it displays upright.
    /// For orientations 5–8 the result is `height × width`.
    public func applying(_ orientation: ImageOrientation) -> PixelBuffer {
        if orientation == .up { return self }
        let w = width
        let h = height
        let ow = orientation.swapsAxes ? h : w
        let oh = orientation.swapsAxes ? w : h
        var out = PixelBuffer(width: ow, height: oh, fill: RGBA(0, 0, 0, 0))
        bytes.withUnsafeBytes { srcRaw in
            out.bytes.withUnsafeMutableBytes { dstRaw in
                let src = srcRaw.bindMemory(to: UInt32.self)
                let dst = dstRaw.bindMemory(to: UInt32.self)
                for y in 0..<oh {
                    let row = y * ow
                    for x in 0..<ow {
                        // (sx, sy): the stored pixel shown at display position (x, y).
                        let sx: Int
                        let sy: Int
                        switch orientation {
                        case .up:
                            sx = x
                            sy = y
                        case .upMirrored:
                            sx = w - 1 - x
                            sy = y
                        case .down:
                            sx = w - 1 - x
                            sy = h - 1 - y
                        case .downMirrored:
                            sx = x
                            sy = h - 1 - y
                        case .leftMirrored:
                            sx = y
                            sy = x
                        case .right:
                            sx = y
                            sy = h - 1 - x
                        case .rightMirrored:
                            sx = w - 1 - y
                            sy = h - 1 - x
                        case .left:
                            sx = w - 1 - y
                            sy = x
                        }
                        dst[row + x] = src[sy * w + sx]
                    }
                }
            }
        }
        return out
    }
}
