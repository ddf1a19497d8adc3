// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg

/// A picture in 8-bit planar Y′CbCr 4:2:0 (`yuv420p`), BT.709 matrix, limited range (luma 16…235, chroma
/// 16…240), the form the encoder takes: luma `width × height`, each chroma plane `chromaWidth × chromaHeight`
/// (half of each, rounded up), rows packed without padding. The projector resamples each plane on its own grid
/// (as ffmpeg's `v360` does), which places chroma within half a luma pixel of where H.264's siting puts it.
public struct YUVFrame: Sendable, Equatable {
    /// Luma width in pixels.
    public let width: Int
    /// Luma height in pixels.
    public let height: Int
    /// Luma (Y′), `width × height` bytes, row by row, limited range (16–235).
    public var y: [UInt8]
    /// Blue-difference chroma (Cb), `chromaWidth × chromaHeight` bytes, row by row, limited range (16–240).
    public var cb: [UInt8]
    /// Red-difference chroma (Cr), as ``cb``.
    public var cr: [UInt8]

    /// Chroma width: half the luma's, rounded up.
    public var chromaWidth: Int { (width + 1) / 2 }
    /// Chroma height: half the luma's, rounded up.
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

    /// A picture of `width × height` (each ≥ 1) whose pixels are unset until written (a canvas filled in parts).
    package init(uninitializedWidth width: Int, height: Int) {
        precondition(width > 0 && height > 0, "YUVFrame needs a positive size")
        self.width = width
        self.height = height
        func plane(_ count: Int) -> [UInt8] {
            [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
        }
        y = plane(width * height)
        cb = plane(((width + 1) / 2) * ((height + 1) / 2))
        cr = plane(((width + 1) / 2) * ((height + 1) / 2))
    }
}

extension YUVFrame {
    /// The picture as RGBA (BT.709 limited range in, full-range RGB out, chroma interpolated; alpha 255), as the
    /// RGBA paths would see it.
    /// - Throws: ``LapseError`` `.codec` when swscale cannot convert.
    public func rgba() throws -> PixelBuffer { try rgba(width: width, height: height) }

    /// The picture as RGBA at `width × height`, scaled and converted in one swscale pass (area averaging when
    /// smaller, bicubic when larger), as ``rgba()`` converts.
    /// - Throws: ``LapseError`` `.codec` when swscale cannot convert.
    public func rgba(width outputWidth: Int, height outputHeight: Int) throws -> PixelBuffer {
        var out = PixelBuffer(width: outputWidth, height: outputHeight)
        try y.withUnsafeBufferPointer { yp in
            try cb.withUnsafeBufferPointer { up in
                try cr.withUnsafeBufferPointer { vp in
                    try out.bytes.withUnsafeMutableBytes { raw in
                        var src: [UnsafePointer<UInt8>?] = [yp.baseAddress, up.baseAddress, vp.baseAddress, nil]
                        var srcStrides: [Int32] = [Int32(width), Int32(chromaWidth), Int32(chromaWidth), 0]
                        var dst: [UnsafeMutablePointer<UInt8>?] = [
                            raw.baseAddress!.assumingMemoryBound(to: UInt8.self), nil, nil, nil
                        ]
                        var dstStrides: [Int32] = [Int32(outputWidth * 4), 0, 0, 0]
                        let smaller = outputWidth < width || outputHeight < height
                        try Scaler().scale(
                            src: &src, srcStrides: &srcStrides, srcWidth: width, srcHeight: height,
                            srcFormat: AV_PIX_FMT_YUV420P, srcMatrix: SWS_CS_ITU709, srcFullRange: false,
                            dst: &dst, dstStrides: &dstStrides, dstWidth: outputWidth, dstHeight: outputHeight,
                            dstFormat: AV_PIX_FMT_RGBA, dstMatrix: SWS_CS_ITU709, dstFullRange: true,
                            flags: smaller ? SWS_AREA : SWS_BICUBIC)
                    }
                }
            }
        }
        return out
    }

    /// An RGBA picture (full-range R′G′B′, alpha ignored) as the encoder's Y′CbCr: BT.709 limited range 4:2:0, by
    /// swscale (as ``VideoEncoder`` converts the RGBA frames it is given).
    /// - Throws: ``LapseError`` `.codec` when swscale cannot convert.
    public init(rgba pixels: PixelBuffer) throws {
        self.init(width: pixels.width, height: pixels.height)
        let width = pixels.width
        let height = pixels.height
        let cw = chromaWidth
        try pixels.bytes.withUnsafeBytes { raw in
            try y.withUnsafeMutableBufferPointer { yp in
                try cb.withUnsafeMutableBufferPointer { up in
                    try cr.withUnsafeMutableBufferPointer { vp in
                        let src: [UnsafePointer<UInt8>?] = [
                            raw.baseAddress!.assumingMemoryBound(to: UInt8.self), nil, nil, nil
                        ]
                        let srcStrides: [Int32] = [Int32(width * 4), 0, 0, 0]
                        let dst: [UnsafeMutablePointer<UInt8>?] = [yp.baseAddress, up.baseAddress, vp.baseAddress, nil]
                        let dstStrides: [Int32] = [Int32(width), Int32(cw), Int32(cw), 0]
                        try Scaler().scale(
                            src: src, srcStrides: srcStrides, srcWidth: width, srcHeight: height,
                            srcFormat: AV_PIX_FMT_RGBA, srcFullRange: true,
                            dst: dst, dstStrides: dstStrides, dstWidth: width, dstHeight: height,
                            dstFormat: AV_PIX_FMT_YUV420P, dstMatrix: SWS_CS_ITU709, dstFullRange: false)
                    }
                }
            }
        }
    }

    /// Copies the planes of a decoded `yuv420p` frame (any line sizes), with `bottom`'s below them when given (a
    /// frame as wide; `top` then of an even height, so that each chroma plane stacks too), into `spare`'s planes
    /// when it is of the picture's size (memory already mapped, written over in place where no one else holds it),
    /// else into new ones. A plane missing from a frame is left black.
    init(copying top: Frame, above bottom: Frame? = nil, reusing spare: consuming YUVFrame? = nil) {
        precondition(
            bottom.map { $0.width == top.width && top.height % 2 == 0 } ?? true,
            "YUVFrame(copying:above:): widths differ or odd height")
        let frames = [top] + (bottom.map { [$0] } ?? [])
        let whole = frames.allSatisfy { $0.planes[0] != nil && $0.planes[1] != nil && $0.planes[2] != nil }
        let height = top.height + (bottom?.height ?? 0)
        if whole, let spare = spare.take(), spare.width == top.width, spare.height == height {
            self = spare
        } else if whole {
            // Every byte is written below.
            self.init(uninitializedWidth: top.width, height: height)
        } else {
            self.init(width: top.width, height: height)
        }
        var row = 0
        for frame in frames {
            let planes = frame.planes
            let strides = frame.lineSizes
            let w = width
            let cw = chromaWidth
            let ch = (frame.height + 1) / 2
            func copy(_ plane: Int, _ w: Int, _ h: Int, from first: Int, into out: inout [UInt8]) {
                guard let src = planes[plane] else { return }
                let stride = Int(strides[plane])
                out.withUnsafeMutableBytes { dst in
                    for r in 0..<h {
                        (dst.baseAddress! + (first + r) * w).copyMemory(from: src + r * stride, byteCount: w)
                    }
                }
            }
            copy(0, w, frame.height, from: row, into: &y)
            copy(1, cw, ch, from: row / 2, into: &cb)
            copy(2, cw, ch, from: row / 2, into: &cr)
            row += frame.height
        }
    }
}

extension YUVFrame {
    /// R′G′B′ (0…1) to (E′Y, E′Pb, E′Pr) for a matrix's Kr and Kb (ITU-T H.273): E′Y = Kr·R′ + (1 − Kr − Kb)·G′ +
    /// Kb·B′, E′Pb = (B′ − E′Y) / (2(1 − Kb)), E′Pr = (R′ − E′Y) / (2(1 − Kr)); rows of a 3 × 3 matrix.
    package static func yPbPr(kr: Double, kb: Double) -> [[Double]] {
        let kg = 1 - kr - kb
        return [
            [kr, kg, kb],
            [-kr / (2 * (1 - kb)), -kg / (2 * (1 - kb)), 0.5],
            [0.5, -kg / (2 * (1 - kr)), -kb / (2 * (1 - kr))]
        ]
    }

    /// The inverse of ``yPbPr(kr:kb:)``: R′ = E′Y + 2(1 − Kr)·E′Pr, B′ = E′Y + 2(1 − Kb)·E′Pb,
    /// G′ = (E′Y − Kr·R′ − Kb·B′) / Kg.
    package static func rgb(kr: Double, kb: Double) -> [[Double]] {
        let kg = 1 - kr - kb
        return [
            [1, 0, 2 * (1 - kr)],
            [1, -2 * kb * (1 - kb) / kg, -2 * kr * (1 - kr) / kg],
            [1, 2 * (1 - kb), 0]
        ]
    }

    /// `a · b` of 3 × 3 matrices (rows).
    package static func product(_ a: [[Double]], _ b: [[Double]]) -> [[Double]] {
        (0..<3).map { i in (0..<3).map { j in (0..<3).reduce(0) { $0 + a[i][$1] * b[$1][j] } } }
    }
}

extension YUVFrame {
    /// Maps every pixel's R′G′B′ (full range 0…255, as ``rgba()`` sees them: BT.709 limited range in, clipped) through
    /// a table per channel and back, in one pass without an RGBA picture: each luma pixel from its own R′G′B′ (its
    /// luma with its 2 × 2 block's chroma), each chroma sample from the mean R′G′B′ of its block, in 16-bit
    /// fixed point, rounded (BT.709: Kr 0.2126, Kb 0.0722).
    /// - Parameter tables: 256 entries each for R′, G′ and B′.
    package mutating func mapRGB(_ tables: [[UInt8]]) {
        precondition(tables.count == 3 && tables.allSatisfy { $0.count == 256 })
        func fixed(_ v: Double) -> Int32 { Int32((v * 65536).rounded()) }
        // Limited-range Y′CbCr to R′G′B′ (ITU-R BT.709 with 219/224 code values per unit).
        let ky = fixed(255.0 / 219)
        let kr = fixed(255.0 / 224 * 2 * (1 - 0.2126))
        let kb = fixed(255.0 / 224 * 2 * (1 - 0.0722))
        let kgb = fixed(255.0 / 224 * 2 * 0.0722 * (1 - 0.0722) / 0.7152)
        let kgr = fixed(255.0 / 224 * 2 * 0.2126 * (1 - 0.2126) / 0.7152)
        // And back.
        let yr = fixed(0.2126 * 219 / 255)
        let yg = fixed(0.7152 * 219 / 255)
        let yb = fixed(0.0722 * 219 / 255)
        let cbr = fixed(-0.2126 / (2 * (1 - 0.0722)) * 224 / 255)
        let cbg = fixed(-0.7152 / (2 * (1 - 0.0722)) * 224 / 255)
        let half = fixed(0.5 * 224 / 255)
        let crg = fixed(-0.7152 / (2 * (1 - 0.2126)) * 224 / 255)
        let crb = fixed(-0.0722 / (2 * (1 - 0.2126)) * 224 / 255)
        let cw = chromaWidth
        let ch = chromaHeight
        let w = width
        let h = height
        @inline(__always) func clamp(_ v: Int32) -> Int32 { min(255, max(0, v)) }
        tables[0].withUnsafeBufferPointer { tr in
            tables[1].withUnsafeBufferPointer { tg in
                tables[2].withUnsafeBufferPointer { tb in
                    y.withUnsafeMutableBufferPointer { yp in
                        cb.withUnsafeMutableBufferPointer { bp in
                            cr.withUnsafeMutableBufferPointer { rp in
                                for cy in 0..<ch {
                                    for cx in 0..<cw {
                                        let c = cy * cw + cx
                                        let pb = Int32(bp[c]) - 128
                                        let pr = Int32(rp[c]) - 128
                                        let dr = kr &* pr
                                        let db = kb &* pb
                                        let dg = -(kgb &* pb) &- kgr &* pr
                                        var sum = SIMD3<Int32>(0, 0, 0)
                                        var n: Int32 = 0
                                        for yy in 2 * cy..<min(2 * cy + 2, h) {
                                            for xx in 2 * cx..<min(2 * cx + 2, w) {
                                                let i = yy * w + xx
                                                let l = ky &* (Int32(yp[i]) - 16) &+ 32768
                                                let r = Int32(tr[Int(clamp((l &+ dr) >> 16))])
                                                let g = Int32(tg[Int(clamp((l &+ dg) >> 16))])
                                                let b = Int32(tb[Int(clamp((l &+ db) >> 16))])
                                                yp[i] = UInt8(
                                                    truncatingIfNeeded: clamp(
                                                        16 &+ ((yr &* r &+ yg &* g &+ yb &* b &+ 32768) >> 16)))
                                                sum &+= SIMD3(r, g, b)
                                                n += 1
                                            }
                                        }
                                        // The block's mean R′G′B′ in 16-bit fixed point over n.
                                        let r = sum.x
                                        let g = sum.y
                                        let b = sum.z
                                        let u = (Int64(cbr) * Int64(r) + Int64(cbg) * Int64(g) + Int64(half) * Int64(b))
                                        let v = (Int64(half) * Int64(r) + Int64(crg) * Int64(g) + Int64(crb) * Int64(b))
                                        let d = Int64(n) << 16
                                        func rounded(_ x: Int64) -> Int32 {
                                            Int32(x >= 0 ? (x + d / 2) / d : -((-x + d / 2) / d))
                                        }
                                        bp[c] = UInt8(truncatingIfNeeded: clamp(128 &+ rounded(u)))
                                        rp[c] = UInt8(truncatingIfNeeded: clamp(128 &+ rounded(v)))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

extension YUVFrame {
    /// Copies 4:2:0 planes of `width × height` (any line sizes) of matrix (Kr, Kb), full or limited range, as BT.709
    /// limited range in one pass, through a table per input value: full-range code values mapped to limited range
    /// (Y′ 16…235, Cb and Cr 16…240) and the matrix changed by `M = A_709 · A_from⁻¹` on (E′Y, E′Pb, E′Pr), where
    /// `A` is ``yPbPr(kr:kb:)`` (ITU-T H.273). Grey stays grey, so chroma depends on chroma alone; luma takes the
    /// chroma of its 2 × 2 block. One rounding. Written into `spare`'s planes when it is of that size.
    init(
        planes: [UnsafePointer<UInt8>?], lineSizes: [Int32], width: Int, height: Int, kr: Double, kb: Double,
        fullRange: Bool, reusing spare: consuming YUVFrame? = nil
    ) {
        guard planes.count >= 3, lineSizes.count >= 3, planes[0] != nil, planes[1] != nil, planes[2] != nil else {
            self.init(width: width, height: height)
            return
        }
        if let spare = spare.take(), spare.width == width, spare.height == height {
            self = spare
        } else {
            self.init(uninitializedWidth: width, height: height)
        }
        convert(from: planes, lineSizes: lineSizes, kr: kr, kb: kb, fullRange: fullRange)
    }

    /// This picture's own planes (4:2:0 of matrix (Kr, Kb), full or limited range) made BT.709 limited range in
    /// place, as ``init(planes:lineSizes:width:height:kr:kb:fullRange:)`` would copy them (each output sample depends
    /// only on the samples at its own place and its block's chroma, read before it is written).
    mutating func convertInPlace(kr: Double, kb: Double, fullRange: Bool) {
        convert(from: nil, lineSizes: [], kr: kr, kb: kb, fullRange: fullRange)
    }

    /// The conversion of `planes` (nil: this picture's own) into this picture.
    private mutating func convert(
        from planes: [UnsafePointer<UInt8>?]?, lineSizes: [Int32], kr: Double, kb: Double, fullRange: Bool
    ) {
        let m = Self.product(Self.yPbPr(kr: 0.2126, kb: 0.0722), Self.rgb(kr: kr, kb: kb))
        // Input code values to E′Y / E′P units of the limited-range output (219 and 224 code values a unit), in
        // 16-bit fixed point: luma's own value, and each chroma value's share of the output luma, Cb and Cr.
        let lumaScale = fullRange ? 219.0 / 255 : 1
        let chromaScale = fullRange ? 224.0 / 255 : 1
        func fixed(_ v: Double) -> Int32 { Int32((v * 65536).rounded()) }
        let luma = (0..<256).map { v in fixed(fullRange ? 16 + Double(v) * lumaScale : Double(v)) }
        func chromaTable(_ k: Double) -> [Int32] { (0..<256).map { fixed((Double($0) - 128) * chromaScale * k) } }
        let yFromB = chromaTable(m[0][1] * 219 / 224)
        let yFromR = chromaTable(m[0][2] * 219 / 224)
        let bFromB = chromaTable(m[1][1])
        let bFromR = chromaTable(m[1][2])
        let rFromB = chromaTable(m[2][1])
        let rFromR = chromaTable(m[2][2])
        let cw = chromaWidth
        let ch = chromaHeight
        let w = width
        let h = height
        let yStride = planes == nil ? w : Int(lineSizes[0])
        let bStride = planes == nil ? cw : Int(lineSizes[1])
        let rStride = planes == nil ? cw : Int(lineSizes[2])
        @inline(__always) func clamp(_ v: Int32) -> UInt8 { UInt8(truncatingIfNeeded: min(255, max(0, v))) }
        // The tables in one block of 7 × 256 entries, read through a pointer (an array read a sample would be bounds
        // checked: the compiler cannot know a UInt8 indexes 256 entries).
        let tables = luma + yFromB + yFromR + bFromB + bFromR + rFromB + rFromR
        tables.withUnsafeBufferPointer { t in
            let lumaT = t.baseAddress!
            let yB = lumaT + 256
            let yR = lumaT + 512
            let bB = lumaT + 768
            let bR = lumaT + 1024
            let rB = lumaT + 1280
            let rR = lumaT + 1536
            y.withUnsafeMutableBufferPointer { yp in
                cb.withUnsafeMutableBufferPointer { bp in
                    cr.withUnsafeMutableBufferPointer { rp in
                        let sy = planes?[0] ?? UnsafePointer(yp.baseAddress!)
                        let sb = planes?[1] ?? UnsafePointer(bp.baseAddress!)
                        let sr = planes?[2] ?? UnsafePointer(rp.baseAddress!)
                        for cy in 0..<ch {
                            let in0 = sy + 2 * cy * yStride
                            let in1 = in0 + yStride
                            let out0 = yp.baseAddress! + 2 * cy * w
                            let out1 = out0 + w
                            let twoRows = 2 * cy + 1 < h
                            let inB = sb + cy * bStride
                            let inR = sr + cy * rStride
                            let outB = bp.baseAddress! + cy * cw
                            let outR = rp.baseAddress! + cy * cw
                            // One 2 × 2 block (its right column and lower row where the picture has them).
                            @inline(__always) func block(_ cx: Int, right: Bool, below: Bool) {
                                let b = Int(inB[cx])
                                let r = Int(inR[cx])
                                let dy = yB[b] &+ yR[r] &+ 32768
                                let x = 2 * cx
                                out0[x] = clamp((lumaT[Int(in0[x])] &+ dy) >> 16)
                                if right { out0[x + 1] = clamp((lumaT[Int(in0[x + 1])] &+ dy) >> 16) }
                                if below {
                                    out1[x] = clamp((lumaT[Int(in1[x])] &+ dy) >> 16)
                                    if right { out1[x + 1] = clamp((lumaT[Int(in1[x + 1])] &+ dy) >> 16) }
                                }
                                outB[cx] = clamp(128 &+ ((bB[b] &+ bR[r] &+ 32768) >> 16))
                                outR[cx] = clamp(128 &+ ((rB[b] &+ rR[r] &+ 32768) >> 16))
                            }
                            // Whole blocks without a test (every block but the last of an odd width or height),
                            // then the rest.
                            let whole = twoRows ? w / 2 : 0
                            for cx in 0..<whole { block(cx, right: true, below: true) }
                            for cx in whole..<cw { block(cx, right: 2 * cx + 1 < w, below: twoRows) }
                        }
                    }
                }
            }
        }
    }
}
