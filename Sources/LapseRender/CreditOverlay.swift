// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
import Synchronization

/// The corner of a frame a credit is drawn in.
public enum CreditCorner: String, Sendable, CaseIterable, Codable {
    case bottomRight = "bottom-right"
    case bottomLeft = "bottom-left"
    case topLeft = "top-left"
    case topRight = "top-right"
}

/// A rectangle of a frame in pixels: columns `x..<x + width`, rows `y..<y + height`, from the top left.
public struct PixelRect: Sendable, Hashable {
    public var x: Int, y: Int, width: Int, height: Int

    /// A rectangle of `width × height` pixels whose top-left corner is at (`x`, `y`).
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// Whether pixel (`px`, `py`) lies inside.
    public func contains(_ px: Int, _ py: Int) -> Bool { px >= x && px < x + width && py >= y && py < y + height }
}

/// Draws a credit ("Google Maps · © 2024 Google") small in a corner of a frame: white text on a dark translucent box,
/// so it reads on sky and on asphalt alike.
///
/// Sizes follow the frame: the text's em is 1/40 of the frame's height, at least 10 px (18 px in a 720-row frame,
/// capitals about 13 px; 10 px is the smallest at which DejaVu Sans's "g" and "q" stay apart in a GIF); the box pads
/// the text by 0.4 em left and right and 0.2 em above and below and stands 0.5 em from the frame's edges. A credit too
/// wide for the frame is set smaller, down to 9 px, on one line; if it is still too wide, it is broken into lines at
/// its `" · "` separators (then at spaces), and only if a word is still too wide is the text made smaller again (down
/// to 6 px). The box's corners fall on even pixels, so in 4:2:0 video its chroma does not bleed into the pixels around
/// it.
///
/// Only the box's pixels are read and written (a few thousand in a 1280 × 720 frame). The text of each
/// (credit, frame size) is laid out once and cached; glyphs are rasterised once (``TextRenderer``).
/// Safe to use from several tasks at once.
public final class CreditOverlay: Sendable {
    /// The corner the credit goes in.
    public let corner: CreditCorner
    /// Draws the text (FreeType, DejaVu Sans).
    public let renderer: TextRenderer
    /// Opacity of the box's black, 0–255 (150: the frame shows through at 41 %).
    public static let boxOpacity = 150
    private let layouts = Mutex<[LayoutKey: Layout]>([:])

    /// - Parameters:
    ///   - corner: where the credit goes.
    ///   - renderer: the font (default: DejaVu Sans, ``TextRenderer/defaultFont``).
    public init(corner: CreditCorner, renderer: TextRenderer) {
        self.corner = corner
        self.renderer = renderer
    }

    /// An overlay with the default font.
    /// - Throws: ``LapseError`` `.invalidInput` when the font is missing (see ``TextRenderer/init(font:)``).
    public convenience init(corner: CreditCorner) throws {
        self.init(corner: corner, renderer: try TextRenderer())
    }

    /// The text's em size in pixels for a frame `frameHeight` pixels high: 1/40 of it, at least 10.
    public static func textSize(frameHeight: Int) -> Int { max(10, Int((Double(frameHeight) / 40).rounded())) }

    /// Where `text`'s box goes in a `frameWidth × frameHeight` frame (clipped to the frame); nil for empty or
    /// blank text (nothing is drawn).
    public func box(for text: String, frameWidth: Int, frameHeight: Int) -> PixelRect? {
        layout(text, frameWidth, frameHeight).map(\.box)
    }

    /// Draws `text` into `frame`'s corner; changes only the pixels of ``box(for:frameWidth:frameHeight:)`` (alpha
    /// is kept). Empty text draws nothing.
    public func draw(_ text: String, into frame: inout PixelBuffer) {
        guard let layout = layout(text, frame.width, frame.height) else { return }
        let box = layout.box
        let mask = layout.mask
        let width = frame.width
        let keep = 255 - Self.boxOpacity
        mask.coverage.withUnsafeBufferPointer { coverage in
            frame.bytes.withUnsafeMutableBufferPointer { pixels in
                for y in box.y..<box.y + box.height {
                    let my = y - layout.textY
                    let maskRow = my >= 0 && my < mask.height ? my * mask.width : -1
                    var i = (y * width + box.x) * 4
                    for x in box.x..<box.x + box.width {
                        let mx = x - layout.textX
                        let c = maskRow >= 0 && mx >= 0 && mx < mask.width ? Int(coverage[maskRow + mx]) : 0
                        for k in 0..<3 {
                            // Darkened by the box, then white over it by the glyph's coverage (rounded).
                            let dark = (Int(pixels[i + k]) * keep + 127) / 255
                            pixels[i + k] = UInt8(dark + ((255 - dark) * c + 127) / 255)
                        }
                        i += 4
                    }
                }
            }
        }
    }

    /// As the RGBA `draw(_:into:)`, into a Y′CbCr frame (BT.709 limited range) without leaving it. The
    /// RGBA draw takes each of R′, G′, B′ to `v·f + c` (f = `keep·(1 − c)`, `c` the glyph's coverage, both 0…1 of
    /// 255, white text): the same map of E′Y and, white having no chroma, `E′P·f` for chroma, each chroma sample
    /// with the mean `f` of its 2 × 2 block (1 outside the box).
    public func draw(_ text: String, into frame: inout YUVFrame) {
        guard let layout = layout(text, frame.width, frame.height) else { return }
        let box = layout.box
        let mask = layout.mask
        let width = frame.width
        let cw = frame.chromaWidth
        let keep = 255 - Self.boxOpacity
        // f in 1/65025 (255²) and the coverage, per pixel of the box.
        var factor = [Int](repeating: 0, count: box.width * box.height)
        mask.coverage.withUnsafeBufferPointer { coverage in
            frame.y.withUnsafeMutableBufferPointer { luma in
                for y in box.y..<box.y + box.height {
                    let my = y - layout.textY
                    let maskRow = my >= 0 && my < mask.height ? my * mask.width : -1
                    for x in box.x..<box.x + box.width {
                        let mx = x - layout.textX
                        let c = maskRow >= 0 && mx >= 0 && mx < mask.width ? Int(coverage[maskRow + mx]) : 0
                        let f = keep * (255 - c)
                        factor[(y - box.y) * box.width + x - box.x] = f
                        let i = y * width + x
                        // Y′ − 16 = 219·E′Y: (Y′ − 16)·f + 219·c/255, rounded.
                        let v = (Int(luma[i]) - 16) * f + 219 * 255 * c
                        luma[i] = UInt8(min(255, max(0, 16 + (v + 32512) / 65025)))
                    }
                }
            }
        }
        let cx0 = box.x / 2
        let cx1 = (box.x + box.width + 1) / 2
        let cy0 = box.y / 2
        let cy1 = (box.y + box.height + 1) / 2
        frame.cb.withUnsafeMutableBufferPointer { cb in
            frame.cr.withUnsafeMutableBufferPointer { cr in
                for cy in cy0..<cy1 {
                    for cx in cx0..<cx1 {
                        var sum = 0
                        var n = 0
                        for y in 2 * cy..<min(2 * cy + 2, frame.height) {
                            for x in 2 * cx..<min(2 * cx + 2, width) {
                                n += 1
                                sum +=
                                    box.contains(x, y) ? factor[(y - box.y) * box.width + x - box.x] : 65025
                            }
                        }
                        let i = cy * cw + cx
                        let d = 65025 * n
                        for plane in [cb, cr] {
                            let v = (Int(plane[i]) - 128) * sum
                            let rounded = v >= 0 ? (v + d / 2) / d : -((-v + d / 2) / d)
                            plane[i] = UInt8(min(255, max(0, 128 + rounded)))
                        }
                    }
                }
            }
        }
    }

    private struct LayoutKey: Hashable {
        var text: String, width: Int, height: Int
    }

    /// A credit laid out for one frame size: the box, the text's mask and where the mask's top left goes.
    private struct Layout: Sendable {
        var box: PixelRect
        var mask: TextMask
        var textX: Int, textY: Int
    }

    private func layout(_ text: String, _ frameWidth: Int, _ frameHeight: Int) -> Layout? {
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
        let key = LayoutKey(text: text, width: frameWidth, height: frameHeight)
        if let cached = layouts.withLock({ $0[key] }) { return cached }
        let made = makeLayout(text, frameWidth, frameHeight)
        layouts.withLock { cache in
            if cache.count >= 64 { cache.removeAll() } // credits change rarely: a few entries in practice
            cache[key] = made
        }
        return made
    }

    private func makeLayout(_ text: String, _ frameWidth: Int, _ frameHeight: Int) -> Layout? {
        var size = Self.textSize(frameHeight: frameHeight)
        func metrics(_ size: Int) -> (margin: Int, padX: Int, padY: Int) {
            (
                max(2, Int((Double(size) * 0.5).rounded())), max(2, Int((Double(size) * 0.4).rounded())),
                max(1, Int((Double(size) * 0.2).rounded()))
            )
        }
        func room(_ size: Int) -> Int {
            let m = metrics(size)
            return frameWidth - 2 * m.margin - 2 * m.padX
        }
        var lines = text
        var mask = renderer.mask(lines, pixelSize: size)
        // Too wide: one line set smaller, down to 9 px; then lines at 9 px; then smaller still, down to 6 px.
        while mask.width > room(size) && size > 9 {
            size = max(9, min(size - 1, size * room(size) / mask.width))
            mask = renderer.mask(lines, pixelSize: size)
        }
        if mask.width > room(size) {
            lines = Self.wrapped(text, room: room(size)) { renderer.width(of: $0, pixelSize: size) }
            mask = renderer.mask(lines, pixelSize: size)
        }
        while mask.width > room(size) && size > 6 {
            size -= 1
            mask = renderer.mask(lines, pixelSize: size)
        }
        guard mask.width > 0 else { return nil }
        let m = metrics(size)
        // Even width, height and corners (whole 2 × 2 chroma blocks), clipped to the frame.
        let even = { (v: Int) in (v + 1) & ~1 }
        let boxWidth = min(even(mask.width + 2 * m.padX), frameWidth & ~1)
        let boxHeight = min(even(mask.height + 2 * m.padY), frameHeight & ~1)
        let left = corner == .bottomLeft || corner == .topLeft
        let top = corner == .topLeft || corner == .topRight
        let x = max(0, left ? even(m.margin) : (frameWidth - m.margin - boxWidth) & ~1)
        let y = max(0, top ? even(m.margin) : (frameHeight - m.margin - boxHeight) & ~1)
        let box = PixelRect(x: x, y: y, width: min(boxWidth, frameWidth - x), height: min(boxHeight, frameHeight - y))
        return Layout(
            box: box, mask: mask, textX: x + (boxWidth - mask.width) / 2, textY: y + (boxHeight - mask.height) / 2)
    }

    /// `text` broken into lines no wider than `room` pixels, greedily: at `" · "` separators first, then at spaces.
    static func wrapped(_ text: String, room: Int, width: (String) -> Int) -> String {
        func fill(_ pieces: [String], separator: String) -> [String] {
            var lines: [String] = []
            for piece in pieces {
                if let last = lines.last, width(last + separator + piece) <= room {
                    lines[lines.count - 1] = last + separator + piece
                } else {
                    lines.append(piece)
                }
            }
            return lines
        }
        let parts = fill(text.components(separatedBy: " · "), separator: " · ")
        return parts.flatMap { width($0) <= room ? [$0] : fill($0.components(separatedBy: " "), separator: " ") }
            .joined(separator: "\n")
    }
}
