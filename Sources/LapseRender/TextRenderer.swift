// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFreeType
import Foundation
import LapseCore
import Synchronization

/// Text rasterised into an 8-bit coverage mask: what ``TextRenderer`` makes and ``CreditOverlay`` draws.
public struct TextMask: Sendable, Equatable {
    /// Size in pixels (≥ 0; 0 × 0 for empty text).
    public let width: Int
    /// Height in pixels (≥ 0).
    public let height: Int
    /// Coverage of each pixel, 0 (background) to 255 (inside a glyph), `width × height` bytes, rows top to bottom.
    public let coverage: [UInt8]
    /// Pixels from the top of the mask to the first line's baseline.
    public let baseline: Int

    /// Pixels with any coverage.
    public var inkedPixels: Int { coverage.reduce(0) { $0 + ($1 > 0 ? 1 : 0) } }
}

/// Lays out and rasterises short text (a line or a few) with FreeType, for captions drawn into frames.
///
/// The font is opened once. Each glyph is rasterised once per pixel size and cached (code point and size →
/// bitmap, bearing, advance), so drawing the same credit on every frame rasterises nothing after the first.
/// Text is read as Unicode scalars after canonical composition (NFC: "é" written as e + U+0301 renders as the
/// font's "é"); lines are separated by `"\n"`; other control characters are skipped. Kerning pairs come from the
/// font's `kern` table when it has one. Glyphs are antialiased with light hinting (vertical only) and placed at
/// the design's advances (not rounded to whole pixels), so a line's width scales with the size. A code point the font
/// lacks renders as the font's missing-glyph box.
///
/// Safe to use from several tasks at once: the FreeType face is only touched under a lock.
public final class TextRenderer: Sendable {
    /// DejaVu Sans from Debian's `fonts-dejavu-core`: covers Latin (accented letters), Greek, Cyrillic and "©".
    public static let defaultFont = URL(fileURLWithPath: "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")

    /// The font file.
    public let font: URL
    private let face: Mutex<FontFace>

    /// Opens a font.
    /// - Parameter font: a TrueType/OpenType file (default ``defaultFont``).
    /// - Throws: ``LapseError`` `.invalidInput` naming the file when it is missing (with the Debian package that
    ///   provides the default) or is not a font FreeType can read; `.other` when FreeType cannot start.
    public init(font: URL = TextRenderer.defaultFont) throws {
        self.font = font
        let fontPath = font.filePath
        guard FileManager.default.fileExists(atPath: fontPath) else {
            throw LapseError(
                .invalidInput, fontPath,
                font == Self.defaultFont
                    ? "font not found: install the Debian package fonts-dejavu-core"
                    : "font not found")
        }
        face = Mutex(try FontFace(path: fontPath))
    }

    /// The text rasterised at `pixelSize`.
    /// - Parameters:
    ///   - text: UTF-8 text; `"\n"` starts a new line.
    ///   - pixelSize: the font's em size in pixels, 1…1000 (a capital letter is about 0.73 of it in DejaVu Sans;
    ///     a line 1.16 of it).
    /// - Returns: a mask as wide as the widest line's ink and advance, as high as the lines (ascender to
    ///   descender each); 0 × 0 for text without glyphs.
    public func mask(_ text: String, pixelSize: Int) -> TextMask {
        let size = min(1000, max(1, pixelSize))
        let lines = text.precomposedStringWithCanonicalMapping.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.unicodeScalars.filter { !$0.properties.generalCategory.isControl } }
        return face.withLock { face in face.layout(lines.map { Array($0) }, size: size) }
    }

    /// Width in pixels of `text`'s mask at `pixelSize` (see ``mask(_:pixelSize:)``).
    public func width(of text: String, pixelSize: Int) -> Int { mask(text, pixelSize: pixelSize).width }
}

extension Unicode.GeneralCategory {
    fileprivate var isControl: Bool { self == .control || self == .format }
}

/// One rasterised glyph: its coverage bitmap and where it sits relative to the pen.
private struct Glyph {
    var index: UInt32
    var width: Int
    var rows: Int
    /// Pixels from the pen to the bitmap's left edge, and from the baseline up to its top row.
    var left: Int
    var top: Int
    /// How far the pen moves, in 1/64 pixel: the design's advance scaled, not rounded to whole pixels (hinted
    /// advances would make a line at 9 px as wide as at 10).
    var advance: Int
    var bitmap: [UInt8]
}

/// The FreeType library and face (owned: freed in deinit), the glyph cache, and the size last set.
private struct FontFace: ~Copyable {
    private let library: FT_Library
    private let face: FT_Face
    private let hasKerning: Bool
    private var size = 0
    private var glyphs: [UInt64: Glyph] = [:]

    init(path: String) throws {
        var library: FT_Library?
        let initialised = FT_Init_FreeType(&library)
        guard initialised == 0, let library else {
            throw LapseError(.other, "FreeType", "cannot start FreeType (error \(initialised))")
        }
        var face: FT_Face?
        let opened = FT_New_Face(library, path, 0, &face)
        guard opened == 0, let face else {
            FT_Done_FreeType(library)
            throw LapseError(.invalidInput, path, "not a font FreeType can read (error \(opened))")
        }
        self.library = library
        self.face = face
        hasKerning = lapse_ft_has_kerning(face) != 0
    }

    deinit {
        FT_Done_Face(face)
        FT_Done_FreeType(library)
    }

    /// The glyph of `scalar` at `size`, rasterised on first use.
    private mutating func glyph(_ scalar: Unicode.Scalar, size: Int) -> Glyph? {
        let key = UInt64(scalar.value) | UInt64(size) << 32
        if let cached = glyphs[key] { return cached }
        guard setSize(size) else { return nil }
        let index = FT_Get_Char_Index(face, FT_ULong(scalar.value))
        guard FT_Load_Glyph(face, index, FT_Int32(FT_LOAD_RENDER) | lapse_ft_load_target_light()) == 0,
            let slot = face.pointee.glyph
        else { return nil }
        let bitmap = slot.pointee.bitmap
        let width = Int(bitmap.width)
        let rows = Int(bitmap.rows)
        let pitch = Int(bitmap.pitch)
        var pixels = [UInt8](repeating: 0, count: width * rows)
        if let buffer = bitmap.buffer, bitmap.pixel_mode == UInt8(FT_PIXEL_MODE_GRAY.rawValue) {
            for y in 0..<rows {
                // A negative pitch means the rows are stored bottom up.
                let row = pitch >= 0 ? buffer + y * pitch : buffer + (rows - 1 - y) * -pitch
                for x in 0..<width { pixels[y * width + x] = row[x] }
            }
        }
        let glyph = Glyph(
            index: index, width: width, rows: rows, left: Int(slot.pointee.bitmap_left),
            top: Int(slot.pointee.bitmap_top), advance: (Int(slot.pointee.linearHoriAdvance) + 512) >> 10,
            bitmap: pixels)
        glyphs[key] = glyph
        return glyph
    }

    /// Makes `size` (em, pixels) the face's current size, which kerning and metrics are scaled to.
    private mutating func setSize(_ size: Int) -> Bool {
        guard self.size != size else { return true }
        guard FT_Set_Pixel_Sizes(face, 0, FT_UInt(size)) == 0 else { return false }
        self.size = size
        return true
    }

    /// Kerning between two glyphs at the current size, in 1/64 pixel.
    private func kerning(_ left: UInt32, _ right: UInt32) -> Int {
        guard hasKerning, left != 0, right != 0 else { return 0 }
        var delta = FT_Vector()
        guard FT_Get_Kerning(face, left, right, UInt32(FT_KERNING_UNFITTED.rawValue), &delta) == 0 else { return 0 }
        return Int(delta.x)
    }

    mutating func layout(_ lines: [[Unicode.Scalar]], size: Int) -> TextMask {
        // Place every glyph: (glyph, x of its bitmap, baseline row) with the pen in 1/64 pixel.
        let empty = TextMask(width: 0, height: 0, coverage: [], baseline: 0)
        guard setSize(size) else { return empty }
        // Line metrics of the size (26.6 fixed point, rounded up to whole pixels).
        let metrics = face.pointee.size.pointee.metrics
        let ascender = (Int(metrics.ascender) + 63) >> 6
        let lineHeight = (Int(metrics.height) + 63) >> 6
        var placed: [(glyph: Glyph, x: Int, row: Int)] = []
        var minX = 0
        var maxX = 0
        for (row, line) in lines.enumerated() {
            var pen = 0
            var previous: UInt32 = 0
            for scalar in line {
                guard let g = glyph(scalar, size: size) else { continue }
                pen += kerning(previous, g.index)
                let x = (pen + 32) >> 6 + g.left
                placed.append((g, x, row))
                minX = min(minX, x)
                maxX = max(maxX, x + g.width, (pen + g.advance + 63) >> 6)
                pen += g.advance
                previous = g.index
            }
        }
        guard !placed.isEmpty, maxX > minX else { return empty }
        let width = maxX - minX
        let height = lineHeight * lines.count
        var coverage = [UInt8](repeating: 0, count: width * height)
        for (g, x0, row) in placed where g.width > 0 && g.rows > 0 {
            let top = ascender + row * lineHeight - g.top
            for y in 0..<g.rows {
                let yy = top + y
                guard yy >= 0 && yy < height else { continue }
                for x in 0..<g.width {
                    let v = g.bitmap[y * g.width + x]
                    let i = yy * width + x0 - minX + x
                    if v > coverage[i] { coverage[i] = v } // overlapping glyphs: the darker ink
                }
            }
        }
        return TextMask(width: width, height: height, coverage: coverage, baseline: ascender)
    }
}
