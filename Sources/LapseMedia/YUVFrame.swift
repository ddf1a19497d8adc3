// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg

/// A picture in 8-bit planar Y′CbCr 4:2:0 (`yuv420p`), BT.709 matrix, limited range (luma 16…235, chroma
/// 16…240), the form the encoder takes: luma `width × height`, each chroma plane `chromaWidth × chromaHeight`
/// (half of each, rounded up), rows packed without padding. Chroma samples sit at the centre of their 2 × 2 luma
/// block, as each plane is resampled on its own grid (as ffmpeg's `v360` does).
public struct YUVFrame: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public var y: [UInt8]
    public var cb: [UInt8]
    public var cr: [UInt8]

    public var chromaWidth: Int { (width + 1) / 2 }
    public var chromaHeight: Int { (height + 1) / 2 }

    /// A black picture (Y′ 16, Cb Cr 128) of `width × height` (each ≥ 1).
    public init(width: Int, height: Int) {
        precondition(width > 0 && height > 0, "YUVFrame needs a positive size")
        self.width = width
        self.height = height
        y = [UInt8](repeating: 16, count: width * height)
        let c = ((width + 1) / 2) * ((height + 1) / 2)
        cb = [UInt8](repeating: 128, count: c)
        cr = [UInt8](repeating: 128, count: c)
    }
}

extension YUVFrame {
    /// The picture as RGBA (BT.709 limited range in, full-range RGB out, chroma interpolated; alpha 255), as the
    /// RGBA paths would see it.
    /// - Throws: ``LapseError`` `.codec` when swscale cannot convert.
    public func rgba() throws -> PixelBuffer {
        var out = PixelBuffer(width: width, height: height)
        try y.withUnsafeBufferPointer { yp in
            try cb.withUnsafeBufferPointer { up in
                try cr.withUnsafeBufferPointer { vp in
                    try out.bytes.withUnsafeMutableBytes { raw in
                        var src: [UnsafePointer<UInt8>?] = [yp.baseAddress, up.baseAddress, vp.baseAddress, nil]
                        var srcStrides: [Int32] = [Int32(width), Int32(chromaWidth), Int32(chromaWidth), 0]
                        var dst: [UnsafeMutablePointer<UInt8>?] = [raw.baseAddress!.assumingMemoryBound(to: UInt8.self), nil, nil, nil]
                        var dstStrides: [Int32] = [Int32(width * 4), 0, 0, 0]
                        try Scaler().scale(src: &src, srcStrides: &srcStrides, srcWidth: width, srcHeight: height,
                                           srcFormat: AV_PIX_FMT_YUV420P, srcMatrix: SWS_CS_ITU709, srcFullRange: false,
                                           dst: &dst, dstStrides: &dstStrides, dstWidth: width, dstHeight: height,
                                           dstFormat: AV_PIX_FMT_RGBA, dstMatrix: SWS_CS_ITU709, dstFullRange: true)
                    }
                }
            }
        }
        return out
    }

    /// Copies the planes of a decoded `yuv420p` frame of the same size (any line sizes).
    package init(copying frame: Frame) {
        self.init(width: frame.width, height: frame.height)
        let planes = frame.planes, strides = frame.lineSizes
        func copy(_ plane: Int, _ w: Int, _ h: Int, into out: inout [UInt8]) {
            guard let src = planes[plane] else { return }
            let stride = Int(strides[plane])
            out.withUnsafeMutableBytes { dst in
                for row in 0..<h { (dst.baseAddress! + row * w).copyMemory(from: src + row * stride, byteCount: w) }
            }
        }
        copy(0, width, height, into: &y)
        copy(1, chromaWidth, chromaHeight, into: &cb)
        copy(2, chromaWidth, chromaHeight, into: &cr)
    }
}
