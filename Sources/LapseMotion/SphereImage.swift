// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia

/// A small equirectangular picture of a panorama for motion analysis: BT.709 luma at one of two sizes
/// (``standardWidth`` or, from a picture narrower than that, ``smallWidth``), normalised to mean 128 and standard
/// deviation 48 over the rows within 60° of the horizon (so an exposure step between two panoramas does not look
/// like motion), with a pyramid of half sizes down to 128 wide, and a 128 × 64 colour picture for comparing the
/// exposure of corresponding points (tone matching).
///
/// Why 1024 wide: between two frames a few metres apart most of the scene moves by well under a degree once the
/// rotation is removed, and the direction of travel rests on that parallax. At 512 wide (0.7° a pixel) the same
/// pair of real frames turned and unturned gave directions of travel 2.5° apart (median; 5.3° at the 75th
/// percentile, up to 30°); at 1024, 1.3° (2.3°, at most 5°), and a hyperlapse of 30 turned photos came out 0.5°
/// from the unturned one's instead of 0.8–1.1°. Street View's analysis picture stays its zoom-0 tile (512 wide,
/// one billed request).
///
/// Geometry: pixel (x, y) of a `width × height` level (width = 2 · height) looks along longitude
/// `λ = ((x + 0.5)/width − 0.5)·360°` (right of the centre column positive) and latitude
/// `φ = (0.5 − (y + 0.5)/height)·180°` (up positive); as a unit vector in the projection's frame
/// (x right, y down, z forward): `(cos φ sin λ, −sin φ, cos φ cos λ)`. Columns wrap around.
public struct SphereImage: Sendable {
    /// Width of the finest level in pixels (its height is half), from a picture at least as wide.
    public static let standardWidth = 1024
    /// Width of the finest level made from a picture narrower than ``standardWidth``.
    public static let smallWidth = 512
    /// The levels, finest first, each half the one before, the coarsest 128 wide.
    let levels: [Level]
    /// Mean R, G and B (0…255) over the rows within 60° of the horizon, each row weighted by the cosine of its
    /// latitude (its share of the sphere).
    @StoredAsDoubles public private(set) var channelMean: SIMD3<Double>
    /// R, G, B (0…255, linear in the stored values) at 128 × 64, each the mean of a block of the finest level (8 × 8
    /// at 1024 wide, 4 × 4 at 512).
    let colour: [SIMD3<Float>]
    static let colourWidth = 128

    /// The colour at a unit vector (bilinear between the pixels of ``colour``, so that the same point of the
    /// scene gives the same colour wherever the block grid falls on it).
    func colour(at d: SIMD3<Double>) -> SIMD3<Float> {
        let w = Self.colourWidth
        let h = w / 2
        let (x, y) = Self.pixel(of: d, width: w)
        let x0 = Int(x.rounded(.down))
        let y0 = Int(y.rounded(.down))
        let fx = Float(x - Double(x0))
        let fy = Float(y - Double(y0))
        func at(_ xi: Int, _ yi: Int) -> SIMD3<Float> { colour[min(max(yi, 0), h - 1) * w + (xi % w + w) % w] }
        let top = at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx
        let bottom = at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx
        return top * (1 - fy) + bottom * fy
    }

    var width: Int { levels[0].width }
    var height: Int { levels[0].height }

    /// One level of the pyramid.
    struct Level: Sendable {
        let width: Int, height: Int
        /// Luma, row by row.
        let pixels: [Float]

        @inline(__always) func at(_ x: Int, _ y: Int) -> Float { pixels[y * width + x] }

        /// Bilinear sample at pixel coordinates (pixel centres at whole numbers), wrapping columns and clamping rows.
        @inline(__always) func sample(_ x: Float, _ y: Float) -> Float {
            let yc = min(max(y, 0), Float(height - 1))
            let fx = x.rounded(.down)
            let fy = min(yc.rounded(.down), Float(height - 2))
            let ax = x - fx
            let ay = yc - fy
            var x0 = Int(fx) % width
            if x0 < 0 { x0 += width }
            let x1 = x0 + 1 == width ? 0 : x0 + 1
            let y0 = Int(fy)
            let r0 = y0 * width
            let r1 = r0 + width
            let top = pixels[r0 + x0] + (pixels[r0 + x1] - pixels[r0 + x0]) * ax
            let bottom = pixels[r1 + x0] + (pixels[r1 + x1] - pixels[r1 + x0]) * ax
            return top + (bottom - top) * ay
        }

        /// The `(2r+1)²` bilinear samples around (x, y) with the same fractional offset, row by row, into `out`:
        /// one wrap of the columns and clamp of the rows a sample, no division. Rows are written four samples at a
        /// time, so up to three floats past the last sample may be written too: `o` must have room for
        /// `(2r+1)² + 3`.
        @inline(__always) func window(x: Float, y: Float, radius r: Int, into o: UnsafeMutablePointer<Float>) {
            let fx = x.rounded(.down)
            let fy = y.rounded(.down)
            let ax = x - fx
            let ay = y - fy
            let side = 2 * r + 1
            var x0 = (Int(fx) - r) % width
            if x0 < 0 { x0 += width }
            let y0 = Int(fy) - r
            // Each row in steps of four samples (the last step may reach up to three samples past the row: the next
            // row overwrites them, and past the last row `o` has room for them).
            let span = (side + 3) & ~3
            if x0 + span < width, y0 >= 0, y0 + side < height {
                // Neither wrapping nor clamping (nearly every window): whole rows, the same arithmetic.
                let vx = SIMD4(repeating: ax)
                let vy = SIMD4(repeating: ay)
                pixels.withUnsafeBufferPointer { p in
                    var k = 0
                    for j in 0..<side {
                        let a = p.baseAddress! + (y0 + j) * width + x0
                        let b = a + width
                        for i in stride(from: 0, to: span, by: 4) {
                            let a0 = load4(a + i)
                            let a1 = load4(a + i + 1)
                            let b0 = load4(b + i)
                            let b1 = load4(b + i + 1)
                            let top = a0 + (a1 - a0) * vx
                            let bottom = b0 + (b1 - b0) * vx
                            UnsafeMutableRawPointer(o + k + i).storeBytes(
                                of: top + (bottom - top) * vy, as: SIMD4<Float>.self)
                        }
                        k += side
                    }
                }
                return
            }
            // The window's columns and their right neighbours, wrapping around.
            withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * side) { columns in
                var xa = x0
                for i in 0..<side {
                    let xb = xa + 1 == width ? 0 : xa + 1
                    columns[i] = xa
                    columns[side + i] = xb
                    xa = xb
                }
                pixels.withUnsafeBufferPointer { p in
                    var k = 0
                    for j in 0..<side {
                        let ya = min(max(y0 + j, 0), height - 1)
                        let yb = min(max(y0 + j + 1, 0), height - 1)
                        let ra = ya * width
                        let rb = yb * width
                        for i in 0..<side {
                            let xa = columns[i]
                            let xb = columns[side + i]
                            let top = p[ra + xa] + (p[ra + xb] - p[ra + xa]) * ax
                            let bottom = p[rb + xa] + (p[rb + xb] - p[rb + xa]) * ax
                            o[k + i] = top + (bottom - top) * ay
                        }
                        k += side
                    }
                }
            }
        }

        /// Half the size, each pixel the mean of a 2×2 block.
        func halved() -> Level {
            let w = width / 2
            let h = height / 2
            let out = [Float](unsafeUninitializedCapacity: w * h) { out, count in
                pixels.withUnsafeBufferPointer { p in
                    for y in 0..<h {
                        let above = p.baseAddress! + 2 * y * width
                        let below = above + width
                        let row = out.baseAddress! + y * w
                        for x in 0..<w {
                            row[x] = (above[2 * x] + above[2 * x + 1] + below[2 * x] + below[2 * x + 1]) * 0.25
                        }
                    }
                }
                count = w * h
            }
            return Level(width: w, height: h, pixels: out)
        }
    }

    /// Makes the analysis picture of an equirectangular panorama (any size of at least 16 × 8; normally 2:1).
    /// - Parameter pixels: the panorama; scaled (area averaging) to ``standardWidth`` × half, or to
    ///   ``smallWidth`` × half when it is narrower than ``standardWidth``.
    /// - Throws: ``LapseError`` `.codec` when the scaling cannot be set up.
    public init(_ pixels: PixelBuffer) throws {
        let w = pixels.width >= Self.standardWidth ? Self.standardWidth : Self.smallWidth
        let h = w / 2
        let small = pixels.width == w && pixels.height == h ? pixels : try pixels.resized(width: w, height: h)
        let cw = Self.colourWidth
        let ch = cw / 2
        let block = w / cw
        var sum = SIMD3<Double>(repeating: 0)
        var weight = 0.0
        // Sums of 8-bit values are kept as integers (exact: the same totals as adding them as Double or Float, at a
        // fraction of the cost); each row's cos-weighted sum goes to Double as before.
        var blocks = [SIMD3<Int32>](repeating: .zero, count: cw * ch)
        let luma = [Float](unsafeUninitializedCapacity: w * h) { out, count in
            small.bytes.withUnsafeBufferPointer { b in
                blocks.withUnsafeMutableBufferPointer { blocks in
                    for y in 0..<h {
                        var rowR = 0
                        var rowG = 0
                        var rowB = 0
                        let row = b.baseAddress! + y * w * 4
                        let lumaRow = out.baseAddress! + y * w
                        let blockRow = blocks.baseAddress! + (y / block) * cw
                        // Block by block (no division a pixel).
                        for bx in 0..<cw {
                            // Three scalar sums (a SIMD3<Int32> sum is shuffled in and out of a register a pixel).
                            var sumR: Int32 = 0
                            var sumG: Int32 = 0
                            var sumB: Int32 = 0
                            for x in bx * block..<(bx + 1) * block {
                                let r = Int32(row[4 * x])
                                let g = Int32(row[4 * x + 1])
                                let bl = Int32(row[4 * x + 2])
                                lumaRow[x] = 0.2126 * Float(r) + 0.7152 * Float(g) + 0.0722 * Float(bl)
                                sumR &+= r
                                sumG &+= g
                                sumB &+= bl
                            }
                            rowR += Int(sumR)
                            rowG += Int(sumG)
                            rowB += Int(sumB)
                            blockRow[bx] &+= SIMD3(sumR, sumG, sumB)
                        }
                        if let rowWeight = Self.meanWeight(row: y, height: h) {
                            sum += SIMD3<Double>(Double(rowR), Double(rowG), Double(rowB)) * rowWeight
                            weight += rowWeight * Double(w)
                        }
                    }
                }
            }
            count = w * h
        }
        let n = Float(block * block)
        let colour = blocks.map { SIMD3<Float>(Float($0.x), Float($0.y), Float($0.z)) / n }
        self.init(luma: luma, width: w, channelMean: sum / weight, colour: colour)
    }

    /// Makes the analysis picture of an equirectangular panorama decoded as Y′CbCr (BT.709, limited range, as a
    /// video's frames come) without converting the whole frame to RGBA first: Y′ and chroma averaged over blocks
    /// to the analysis size, each such pixel turned into R′G′B′ (ITU-R BT.709-6; clipped to 0…255 as the RGBA
    /// path clips, which matters: a blown sky is a quarter of a car video's pixels above 255), then as ``init(_:)``
    /// from there. A frame that is not `2048·k × 1024·k` (k ≥ 1) is converted to RGBA and made by ``init(_:)``.
    /// - Throws: ``LapseError`` `.codec` when the conversion to RGBA is needed and fails.
    public init(_ frame: YUVFrame) throws { try self.init(frame, eightWide: true) }

    /// As ``init(_:)-(YUVFrame)``; `eightWide` false makes a 2048-wide frame's picture pixel by pixel, as the
    /// eight-wide rows (``reduceRow8(y:yStride:cb:cr:luma:blocks:colour:)``) must, to the last bit.
    init(_ frame: YUVFrame, eightWide: Bool) throws {
        let w = Self.standardWidth
        let h = w / 2
        guard Self.reducesDirectly(width: frame.width, height: frame.height) else {
            try self.init(frame.rgba())
            return
        }
        let f = frame.width / w
        let cf = f / 2
        let fw = frame.width
        let cw = frame.chromaWidth
        let lumaScale = 1 / Float(f * f)
        let chromaScale = 1 / Float(cf * cf)
        var luma = [Float](repeating: 0, count: w * h)
        let ccw = Self.colourWidth
        let cch = ccw / 2
        let block = w / ccw
        var colour = [SIMD3<Float>](repeating: .zero, count: ccw * cch)
        var sum = SIMD3<Double>(repeating: 0)
        var weight = 0.0
        // Row y's R′G′B′ sum into the channel means (``meanWeight(row:height:)``).
        func addRow(_ y: Int, _ rowSum: SIMD3<Float>) {
            guard let rowWeight = Self.meanWeight(row: y, height: h) else { return }
            sum += SIMD3<Double>(Double(rowSum.x), Double(rowSum.y), Double(rowSum.z)) * rowWeight
            weight += rowWeight * Double(w)
        }
        frame.y.withUnsafeBufferPointer { yp in
            frame.cb.withUnsafeBufferPointer { up in
                frame.cr.withUnsafeBufferPointer { vp in
                    if eightWide, f == 2, block == 8 {
                        // A 2048-wide video: a colour block's eight pixels at a time (the same arithmetic a pixel).
                        luma.withUnsafeMutableBufferPointer { lp in
                            colour.withUnsafeMutableBufferPointer { cp in
                                for y in 0..<h {
                                    let rowSum = Self.reduceRow8(
                                        y: yp.baseAddress! + 2 * y * fw, yStride: fw, cb: up.baseAddress! + y * cw,
                                        cr: vp.baseAddress! + y * cw, luma: lp.baseAddress! + y * w, blocks: ccw,
                                        colour: cp.baseAddress! + (y / block) * ccw)
                                    addRow(y, rowSum)
                                }
                            }
                        }
                        return
                    }
                    for y in 0..<h {
                        var rowSum = SIMD3<Float>(repeating: 0)
                        for x in 0..<w {
                            var ys = 0
                            var us = 0
                            var vs = 0
                            for j in 0..<f {
                                let row = (y * f + j) * fw + x * f
                                for i in 0..<f { ys += Int(yp[row + i]) }
                            }
                            for j in 0..<cf {
                                let row = (y * cf + j) * cw + x * cf
                                for i in 0..<cf {
                                    us += Int(up[row + i])
                                    vs += Int(vp[row + i])
                                }
                            }
                            let l = 1.164384 * (Float(ys) * lumaScale - 16)
                            let b = Float(us) * chromaScale - 128
                            let r = Float(vs) * chromaScale - 128
                            // Clipped to 0…255 lane by lane (pointwiseMin/Max are not inlined: a call a pixel).
                            var c = SIMD3(l + 1.792741 * r, l - 0.213249 * b - 0.532909 * r, l + 2.112402 * b)
                            c.replace(with: SIMD3<Float>(), where: c .< SIMD3<Float>())
                            c.replace(with: SIMD3(repeating: 255), where: c .> SIMD3(repeating: 255))
                            luma[y * w + x] = 0.2126 * c.x + 0.7152 * c.y + 0.0722 * c.z
                            colour[(y / block) * ccw + x / block] += c
                            rowSum += c
                        }
                        addRow(y, rowSum)
                    }
                }
            }
        }
        let n = Float(block * block)
        self.init(luma: luma, width: w, channelMean: sum / weight, colour: colour.map { $0 / n })
    }

    /// One analysis row of a 2048-wide Y′CbCr frame, eight pixels (one colour block) at a time: each pixel the
    /// mean of its 2 × 2 luma and its chroma sample, turned into R′G′B′ (BT.709, limited range, clipped to 0…255) as
    /// ``init(_:)-(YUVFrame)`` does a pixel; its luma written to `luma`, its R′G′B′ added to its block of `colour`
    /// pixel by pixel. Returns the row's R′G′B′ sum, added pixel by pixel: every value as the scalar loop makes it.
    @inline(__always)
    private static func reduceRow8(
        y yRow: UnsafePointer<UInt8>, yStride: Int, cb: UnsafePointer<UInt8>, cr: UnsafePointer<UInt8>,
        luma: UnsafeMutablePointer<Float>, blocks: Int, colour: UnsafeMutablePointer<SIMD3<Float>>
    ) -> SIMD3<Float> {
        let zero = SIMD8<Float>()
        let top = SIMD8<Float>(repeating: 255)
        var row = SIMD3<Float>()
        for bx in 0..<blocks {
            let a = UnsafeRawPointer(yRow + 16 * bx).loadUnaligned(as: SIMD16<UInt8>.self)
            let b = UnsafeRawPointer(yRow + yStride + 16 * bx).loadUnaligned(as: SIMD16<UInt8>.self)
            let a16 = SIMD16<UInt16>(truncatingIfNeeded: a)
            let b16 = SIMD16<UInt16>(truncatingIfNeeded: b)
            let ys = (a16.evenHalf &+ a16.oddHalf) &+ (b16.evenHalf &+ b16.oddHalf)
            let u = UnsafeRawPointer(cb + 8 * bx).loadUnaligned(as: SIMD8<UInt8>.self)
            let v = UnsafeRawPointer(cr + 8 * bx).loadUnaligned(as: SIMD8<UInt8>.self)
            let l = 1.164384 * (SIMD8<Float>(ys) * 0.25 - 16)
            let bb = SIMD8<Float>(u) - 128
            let rr = SIMD8<Float>(v) - 128
            var red = l + 1.792741 * rr
            var green = l - 0.213249 * bb - 0.532909 * rr
            var blue = l + 2.112402 * bb
            red.replace(with: zero, where: red .< zero)
            red.replace(with: top, where: red .> top)
            green.replace(with: zero, where: green .< zero)
            green.replace(with: top, where: green .> top)
            blue.replace(with: zero, where: blue .< zero)
            blue.replace(with: top, where: blue .> top)
            UnsafeMutableRawPointer(luma + 8 * bx).storeBytes(
                of: 0.2126 * red + 0.7152 * green + 0.0722 * blue, as: SIMD8<Float>.self)
            // The sums pixel by pixel, in the scalar loop's order (the same totals to the last bit).
            var block = colour[bx]
            for i in 0..<8 {
                let c = SIMD3(red[i], green[i], blue[i])
                block += c
                row += c
            }
            colour[bx] = block
        }
        return row
    }

    /// The weight of row `y` of an analysis picture `height` rows high in its channel means: the cosine of the row's
    /// latitude when it lies within 60° of the horizon (each row then counts for the area it covers), nil beyond
    /// (the sky and the ground nearest the poles left out).
    static func meanWeight(row y: Int, height h: Int) -> Double? {
        let latitude = (0.5 - (Double(y) + 0.5) / Double(h)) * .pi
        return abs(latitude) <= .pi / 3 ? cos(latitude) : nil
    }

    /// Whether ``init(_:)-(YUVFrame)`` reduces a Y′CbCr frame of this size straight to the analysis size
    /// (`2048·k × 1024·k`, k ≥ 1) rather than converting it to RGBA first.
    public static func reducesDirectly(width: Int, height: Int) -> Bool {
        width % (2 * standardWidth) == 0 && height * 2 == width
    }

    /// The picture from its luma at `width × width/2` (normalised here: mean 128, deviation 48 over the rows within
    /// 60° of the horizon, cos-weighted) and its colour statistics.
    private init(luma unnormalised: [Float], width w: Int, channelMean: SIMD3<Double>, colour: [SIMD3<Float>]) {
        let h = w / 2
        var luma = unnormalised
        var lumaSum = 0.0
        var lumaSquares = 0.0
        var lumaWeight = 0.0
        luma.withUnsafeBufferPointer { p in
            for y in 0..<h {
                let latitude = (0.5 - (Double(y) + 0.5) / Double(h)) * .pi
                guard abs(latitude) <= .pi / 3 else { continue }
                var s = 0.0
                var q = 0.0
                let row = p.baseAddress! + y * w
                for x in 0..<w {
                    let v = Double(row[x])
                    s += v
                    q += v * v
                }
                lumaSum += s * cos(latitude)
                lumaSquares += q * cos(latitude)
                lumaWeight += Double(w) * cos(latitude)
            }
        }
        let lumaMean = lumaSum / lumaWeight
        let lumaDeviation = max(1, (lumaSquares / lumaWeight - lumaMean * lumaMean).squareRoot())
        let gain = Float(48 / lumaDeviation)
        let offset = Float(128 - lumaMean * 48 / lumaDeviation)
        luma.withUnsafeMutableBufferPointer { p in
            for i in p.indices { p[i] = p[i] * gain + offset }
        }
        var levels = [Level(width: w, height: h, pixels: luma)]
        while levels.last!.width > 128 { levels.append(levels.last!.halved()) }
        self.init(levels: levels, channelMean: channelMean, colour: colour)
    }

    private init(levels: [Level], channelMean: SIMD3<Double>, colour: [SIMD3<Float>]) {
        self.levels = levels
        self.channelMean = channelMean
        self.colour = colour
    }

    /// This picture at `width` (one of its levels' widths, from ``smallWidth`` up): its finer levels left off, so
    /// that two pictures of different sizes are compared at the smaller one's.
    func reduced(toWidth width: Int) -> SphereImage {
        guard let k = levels.firstIndex(where: { $0.width == width }), k > 0 else { return self }
        return SphereImage(levels: Array(levels[k...]), channelMean: channelMean, colour: colour)
    }

    // MARK: Geometry

    /// The unit vector of pixel coordinates (x, y) on a level `width` wide.
    @inline(__always)
    static func direction(x: Double, y: Double, width: Int) -> SIMD3<Double> {
        let height = Double(width / 2)
        let longitude = ((x + 0.5) / Double(width) - 0.5) * 2 * .pi
        let latitude = (0.5 - (y + 0.5) / height) * .pi
        return SIMD3(cos(latitude) * sin(longitude), -sin(latitude), cos(latitude) * cos(longitude))
    }

    /// Pixel coordinates on a level `width` wide of the unit vector `d` (x in [−0.5, width − 0.5)).
    @inline(__always)
    static func pixel(of d: SIMD3<Double>, width: Int) -> (x: Double, y: Double) {
        let height = Double(width / 2)
        let longitude = atan2(d.x, d.z)
        let latitude = asin(min(1, max(-1, -d.y)))
        return ((longitude / (2 * .pi) + 0.5) * Double(width) - 0.5, (0.5 - latitude / .pi) * height - 0.5)
    }
}

/// Four floats from `p` on (any alignment).
@inline(__always) private func load4(_ p: UnsafePointer<Float>) -> SIMD4<Float> {
    UnsafeRawPointer(p).loadUnaligned(as: SIMD4<Float>.self)
}
