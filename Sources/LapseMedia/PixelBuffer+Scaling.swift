// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg

extension PixelBuffer {
    /// The image scaled to `width × height` with swscale (area averaging when shrinking, bicubic when growing).
    /// Alpha is scaled like the colour channels.
    /// - Throws: ``LapseError`` `.codec` when swscale cannot set up the conversion.
    public func resized(width: Int, height: Int) throws -> PixelBuffer {
        if width == self.width && height == self.height { return self }
        var out = PixelBuffer(width: width, height: height, fill: RGBA(0, 0, 0, 0))
        let scaler = Scaler()
        let flags = (width < self.width || height < self.height) ? SWS_AREA : SWS_BICUBIC
        try bytes.withUnsafeBytes { src in
            try out.bytes.withUnsafeMutableBytes { dst in
                var srcPlanes: [UnsafePointer<UInt8>?] = [
                    src.baseAddress!.assumingMemoryBound(to: UInt8.self), nil, nil, nil
                ]
                var srcStrides: [Int32] = [Int32(stride), 0, 0, 0]
                var dstPlanes: [UnsafeMutablePointer<UInt8>?] = [
                    dst.baseAddress!.assumingMemoryBound(to: UInt8.self), nil, nil, nil
                ]
                var dstStrides: [Int32] = [Int32(width * 4), 0, 0, 0]
                try scaler.scale(
                    src: &srcPlanes, srcStrides: &srcStrides, srcWidth: self.width, srcHeight: self.height,
                    srcFormat: AV_PIX_FMT_RGBA, dst: &dstPlanes, dstStrides: &dstStrides,
                    dstWidth: width, dstHeight: height, dstFormat: AV_PIX_FMT_RGBA,
                    dstFullRange: true, flags: flags)
            }
        }
        return out
    }

    /// `self` blended with `other` (same size): `self·(1−t) + other·t`, per channel, rounded. `t` in 0…1.
    public func blended(with other: PixelBuffer, amount t: Double) -> PixelBuffer {
        precondition(width == other.width && height == other.height, "blend: sizes differ")
        let w = Int((max(0, min(1, t)) * 256).rounded())
        var out = self
        out.bytes.withUnsafeMutableBufferPointer { d in
            other.bytes.withUnsafeBufferPointer { o in
                for i in 0..<d.count {
                    d[i] = UInt8((Int(d[i]) * (256 - w) + Int(o[i]) * w + 128) >> 8)
                }
            }
        }
        return out
    }
}
