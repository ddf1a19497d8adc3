// SPDX-License-Identifier: GPL-3.0-or-later

/// How an image is fitted into a frame of another shape.
public enum FitMode: String, Sendable, CaseIterable {
    /// Scaled to fit inside the frame, aspect ratio kept; the rest is the background colour (letter/pillar box).
    case contain
    /// Scaled to cover the whole frame, aspect ratio kept; what sticks out is cut off evenly.
    case cover
    /// Scaled to the frame's exact size, aspect ratio not kept.
    case stretch
}

/// Places decoded images onto frames of one size: scaling (with swscale, area-averaging when shrinking),
/// EXIF orientation, fitting, and compositing transparent pixels over a background colour.
public struct FrameFitter: Sendable {
    /// Frame width in pixels.
    public let width: Int
    /// Frame height in pixels.
    public let height: Int
    /// How an image of another shape fills the frame.
    public let mode: FitMode
    /// Padding, and the colour behind transparent pixels.
    public let background: RGBA

    /// - Parameters:
    ///   - width: the frame width in pixels.
    ///   - height: the frame height in pixels.
    ///   - mode: how to fit images of another shape.
    ///   - background: the colour of padding and behind transparent pixels (its alpha is ignored: frames are opaque).
    public init(width: Int, height: Int, mode: FitMode, background: RGBA) {
        self.width = width
        self.height = height
        self.mode = mode
        self.background = RGBA(background.r, background.g, background.b, 255)
    }

    /// The size the image is scaled to (before cropping for `.cover`), from its display size.
    public func scaledSize(displayWidth w: Int, displayHeight h: Int) -> (width: Int, height: Int) {
        switch mode {
        case .stretch:
            return (width, height)
        case .contain, .cover:
            let sx = Double(width) / Double(w)
            let sy = Double(height) / Double(h)
            let s = mode == .contain ? min(sx, sy) : max(sx, sy)
            var sw = Int((Double(w) * s).rounded())
            var sh = Int((Double(h) * s).rounded())
            if mode == .contain {
                sw = min(sw, width)
                sh = min(sh, height)
            } else {
                sw = max(sw, width)
                sh = max(sh, height)
            }
            return (max(1, sw), max(1, sh))
        }
    }

    /// The opaque frame showing `image`.
    /// - Throws: ``LapseError`` when swscale cannot convert the image's pixel format.
    public func frame(for image: DecodedImage) throws -> PixelBuffer {
        let (sw, sh) = scaledSize(displayWidth: image.fullDisplayWidth, displayHeight: image.fullDisplayHeight)
        let scaled = try image.pixels(width: sw, height: sh)
        return place(scaled)
    }

    /// The frame showing `image` as the encoder's Y′CbCr, when nothing is composited: the image fills the frame
    /// (its shape, or `stretch`) and ``DecodedImage/yuv(width:height:)`` can give it; nil otherwise (use
    /// ``frame(for:)``).
    /// - Throws: ``LapseError`` when swscale cannot convert.
    public func yuvFrame(for image: DecodedImage) throws -> YUVFrame? {
        let (sw, sh) = scaledSize(displayWidth: image.fullDisplayWidth, displayHeight: image.fullDisplayHeight)
        guard sw == width, sh == height else { return nil }
        return try image.yuv(width: width, height: height)
    }

    /// `scaled` centred on the background (cropped when larger), alpha composited over the background colour.
    public func place(_ scaled: PixelBuffer) -> PixelBuffer {
        if scaled.width == width && scaled.height == height && scaled.isOpaque { return scaled }
        var out = PixelBuffer(width: width, height: height, fill: background)
        let ox = (width - scaled.width) / 2
        let oy = (height - scaled.height) / 2
        let x0 = max(0, ox)
        let y0 = max(0, oy)
        let x1 = min(width, ox + scaled.width)
        let y1 = min(height, oy + scaled.height)
        guard x1 > x0, y1 > y0 else { return out }
        let bg = background
        scaled.bytes.withUnsafeBufferPointer { src in
            out.bytes.withUnsafeMutableBufferPointer { dst in
                for y in y0..<y1 {
                    var s = ((y - oy) * scaled.width + (x0 - ox)) * 4
                    var d = (y * width + x0) * 4
                    for _ in x0..<x1 {
                        let a = Int(src[s + 3])
                        if a == 255 {
                            dst[d] = src[s]
                            dst[d + 1] = src[s + 1]
                            dst[d + 2] = src[s + 2]
                        } else if a > 0 {
                            // Straight alpha over an opaque background, rounded: (c·a + bg·(255−a)) / 255.
                            let ia = 255 - a
                            dst[d] = UInt8((Int(src[s]) * a + Int(bg.r) * ia + 127) / 255)
                            dst[d + 1] = UInt8((Int(src[s + 1]) * a + Int(bg.g) * ia + 127) / 255)
                            dst[d + 2] = UInt8((Int(src[s + 2]) * a + Int(bg.b) * ia + 127) / 255)
                        }
                        dst[d + 3] = 255
                        s += 4
                        d += 4
                    }
                }
            }
        }
        return out
    }
}
