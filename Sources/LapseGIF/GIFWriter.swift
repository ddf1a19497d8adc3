// SPDX-License-Identifier: GPL-3.0-or-later
internal import CGIF
import LapseCore

/// Writes quantized frames in order with giflib, GIF89a.
///
/// Before writing, each frame's opaque pixels whose palette colour equals what is already displayed become
/// transparent, the frame is cropped to what is left, and a frame left with nothing to draw is merged into
/// the previous one (delays summed). giflib facts used: `EGifSetGifVersion(gif, true)` before the screen
/// descriptor makes the file GIF89a; colour maps must have a power-of-two size; `EGifPutLine` modifies the
/// line it is given; `EGifPutImageDesc` copies the colour map.
final class GIFWriter {
    private var gif: UnsafeMutablePointer<GifFileType>?
    private let path: String
    let width: Int
    let height: Int
    /// Packed RGBA (R lowest) of what is displayed after the last processed frame; 0 = transparent.
    private var canvas: [UInt32]
    /// The last processed frame, held back so an empty successor can add its delay to it.
    private var held: IndexedFrame?
    private(set) var delays: [Int] = []

    /// Opens `path` and writes the header, the logical screen descriptor (with `globalPalette` as the global
    /// colour map when given) and the NETSCAPE2.0 loop extension when `loopCount` is not nil.
    init(path: String, width: Int, height: Int, loopCount: Int?, globalPalette: [RGBAColor]?) throws {
        self.path = path
        self.width = width
        self.height = height
        guard width <= 65535, height <= 65535 else {
            throw LapseError.usage("a GIF is at most 65535x65535 pixels, not \(width)x\(height)")
        }
        canvas = [UInt32](repeating: 0, count: width * height)
        var error: Int32 = 0
        guard let gif = EGifOpenFileName(path, false, &error) else {
            throw LapseError(.output, path, "cannot create the file (\(Self.message(error)))")
        }
        self.gif = gif
        EGifSetGifVersion(gif, true)
        let map = try globalPalette.map(Self.makeMap)
        defer { if let map { GifFreeMapObject(map) } }
        try check(EGifPutScreenDesc(gif, Int32(width), Int32(height), 8, 0, map), "cannot write the header")
        if let loopCount {
            let count = UInt16(clamping: loopCount)
            try check(EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE), "cannot write the loop count")
            var name = Array("NETSCAPE2.0".utf8)
            try check(EGifPutExtensionBlock(gif, 11, &name), "cannot write the loop count")
            var block: [UInt8] = [1, UInt8(count & 0xFF), UInt8(count >> 8)]
            try check(EGifPutExtensionBlock(gif, 3, &block), "cannot write the loop count")
            try check(EGifPutExtensionTrailer(gif), "cannot write the loop count")
        }
    }

    deinit {
        if let gif {
            var error: Int32 = 0
            EGifCloseFile(gif, &error)
        }
    }

    /// Processes the next frame in display order.
    func write(_ input: IndexedFrame) throws {
        var frame = input
        if let t = frame.transparentIndex { trimUnchanged(&frame, transparent: UInt8(t)) }
        if frame.repeatIndices { repeatIndices(&frame) }
        if frame.rect.isEmpty, frame.disposal == .keep, var h = held, h.disposal == .keep {
            h.delay += frame.delay
            held = h
            return
        }
        if frame.rect.isEmpty {
            // Nothing to draw but the frame must exist (its delay, its disposal): one transparent pixel.
            frame.rect = GIFRect(x: 0, y: 0, width: 1, height: 1)
            frame.indices = [UInt8(frame.transparentIndex ?? 0)]
        }
        applyToCanvas(frame)
        if let h = held { try put(h) }
        held = frame
    }

    /// RGBA of what is displayed in `rect` now (alpha 0 where nothing is).
    func displayed(in rect: GIFRect) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: rect.width * rect.height * 4)
        out.withUnsafeMutableBytes { raw in
            let dst = raw.bindMemory(to: UInt32.self)
            canvas.withUnsafeBufferPointer { shown in
                for y in 0..<rect.height {
                    for x in 0..<rect.width { dst[y * rect.width + x] = shown[(rect.y + y) * width + rect.x + x] }
                }
            }
        }
        return out
    }

    /// Writes the last frame and the trailer, and closes the file.
    func close() throws {
        if let h = held {
            try put(h)
            held = nil
        }
        guard let gif else { return }
        self.gif = nil
        var error: Int32 = 0
        if EGifCloseFile(gif, &error) == GIF_ERROR {
            throw LapseError(.output, path, "cannot finish the file (\(Self.message(error)))")
        }
    }

    /// Makes opaque pixels that would draw the colour already displayed transparent, and crops the frame to
    /// the pixels left (unless its rectangle is fixed).
    private func trimUnchanged(_ frame: inout IndexedFrame, transparent t: UInt8) {
        let colors = frame.palette.map(\.packedOpaque)
        let r = frame.rect
        var minX = r.width
        var minY = r.height
        var maxX = -1
        var maxY = -1
        let w = width
        canvas.withUnsafeBufferPointer { shown in
            frame.indices.withUnsafeMutableBufferPointer { idx in
                for y in 0..<r.height {
                    let row = y * r.width
                    let canvasRow = (r.y + y) * w + r.x
                    for x in 0..<r.width {
                        let i = idx[row + x]
                        if i == t { continue }
                        if colors[Int(i)] == shown[canvasRow + x] {
                            idx[row + x] = t
                            continue
                        }
                        minX = min(minX, x)
                        maxX = max(maxX, x)
                        if minY > y { minY = y }
                        maxY = y
                    }
                }
            }
        }
        if frame.fixedRect { return }
        if maxX < 0 {
            frame.rect = GIFRect(x: 0, y: 0, width: 0, height: 0)
            frame.indices = []
            return
        }
        if minX == 0, minY == 0, maxX == r.width - 1, maxY == r.height - 1 { return }
        let nw = maxX - minX + 1
        let nh = maxY - minY + 1
        var cropped = [UInt8](repeating: 0, count: nw * nh)
        for y in 0..<nh {
            let src = (minY + y) * r.width + minX
            cropped.replaceSubrange(y * nw..<(y + 1) * nw, with: frame.indices[src..<src + nw])
        }
        frame.indices = cropped
        frame.rect = GIFRect(x: r.x + minX, y: r.y + minY, width: nw, height: nh)
    }

    /// Makes each pixel repeat the previous pixel's index (in the order LZW reads them: rows of the frame's
    /// rectangle one after the other) when that index shows exactly the same colour: the transparent index
    /// where the colour displayed under it equals the chosen palette colour, or the other way round, or a
    /// duplicate palette entry. The picture is unchanged; longer runs of one index make LZW's strings longer
    /// (about 2 % smaller files on screen recordings).
    private func repeatIndices(_ frame: inout IndexedFrame) {
        guard !frame.rect.isEmpty else { return }
        let colors = frame.palette.map(\.packedOpaque)
        let r = frame.rect
        let t = frame.transparentIndex ?? -1
        let w = width
        let keep = frame.disposal == .keep
        canvas.withUnsafeBufferPointer { shown in
            frame.indices.withUnsafeMutableBufferPointer { idx in
                var prev = -1
                for y in 0..<r.height {
                    let row = y * r.width
                    let canvasRow = (r.y + y) * w + r.x
                    for x in 0..<r.width {
                        let k = Int(idx[row + x])
                        if k != prev && prev >= 0 {
                            // What the pixel shows with index k, and with the previous index.
                            let under = keep ? shown[canvasRow + x] : 0
                            let out = k == t ? under : colors[k]
                            let alt = prev == t ? under : colors[prev]
                            if out != 0 && alt == out { idx[row + x] = UInt8(prev) }
                        }
                        prev = Int(idx[row + x])
                    }
                }
            }
        }
    }

    private func applyToCanvas(_ frame: IndexedFrame) {
        let colors = frame.palette.map(\.packedOpaque)
        let r = frame.rect
        let t = frame.transparentIndex.map { UInt8($0) }
        let w = width
        canvas.withUnsafeMutableBufferPointer { shown in
            frame.indices.withUnsafeBufferPointer { idx in
                for y in 0..<r.height {
                    let row = y * r.width
                    let canvasRow = (r.y + y) * w + r.x
                    for x in 0..<r.width {
                        let i = idx[row + x]
                        if i == t { continue }
                        shown[canvasRow + x] = frame.disposal == .background ? 0 : colors[Int(i)]
                    }
                }
                if frame.disposal == .background {
                    for y in 0..<r.height {
                        let canvasRow = (r.y + y) * w + r.x
                        for x in 0..<r.width { shown[canvasRow + x] = 0 }
                    }
                }
            }
        }
    }

    private func put(_ frame: IndexedFrame) throws {
        guard let gif else { throw LapseError(.output, path, "file already closed") }
        let delay = min(65535, max(2, frame.delay))
        delays.append(delay)
        var gcb = GraphicsControlBlock(
            DisposalMode: Int32(frame.disposal.rawValue), UserInputFlag: false,
            DelayTime: Int32(delay),
            TransparentColor: Int32(frame.transparentIndex ?? Int(NO_TRANSPARENT_COLOR)))
        var ext = [UInt8](repeating: 0, count: 4)
        let n = EGifGCBToExtension(&gcb, &ext)
        try check(EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, Int32(n), ext), "cannot write a frame")
        let map = frame.usesGlobalPalette ? nil : try Self.makeMap(frame.palette)
        defer { if let map { GifFreeMapObject(map) } }
        let r = frame.rect
        try check(
            EGifPutImageDesc(gif, Int32(r.x), Int32(r.y), Int32(r.width), Int32(r.height), false, map),
            "cannot write a frame")
        var line = frame.indices // EGifPutLine modifies its line: give it a copy.
        try check(EGifPutLine(gif, &line, Int32(line.count)), "cannot write a frame")
    }

    /// A giflib colour map of `palette`, padded with black to a power-of-two size (2…256).
    /// - Throws: ``LapseError`` `.codec` when giflib has no memory for it.
    private static func makeMap(_ palette: [RGBAColor]) throws -> UnsafeMutablePointer<ColorMapObject> {
        var size = 2
        while size < palette.count { size *= 2 }
        var colors = [GifColorType](repeating: GifColorType(Red: 0, Green: 0, Blue: 0), count: size)
        for (i, c) in palette.enumerated() { colors[i] = GifColorType(Red: c.r, Green: c.g, Blue: c.b) }
        guard let map = GifMakeMapObject(Int32(size), &colors) else {
            throw LapseError(.codec, nil, "giflib: out of memory")
        }
        return map
    }

    private func check(_ status: Int32, _ doing: String) throws {
        if status == GIF_ERROR {
            throw LapseError(.output, path, "\(doing) (\(Self.message(gif?.pointee.Error ?? 0)))")
        }
    }

    static func message(_ code: Int32) -> String {
        GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
    }
}
