// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia
import Synchronization

/// Renders perspective (rectilinear) views of equirectangular panoramas: the hot loop of a hyperlapse.
///
/// Table-based: for an output size, field of view, pitch and roll (and the panorama's tilt and roll), the
/// source position of every output pixel is computed once and cached; a change of heading alone on a level
/// panorama reuses the table as a horizontal shift of the source. Rows are rendered in bands across the
/// cores. The geometry is that of ffmpeg's `v360=input=e:output=flat` (see ``CameraPose``), sampled with
/// 8-bit fixed-point weights.
///
/// Seams and poles: source columns wrap around (the 0°/360° seam is seamless); the poles are the centres of the
/// first and last rows and rows are clamped there, so every output pixel samples real pixels (no black, no NaN)
/// at any pitch.
///
/// One projector may be used from several threads at once (the table cache is locked).
public final class Projector: Sendable {
    /// Output size in pixels.
    public let width: Int
    /// Output height in pixels.
    public let height: Int
    /// How source pixels are blended.
    public let interpolation: Interpolation
    /// What the panoramas given are: equirectangular pictures (the default), or the atlas of a GoPro MAX `.360`
    /// file's two streams (``GoProEAC``), sampled straight from its cube faces.
    public let source: SourceProjection

    /// Bytes a view takes for each output pixel while it is rendered and written: its table (8), the RGBA frame
    /// (4), the encoder's copies. Measured: views of 8192x8192 and 16000x16000 from a 5760x2880 photo peak at
    /// 1.1 GB and 5.0 GB.
    public static let bytesPerPixel = 20

    /// The latest tables used, least recently used first (tables are immutable once built).
    private let cache = Mutex<[ProjectionTable]>([])
    private let cacheLimit: Int

    /// - Parameters:
    ///   - width: output width in pixels, 1…16384.
    ///   - height: output height in pixels, 1…16384.
    ///   - interpolation: ``Interpolation/bilinear`` by default.
    ///   - cachedTables: how many tables to keep (each holds 8 bytes an output pixel); default 4.
    ///   - source: the panoramas' projection (``source``).
    /// - Throws: ``LapseError`` `.usage` for a size out of range.
    public init(
        width: Int, height: Int, interpolation: Interpolation = .bilinear, cachedTables: Int = 4,
        source: SourceProjection = .equirectangular
    ) throws {
        guard (1...16384).contains(width), (1...16384).contains(height) else {
            throw LapseError.usage("view size must be 1…16384 pixels each way, not \(width)x\(height)")
        }
        self.width = width
        self.height = height
        self.interpolation = interpolation
        self.cacheLimit = max(1, cachedTables)
        self.source = source
    }

    /// Renders the view `camera` of `panorama` into a new buffer of ``width`` × ``height``.
    /// - Parameters:
    ///   - panorama: an equirectangular image (2×2 to 32768×32768 pixels; normally 2:1). Its alpha is interpolated too.
    ///   - pose: how the panorama sits in the world (heading of its centre column, tilt, roll).
    ///   - camera: where to look; `fov` must be in (0, 180).
    /// - Throws: ``LapseError`` `.usage` for a field of view out of range, non-finite angles or a panorama
    ///   outside 2×2…32768×32768 pixels.
    /// - Returns: the view, RGBA, ``width`` × ``height``.
    public func render(_ panorama: PixelBuffer, pose: PanoramaPose = PanoramaPose(), camera: CameraPose) throws
        -> PixelBuffer
    {
        var out = PixelBuffer(width: width, height: height, fill: RGBA(0, 0, 0, 0))
        try render(panorama, pose: pose, camera: camera, into: &out)
        return out
    }

    /// As ``render(_:pose:camera:)``, writing into `output` (which must be ``width`` × ``height``), so a
    /// sequence of frames can reuse one buffer.
    public func render(
        _ panorama: PixelBuffer, pose: PanoramaPose = PanoramaPose(), camera: CameraPose,
        into output: inout PixelBuffer
    ) throws {
        let view = try prepare(sourceWidth: panorama.width, sourceHeight: panorama.height, pose: pose, camera: camera)
        try render(panorama, view: view, into: &output)
    }

    /// A view of a panorama of a given size, prepared once (its projection table and heading shift) so that
    /// ``footprint(_:cellWidth:cellHeight:)`` and ``render(_:view:)`` of one frame share it (however many other
    /// views are prepared in between).
    public struct PreparedView: Sendable {
        let table: ProjectionTable
        let shift: UInt32
        /// The panorama size the view is for, in pixels.
        public var sourceWidth: Int { table.key.sourceWidth }
        /// The panorama height the view is for, in pixels.
        public var sourceHeight: Int { table.key.sourceHeight }
    }

    /// Prepares the view `camera` of panoramas of `sourceWidth × sourceHeight` pixels posed `pose`.
    /// - Throws: as ``render(_:pose:camera:)``.
    public func prepare(
        sourceWidth: Int, sourceHeight: Int, pose: PanoramaPose = PanoramaPose(),
        camera: CameraPose
    ) throws -> PreparedView {
        let (table, shift) = try table(sourceWidth: sourceWidth, sourceHeight: sourceHeight, pose: pose, camera: camera)
        return PreparedView(table: table, shift: shift)
    }

    /// Renders a prepared view of `panorama` (which must have the view's source size) into a new buffer.
    /// - Throws: ``LapseError`` `.invalidInput` when the panorama's size is not the view's.
    public func render(_ panorama: PixelBuffer, view: PreparedView) throws -> PixelBuffer {
        var out = PixelBuffer(width: width, height: height, fill: RGBA(0, 0, 0, 0))
        try render(panorama, view: view, into: &out)
        return out
    }

    /// As ``render(_:view:)``, writing into `output` (``width`` × ``height``).
    public func render(_ panorama: PixelBuffer, view: PreparedView, into output: inout PixelBuffer) throws {
        precondition(
            output.width == width && output.height == height, "output buffer size differs from the projector's")
        guard panorama.width == view.sourceWidth, panorama.height == view.sourceHeight else {
            throw LapseError(
                .invalidInput, nil,
                """
                panorama of \(panorama.width)x\(panorama.height) pixels for a view prepared for \
                \(view.sourceWidth)x\(view.sourceHeight)
                """
            )
        }
        let table = view.table
        let shift = view.shift
        panorama.bytes.withUnsafeBytes { src in
            output.bytes.withUnsafeMutableBytes { dst in
                table.withTaps { tu, tv in
                    let s = src.bindMemory(to: UInt32.self).baseAddress!
                    let d = dst.bindMemory(to: UInt32.self).baseAddress!
                    switch interpolation {
                    case .bilinear:
                        Self.bilinear(
                            src: s, sw: panorama.width, dst: d, ow: width, oh: height,
                            tu: tu.baseAddress!, tv: tv.baseAddress!, shift: shift)
                    case .bicubic:
                        Self.fourTap(
                            src: s, sw: panorama.width, sh: panorama.height, dst: d, ow: width, oh: height,
                            tu: tu.baseAddress!, tv: tv.baseAddress!, shift: shift, weights: KernelWeights.bicubic)
                    case .lanczos:
                        Self.fourTap(
                            src: s, sw: panorama.width, sh: panorama.height, dst: d, ow: width, oh: height,
                            tu: tu.baseAddress!, tv: tv.baseAddress!, shift: shift, weights: KernelWeights.lanczos)
                    }
                }
            }
        }
    }

    /// Renders the view `camera` of a Y′CbCr panorama straight into a Y′CbCr frame of ``width`` × ``height``:
    /// each plane resampled on its own grid (luma at full resolution, chroma at its half), bilinear, with the
    /// same geometry as the RGBA render (as ffmpeg's `v360` does for `yuv420p`); the colour values are carried
    /// over as they are (the panorama must already be BT.709 limited range). Bilinear whatever ``interpolation``
    /// says.
    /// - Throws: as ``render(_:pose:camera:)``.
    public func render(_ panorama: YUVFrame, pose: PanoramaPose = PanoramaPose(), camera: CameraPose) throws -> YUVFrame
    {
        var out = YUVFrame(width: width, height: height)
        let (luma, lumaShift) = try table(
            sourceWidth: panorama.width, sourceHeight: panorama.height, pose: pose, camera: camera)
        let (chroma, chromaShift) = try table(
            sourceWidth: panorama.chromaWidth, sourceHeight: panorama.chromaHeight,
            pose: pose, camera: camera, outputWidth: out.chromaWidth, outputHeight: out.chromaHeight)
        Self.plane(panorama.y, width: panorama.width, into: &out.y, table: luma, shift: lumaShift)
        Self.plane(panorama.cb, width: panorama.chromaWidth, into: &out.cb, table: chroma, shift: chromaShift)
        Self.plane(panorama.cr, width: panorama.chromaWidth, into: &out.cr, table: chroma, shift: chromaShift)
        return out
    }

    /// One 8-bit plane through a table (bilinear, 8-bit weights, rounded), rows in bands across the cores.
    static func plane(
        _ source: [UInt8], width sw: Int, into output: inout [UInt8], table: ProjectionTable, shift: UInt32
    ) {
        let ow = table.key.outputWidth
        let oh = table.key.outputHeight
        let wrap = UInt32(sw - 1) << ProjectionTable.fractionBits
        source.withUnsafeBufferPointer { src in
            output.withUnsafeMutableBufferPointer { dst in
                table.withTaps { tu, tv in
                    // Safe to share across the bands: the source and tables are only read, and each band
                    // writes only its own output rows.
                    nonisolated(unsafe) let s = src.baseAddress!
                    nonisolated(unsafe) let d = dst.baseAddress!
                    nonisolated(unsafe) let u = tu.baseAddress!
                    nonisolated(unsafe) let v = tv.baseAddress!
                    RowBands.run(rows: oh) { rows in
                        for i in (rows.lowerBound * ow)..<(rows.upperBound * ow) {
                            var x = u[i] &+ shift
                            if x >= wrap { x &-= wrap }
                            let fx = x & 255
                            let fy = UInt32(bitPattern: v[i]) & 255
                            let top = UnsafeRawPointer(s + (Int(v[i] &>> 8) &* sw &+ Int(x &>> 8)))
                            // Both taps of a row in one load (little-endian: the left one low).
                            let t = UInt32(top.loadUnaligned(as: UInt16.self))
                            let bottom = UInt32(top.loadUnaligned(fromByteOffset: sw, as: UInt16.self))
                            let gx = 256 &- fx
                            let a = (t & 255) &* gx &+ (t &>> 8) &* fx
                            let b = (bottom & 255) &* gx &+ (bottom &>> 8) &* fx
                            d[i] = UInt8(truncatingIfNeeded: (a &* (256 &- fy) &+ b &* fy &+ 32768) &>> 16)
                        }
                    }
                }
            }
        }
    }

    /// Which parts of a `sourceWidth × sourceHeight` panorama the view `camera` reads: one flag per cell of a
    /// grid of `cellWidth × cellHeight` pixels laid over the image from its top-left corner, row by row
    /// (`ceil(sourceWidth / cellWidth)` cells a row). A cell is flagged when ``render(_:pose:camera:)`` reads at
    /// least one of its pixels: the same table and the same taps (2×2 for bilinear, 4×4 for the four-tap kernels),
    /// so a tiled source may fetch only the flagged tiles and leave the rest of the image unset.
    /// - Throws: as ``render(_:pose:camera:)``; `.usage` for a cell size under 1 pixel.
    public func footprint(
        sourceWidth: Int, sourceHeight: Int, pose: PanoramaPose = PanoramaPose(), camera: CameraPose,
        cellWidth: Int, cellHeight: Int
    ) throws -> [Bool] {
        try footprint(
            prepare(sourceWidth: sourceWidth, sourceHeight: sourceHeight, pose: pose, camera: camera),
            cellWidth: cellWidth, cellHeight: cellHeight)
    }

    /// ``footprint(sourceWidth:sourceHeight:pose:camera:cellWidth:cellHeight:)`` of a prepared view.
    public func footprint(_ view: PreparedView, cellWidth: Int, cellHeight: Int) throws -> [Bool] {
        guard cellWidth >= 1, cellHeight >= 1 else { throw LapseError.usage("cells must be at least 1×1 pixel") }
        // The taps around the sample's top-left neighbour (x0, y0), as render() reads them.
        let taps = interpolation == .bilinear ? (before: 0, after: 1) : (before: 1, after: 2)
        var cells = [Bool](
            repeating: false, count: Self.cellCount(view.sourceWidth, view.sourceHeight, cellWidth, cellHeight))
        Self.mark(
            &cells, table: view.table, shift: view.shift, cellWidth: cellWidth, cellHeight: cellHeight, taps: taps)
        return cells
    }

    /// What ``render(_:pose:camera:)-(YUVFrame,_,_)`` reads of a Y′CbCr panorama of `sourceWidth × sourceHeight`,
    /// as ``footprint(sourceWidth:sourceHeight:pose:camera:cellWidth:cellHeight:)``: a cell is flagged when the
    /// luma render reads one of its pixels or the chroma render one of its chroma samples (cells of half the size
    /// on the chroma planes, so `cellWidth` and `cellHeight` must be even).
    /// - Throws: as ``render(_:pose:camera:)``; `.usage` for a cell size under 2 pixels or odd.
    public func yuvFootprint(
        sourceWidth: Int, sourceHeight: Int, pose: PanoramaPose = PanoramaPose(), camera: CameraPose,
        cellWidth: Int, cellHeight: Int
    ) throws -> [Bool] {
        guard cellWidth >= 2, cellHeight >= 2, cellWidth % 2 == 0, cellHeight % 2 == 0 else {
            throw LapseError.usage("cells of a Y′CbCr footprint must be of even size")
        }
        let (luma, lumaShift) = try table(
            sourceWidth: sourceWidth, sourceHeight: sourceHeight, pose: pose, camera: camera)
        let cw = (sourceWidth + 1) / 2
        let ch = (sourceHeight + 1) / 2
        let (chroma, chromaShift) = try table(
            sourceWidth: cw, sourceHeight: ch, pose: pose, camera: camera, outputWidth: (width + 1) / 2,
            outputHeight: (height + 1) / 2)
        var cells = [Bool](repeating: false, count: Self.cellCount(sourceWidth, sourceHeight, cellWidth, cellHeight))
        let taps = (before: 0, after: 1)
        Self.mark(&cells, table: luma, shift: lumaShift, cellWidth: cellWidth, cellHeight: cellHeight, taps: taps)
        // The chroma planes' cells are the same cells at half the size (ceil(w/2) / (cw/2) = ceil(w/cw) of them).
        Self.mark(
            &cells, table: chroma, shift: chromaShift, cellWidth: cellWidth / 2, cellHeight: cellHeight / 2, taps: taps)
        return cells
    }

    static func cellCount(_ width: Int, _ height: Int, _ cellWidth: Int, _ cellHeight: Int) -> Int {
        ((width + cellWidth - 1) / cellWidth) * ((height + cellHeight - 1) / cellHeight)
    }

    /// Flags the cells of `cellWidth × cellHeight` (row by row over the table's source) that the taps of `table`
    /// read: per entry, the cells of its taps' columns (wrapping as render() does) and rows (clamped), looked up
    /// per column and row rather than divided; an entry with the same top-left tap as the one before is skipped.
    static func mark(
        _ cells: inout [Bool], table: ProjectionTable, shift: UInt32, cellWidth: Int, cellHeight: Int,
        taps: (before: Int, after: Int)
    ) {
        let sourceWidth = table.key.sourceWidth
        let sourceHeight = table.key.sourceHeight
        let columns = (sourceWidth + cellWidth - 1) / cellWidth
        let period = sourceWidth - 1
        let wrap = UInt32(period) << ProjectionTable.fractionBits
        let columnCell = (0..<sourceWidth).map { Int32($0 / cellWidth) }
        let rowStart = (0..<sourceHeight).map { Int32($0 / cellHeight * columns) }
        let (before, after) = taps
        cells.withUnsafeMutableBufferPointer { cells in
            columnCell.withUnsafeBufferPointer { columnCell in
                rowStart.withUnsafeBufferPointer { rowStart in
                    table.withTaps { tu, tv in
                        var lastX = -1
                        var lastY = -1
                        for i in 0..<tu.count {
                            var u = tu[i] &+ shift
                            if u >= wrap { u &-= wrap }
                            let x0 = Int(u >> 8)
                            let y0 = Int(tv[i] >> 8)
                            if x0 == lastX && y0 == lastY { continue }
                            lastX = x0
                            lastY = y0
                            for dy in -before...after {
                                let row = Int(rowStart[min(max(y0 + dy, 0), sourceHeight - 1)])
                                for dx in -before...after {
                                    // The four-tap wrap, as render().
                                    var x = x0 + dx
                                    if x < 0 { x = period - 1 } else if x > period { x = 1 }
                                    cells[row + Int(columnCell[x])] = true
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The cached (or new) table for this geometry and the source shift (fixed point) for the heading.
    func table(
        sourceWidth: Int, sourceHeight: Int, pose: PanoramaPose, camera: CameraPose,
        outputWidth: Int? = nil, outputHeight: Int? = nil
    ) throws -> (ProjectionTable, UInt32) {
        guard camera.fov > 0, camera.fov < 180 else {
            throw LapseError.usage("field of view must be more than 0 and less than 180 degrees, not \(camera.fov)")
        }
        guard [camera.heading, camera.pitch, camera.roll, pose.heading, pose.tilt, pose.roll].allSatisfy(\.isFinite)
        else {
            throw LapseError.usage("view angles must be finite numbers")
        }
        guard sourceWidth >= 2, sourceHeight >= 2 else {
            throw LapseError(.invalidInput, nil, "panorama of \(sourceWidth)x\(sourceHeight) pixels is too small")
        }
        // Fixed-point source positions (1/256 px) must stay below 2²³ (see ProjectionTable).
        guard sourceWidth <= 32768, sourceHeight <= 32768 else {
            throw LapseError(
                .invalidInput, nil, "panorama of \(sourceWidth)x\(sourceHeight) pixels is too large (32768 at most)")
        }
        let yaw = Self.normalized(camera.heading - pose.heading)
        // A cube map's columns are no longer headings: its yaw is always in the table.
        let level = pose.isLevel && source == .equirectangular
        if case .goproEAC(let eac) = source,
            sourceWidth * eac.atlasHeight != sourceHeight * eac.atlasWidth
        {
            throw LapseError(
                .invalidInput, nil,
                "a GoPro MAX frame of \(sourceWidth)x\(sourceHeight) pixels is not its two streams' atlas "
                    + "(\(eac.atlasWidth)x\(eac.atlasHeight))")
        }
        let key = ProjectionTableKey(
            outputWidth: outputWidth ?? width, outputHeight: outputHeight ?? height, sourceWidth: sourceWidth,
            sourceHeight: sourceHeight,
            fov: camera.fov, pitch: camera.pitch, roll: camera.roll, bakedYaw: level ? 0 : yaw,
            panoramaTilt: pose.tilt, panoramaRoll: pose.roll, source: source)
        var shift: UInt32 = 0
        if level {
            let wrap = Int64(sourceWidth - 1) << ProjectionTable.fractionBits
            var s = Int64((yaw / 360 * Double(sourceWidth - 1) * Double(ProjectionTable.one)).rounded()) % wrap
            if s < 0 { s += wrap }
            shift = UInt32(s)
        }
        if let t = cache.withLock({ cache -> ProjectionTable? in
            guard let i = cache.firstIndex(where: { $0.key == key }) else { return nil }
            let t = cache.remove(at: i)
            cache.append(t)
            return t
        }) {
            return (t, shift)
        }
        // Built outside the lock: stabilised panoramas are seldom exactly level, so most frames need a table of
        // their own, and frames rendered at once must not wait for each other's (two that need the same new
        // table may both build it; the second is kept).
        let t = ProjectionTable(key: key)
        cache.withLock { cache in
            cache.removeAll { $0.key == key }
            cache.append(t)
            if cache.count > cacheLimit { cache.removeFirst() }
        }
        return (t, shift)
    }

    /// `degrees` in [0, 360).
    static func normalized(_ degrees: Double) -> Double {
        let r = degrees.truncatingRemainder(dividingBy: 360)
        return r < 0 ? r + 360 : (r == 360 ? 0 : r)
    }

    // MARK: - Kernels

    /// 2×2 taps with 8-bit weights (each pixel's four weights sum to 256, so opaque stays opaque).
    static func bilinear(
        src: UnsafePointer<UInt32>, sw: Int, dst: UnsafeMutablePointer<UInt32>, ow: Int, oh: Int,
        tu: UnsafePointer<UInt32>, tv: UnsafePointer<Int32>, shift: UInt32
    ) {
        // Safe to share across the bands: the source and tables are only read, and each band writes only
        // its own output rows.
        nonisolated(unsafe) let src = src
        nonisolated(unsafe) let dst = dst
        nonisolated(unsafe) let tu = tu
        nonisolated(unsafe) let tv = tv
        let wrap = UInt32(sw - 1) << ProjectionTable.fractionBits
        RowBands.run(rows: oh) { rows in
            RowBands.tiles(rows: rows, width: ow) { j, columns in
                let first = j &* ow &+ columns.lowerBound
                bilinearSpan(
                    src: src, sw: sw, dst: dst + first, tu: tu + first, tv: tv + first,
                    count: columns.count, shift: shift, wrap: wrap)
            }
        }
    }

    /// `count` consecutive output pixels: eight at a time with SIMD (four channels as 16-bit lanes, two
    /// channels a lane pair), the rest one at a time. Both paths give identical results.
    @inline(__always)
    static func bilinearSpan(
        src: UnsafePointer<UInt32>, sw: Int, dst: UnsafeMutablePointer<UInt32>,
        tu: UnsafePointer<UInt32>, tv: UnsafePointer<Int32>, count: Int,
        shift: UInt32, wrap: UInt32
    ) {
        typealias V8 = SIMD8<UInt32>
        typealias L16 = SIMD16<UInt16>
        let wrapV = V8(repeating: wrap)
        let swV = V8(repeating: UInt32(sw))
        let mask = V8(repeating: 0x00FF_00FF)
        let tuRaw = UnsafeRawPointer(tu)
        let tvRaw = UnsafeRawPointer(tv)
        let dstRaw = UnsafeMutableRawPointer(dst)
        @inline(__always) func lanes(_ w: V8) -> L16 { unsafeBitCast(w | (w &<< 16), to: L16.self) }
        @inline(__always) func rb(_ p: V8) -> L16 { unsafeBitCast(p & mask, to: L16.self) }
        @inline(__always) func ga(_ p: V8) -> L16 { unsafeBitCast((p &>> 8) & mask, to: L16.self) }
        var i = 0
        while i &+ 8 <= count {
            var u = tuRaw.loadUnaligned(fromByteOffset: i &* 4, as: V8.self) &+ shift
            u = u.replacing(with: u &- wrapV, where: u .>= wrapV)
            let v = tvRaw.loadUnaligned(fromByteOffset: i &* 4, as: V8.self) // bilinear rows are ≥ 0
            let fx = u & 255
            let fy = v & 255
            let index = (v &>> 8) &* swV &+ (u &>> 8)
            var p00 = V8()
            var p01 = V8()
            var p10 = V8()
            var p11 = V8()
            for k in 0..<8 {
                let b = src + Int(truncatingIfNeeded: index[k])
                p00[k] = b[0]
                p01[k] = b[1]
                p10[k] = b[sw]
                p11[k] = b[sw &+ 1]
            }
            let w11 = (fx &* fy &+ 128) &>> 8
            let w00 = lanes(256 &- fx &- fy &+ w11)
            let w01 = lanes(fx &- w11)
            let w10 = lanes(fy &- w11)
            let w11l = lanes(w11)
            // Each 16-bit lane sums at most 255·256 + 128: no carry into the next lane.
            let sRB = rb(p00) &* w00 &+ rb(p01) &* w01 &+ rb(p10) &* w10 &+ rb(p11) &* w11l &+ 128
            let sGA = ga(p00) &* w00 &+ ga(p01) &* w01 &+ ga(p10) &* w10 &+ ga(p11) &* w11l &+ 128
            let out = unsafeBitCast(sRB &>> 8, to: V8.self) | (unsafeBitCast(sGA, to: V8.self) & 0xFF00_FF00)
            dstRaw.storeBytes(of: out, toByteOffset: i &* 4, as: V8.self)
            i &+= 8
        }
        while i < count {
            var u = tu[i] &+ shift
            if u >= wrap { u &-= wrap }
            let x0 = Int(truncatingIfNeeded: u >> 8) // ≤ sw − 2, so x0 + 1 is inside
            let fx = UInt64(u & 0xFF)
            let v = tv[i]
            let r0 = src + Int(truncatingIfNeeded: v >> 8) &* sw
            let r1 = r0 + sw
            let fy = UInt64(UInt32(bitPattern: v) & 0xFF)
            let w11 = (fx &* fy &+ 128) >> 8
            let w01 = fx &- w11
            let w10 = fy &- w11
            let w00 = 256 &- fx &- fy &+ w11
            let sum =
                spread(r0[x0]) &* w00 &+ spread(r0[x0 &+ 1]) &* w01
                &+ spread(r1[x0]) &* w10 &+ spread(r1[x0 &+ 1]) &* w11 &+ 0x0080_0080_0080_0080
            dst[i] = pack(sum >> 8)
            i &+= 1
        }
    }

    /// R, G, B, A bytes of a pixel into four 16-bit lanes.
    @inline(__always) static func spread(_ p: UInt32) -> UInt64 {
        var v = UInt64(p)
        v = (v | v << 16) & 0x0000_FFFF_0000_FFFF
        return (v | v << 8) & 0x00FF_00FF_00FF_00FF
    }

    /// Four 16-bit lanes (each ≤ 255 after masking) back into a pixel.
    @inline(__always) static func pack(_ lanes: UInt64) -> UInt32 {
        var v = lanes & 0x00FF_00FF_00FF_00FF
        v = (v | v >> 8) & 0x0000_FFFF_0000_FFFF
        return UInt32(truncatingIfNeeded: v | v >> 16)
    }

    /// 4×4 taps with separable 1-D weights looked up by the 8-bit fraction (Q14, each row of four sums to 2^14).
    static func fourTap(
        src: UnsafePointer<UInt32>, sw: Int, sh: Int, dst: UnsafeMutablePointer<UInt32>, ow: Int, oh: Int,
        tu: UnsafePointer<UInt32>, tv: UnsafePointer<Int32>, shift: UInt32, weights: [Int32]
    ) {
        weights.withUnsafeBufferPointer { wb in
            // Safe to share across the bands: everything but `dst` is only read, and each band writes
            // only its own output rows.
            nonisolated(unsafe) let src = src
            nonisolated(unsafe) let dst = dst
            nonisolated(unsafe) let tu = tu
            nonisolated(unsafe) let tv = tv
            nonisolated(unsafe) let w = wb.baseAddress!
            let period = sw - 1
            let wrap = UInt32(period) << ProjectionTable.fractionBits
            let lastRow = sh - 1
            RowBands.run(rows: oh) { rows in
                for j in rows {
                    let row = j * ow
                    for i in row..<(row + ow) {
                        var u = tu[i] &+ shift
                        if u >= wrap { u &-= wrap }
                        let x0 = Int(truncatingIfNeeded: u >> 8)
                        let wx = w + Int(u & 0xFF) &* 4
                        // Columns repeat every sw − 1 (the last column is the first one again).
                        let xm = x0 == 0 ? period &- 1 : x0 &- 1
                        let xp = x0 &+ 1
                        let xq = xp &+ 1 > period ? 1 : xp &+ 1
                        let v = tv[i]
                        let y0 = Int(truncatingIfNeeded: v >> 8) // arithmetic shift: floor
                        let wy = w + Int(v & 0xFF) &* 4
                        var r: Int = 0
                        var g: Int = 0
                        var b: Int = 0
                        var a: Int = 0
                        for k in 0..<4 {
                            let y = min(max(y0 &+ k &- 1, 0), lastRow)
                            let line = src + y &* sw
                            var hr = 0
                            var hg = 0
                            var hb = 0
                            var ha = 0
                            @inline(__always) func tap(_ p: UInt32, _ c: Int32) {
                                let c = Int(c)
                                hr &+= Int(p & 0xFF) &* c
                                hg &+= Int(p >> 8 & 0xFF) &* c
                                hb &+= Int(p >> 16 & 0xFF) &* c
                                ha &+= Int(p >> 24) &* c
                            }
                            tap(line[xm], wx[0])
                            tap(line[x0], wx[1])
                            tap(line[xp], wx[2])
                            tap(line[xq], wx[3])
                            let cy = Int(wy[k])
                            r &+= hr &* cy
                            g &+= hg &* cy
                            b &+= hb &* cy
                            a &+= ha &* cy
                        }
                        @inline(__always) func byte(_ s: Int) -> UInt32 {
                            UInt32(min(max((s &+ (1 << 27)) >> 28, 0), 255))
                        }
                        dst[i] = byte(r) | byte(g) << 8 | byte(b) << 16 | byte(a) << 24
                    }
                }
            }
        }
    }
}

/// 1-D weights of the 4-tap kernels for the 256 fractional positions t = k/256 between taps 1 and 2,
/// for the taps at offsets −1, 0, +1, +2, in Q14 (each group of four sums to exactly 2^14).
enum KernelWeights {
    static let bicubic = table { t, x in
        // Catmull-Rom / Keys cubic convolution with a = −0.5 (R. Keys, IEEE TASSP 29(6), 1981).
        let a = -0.5
        let d = abs(x)
        if d < 1 { return (a + 2) * d * d * d - (a + 3) * d * d + 1 }
        if d < 2 { return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a }
        return 0
    }
    static let lanczos = table { t, x in
        // Lanczos window with a = 2: sinc(x)·sinc(x/2).
        if x == 0 { return 1 }
        let px = Double.pi * x
        return abs(x) < 2 ? 2 * sin(px) * sin(px / 2) / (px * px) : 0
    }

    private static func table(_ kernel: (Double, Double) -> Double) -> [Int32] {
        var out: [Int32] = []
        out.reserveCapacity(256 * 4)
        for k in 0..<256 {
            let t = Double(k) / 256
            let raw = (0..<4).map { kernel(t, t - Double($0 - 1)) }
            let sum = raw.reduce(0, +)
            var q = raw.map { Int32(($0 / sum * 16384).rounded()) }
            q[1] += 16384 - q.reduce(0, +) // exact unit sum
            out += q
        }
        return out
    }
}
