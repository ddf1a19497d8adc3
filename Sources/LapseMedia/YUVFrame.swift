// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg

/// A picture in 8-bit planar Y′CbCr 4:2:0 (`yuv420p`), BT.709 matrix, limited range (luma 16…235, chroma
/// 16…240), the form the encoder takes: luma `width × height`, each chroma plane `chromaWidth × chromaHeight`
/// (half of each, rounded up), rows packed without padding. The projector resamples each plane on its own grid
/// (as ffmpeg's `v360` does), which places chroma within half a luma pixel of where H.264's siting puts it.
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
                        var dst: [UnsafeMutablePointer<UInt8>?] = [
                            raw.baseAddress!.assumingMemoryBound(to: UInt8.self), nil, nil, nil
                        ]
                        var dstStrides: [Int32] = [Int32(width * 4), 0, 0, 0]
                        try Scaler().scale(
                            src: &src, srcStrides: &srcStrides, srcWidth: width, srcHeight: height,
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
    init(copying frame: Frame) {
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

extension YUVFrame {
    /// Re-expresses limited-range Y′CbCr of one matrix (Kr, Kb) in another: `M = A_to · A_from⁻¹` on
    /// (E′Y, E′Pb, E′Pr), where `A` takes R′G′B′ to E′Y = Kr·R′ + (1 − Kr − Kb)·G′ + Kb·B′,
    /// E′Pb = (B′ − E′Y) / (2(1 − Kb)), E′Pr = (R′ − E′Y) / (2(1 − Kr)) (ITU-T H.273). Grey stays grey, so chroma
    /// depends on chroma alone; luma takes the chroma of its 2 × 2 block.
    mutating func convertMatrix(fromKr kr0: Double, kb kb0: Double, toKr kr1: Double, kb kb1: Double) {
        func forward(_ kr: Double, _ kb: Double) -> [[Double]] {
            let kg = 1 - kr - kb
            return [
                [kr, kg, kb],
                [-kr / (2 * (1 - kb)), -kg / (2 * (1 - kb)), 0.5],
                [0.5, -kg / (2 * (1 - kr)), -kb / (2 * (1 - kr))]
            ]
        }
        func inverse(_ kr: Double, _ kb: Double) -> [[Double]] {
            let kg = 1 - kr - kb
            // R′ = Y + 2(1 − Kr)·Pr, B′ = Y + 2(1 − Kb)·Pb, G′ = (Y − Kr·R′ − Kb·B′) / Kg.
            return [
                [1, 0, 2 * (1 - kr)],
                [1, -2 * kb * (1 - kb) / kg, -2 * kr * (1 - kr) / kg],
                [1, 2 * (1 - kb), 0]
            ]
        }
        let a = forward(kr1, kb1), b = inverse(kr0, kb0)
        var m = [[Double]](repeating: [0, 0, 0], count: 3)
        for i in 0..<3 { for j in 0..<3 { for k in 0..<3 { m[i][j] += a[i][k] * b[k][j] } } }
        // In code values: Y′ = 16 + 219·E′Y, C = 128 + 224·E′P; fixed point with 16 fractional bits, rounded.
        func fixed(_ v: Double) -> Int32 { Int32((v * 65536).rounded()) }
        let yb = fixed(m[0][1] * 219 / 224), yr = fixed(m[0][2] * 219 / 224)
        let bb = fixed(m[1][1]), br = fixed(m[1][2]), rb = fixed(m[2][1]), rr = fixed(m[2][2])
        let cw = chromaWidth, ch = chromaHeight, w = width, h = height
        @inline(__always) func clamp(_ v: Int32) -> UInt8 { UInt8(truncatingIfNeeded: min(255, max(0, v))) }
        y.withUnsafeMutableBufferPointer { yp in
            cb.withUnsafeMutableBufferPointer { bp in
                cr.withUnsafeMutableBufferPointer { rp in
                    let yBase = yp.baseAddress!, bBase = bp.baseAddress!, rBase = rp.baseAddress!
                    for cy in 0..<ch {
                        let row0 = yBase + 2 * cy * w
                        let row1 = 2 * cy + 1 < h ? row0 + w : nil
                        for cx in 0..<cw {
                            let c = cy * cw + cx
                            let pb = Int32(bBase[c]) - 128, pr = Int32(rBase[c]) - 128
                            let dy = (yb &* pb &+ yr &* pr &+ 32768) >> 16
                            let x = 2 * cx
                            row0[x] = clamp(Int32(row0[x]) &+ dy)
                            if x + 1 < w { row0[x + 1] = clamp(Int32(row0[x + 1]) &+ dy) }
                            if let row1 {
                                row1[x] = clamp(Int32(row1[x]) &+ dy)
                                if x + 1 < w { row1[x + 1] = clamp(Int32(row1[x + 1]) &+ dy) }
                            }
                            bBase[c] = clamp(128 &+ ((bb &* pb &+ br &* pr &+ 32768) >> 16))
                            rBase[c] = clamp(128 &+ ((rb &* pb &+ rr &* pr &+ 32768) >> 16))
                        }
                    }
                }
            }
        }
    }
}

extension YUVFrame {
    /// Full-range code values (0…255) to limited range: Y′ 16…235, Cb and Cr 16…240.
    mutating func limitRange() {
        let luma = (0..<256).map { UInt8((16 + Double($0) * 219 / 255).rounded()) }
        let chroma = (0..<256).map { UInt8((128 + (Double($0) - 128) * 224 / 255).rounded()) }
        func map(_ plane: inout [UInt8], _ table: [UInt8]) {
            table.withUnsafeBufferPointer { t in
                plane.withUnsafeMutableBufferPointer { p in
                    for i in 0..<p.count { p[i] = t[Int(p[i])] }
                }
            }
        }
        map(&y, luma)
        map(&cb, chroma)
        map(&cr, chroma)
    }
}
