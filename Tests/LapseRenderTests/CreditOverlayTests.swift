// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia
import TestSupport
import Testing

@testable import LapseRender

/// Text drawn with FreeType (DejaVu Sans) and credits drawn into the corner of real frames.
@Suite struct CreditOverlayTests {
    /// A real street photo (Lund, OpenSfM's example data) scaled by the ffmpeg CLI to `width × height`.
    static func street(_ width: Int, _ height: Int) throws -> PixelBuffer {
        try #require(
            try FFmpegReference.frames(
                TestData.path("images/opensfm_lund/images/01.jpg"),
                filters: "format=rgba", size: (width, height)
            ).first)
    }

    /// Rows and columns holding ink: (first row, last row, first column, last column), nil for an empty mask.
    static func inkBounds(_ m: TextMask) -> (top: Int, bottom: Int, left: Int, right: Int)? {
        var top = Int.max
        var bottom = -1
        var left = Int.max
        var right = -1
        for y in 0..<m.height {
            for x in 0..<m.width where m.coverage[y * m.width + x] > 0 {
                top = min(top, y)
                bottom = max(bottom, y)
                left = min(left, x)
                right = max(right, x)
            }
        }
        return bottom < 0 ? nil : (top, bottom, left, right)
    }

    /// "©" and "É" (two bytes each in UTF-8) render as glyphs of their own: both inked, different, "É" with an
    /// accent above the "E"'s cap height; "É" written decomposed (E + U+0301) renders as the composed "É".
    @Test func unicodeGlyphsRender() throws {
        let text = try TextRenderer()
        let copyright = text.mask("©", pixelSize: 18)
        let eAcute = text.mask("É", pixelSize: 18)
        let e = text.mask("E", pixelSize: 18)
        #expect(
            copyright.inkedPixels > 30 && eAcute.inkedPixels > 30, "\(copyright.inkedPixels), \(eAcute.inkedPixels)")
        #expect(copyright != eAcute)
        let c = try #require(Self.inkBounds(copyright))
        let ea = try #require(Self.inkBounds(eAcute))
        let plain = try #require(Self.inkBounds(e))
        // The accent: ink rows above the E's top, none of them in the plain E; same baseline (same bottom row).
        #expect(
            ea.top < plain.top - 2 && ea.bottom == plain.bottom,
            "É rows \(ea.top)…\(ea.bottom), E \(plain.top)…\(plain.bottom)")
        // "©" is round: about as wide as it is high, and reaches below the baseline no more than the E does.
        let cw = c.right - c.left + 1
        let ch = c.bottom - c.top + 1
        #expect(abs(cw - ch) <= 2 && c.bottom <= plain.bottom + 1, "© \(cw) × \(ch)")
        #expect(text.mask("E\u{301}", pixelSize: 18) == eAcute)
        // The same text at the same size is the same mask (cached glyphs); a bigger size is bigger.
        #expect(text.mask("© Zoë Éléonore", pixelSize: 18) == text.mask("© Zoë Éléonore", pixelSize: 18))
        #expect(text.mask("É", pixelSize: 36).height > 2 * eAcute.height - 3)
        #expect(text.mask("", pixelSize: 18).width == 0 && text.mask("\n", pixelSize: 18).inkedPixels == 0)
    }

    /// Kerning from the font's table: "AV" is narrower than "A" and "V" side by side when the font kerns them.
    @Test func kerningPairsMoveCloser() throws {
        let text = try TextRenderer()
        let pair = text.width(of: "AV", pixelSize: 40)
        let apart = text.width(of: "A", pixelSize: 40) + text.width(of: "V", pixelSize: 40)
        #expect(pair < apart, "AV \(pair) px, A + V \(apart) px")
    }

    @Test func missingFontIsAOneLineErrorNamingIt() {
        #expect { try TextRenderer(font: URL(fileURLWithPath: "/nonexistent/font.ttf")) } throws: { error in
            (error as? LapseError)?.description == "/nonexistent/font.ttf: font not found"
        }
        let notAFont = TestData.path("images/pillow/hopper.png")
        #expect { try TextRenderer(font: URL(fileURLWithPath: notAFont)) } throws: { error in
            (error as? LapseError).map {
                $0.code == .invalidInput && $0.description.hasPrefix(notAFont + ": not a font")
            } == true
        }
    }

    /// In every corner, on a real street photo: the credit changes pixels only inside its box (everything
    /// outside is the photo, exactly), the box lies in that corner 0.5 em from the edges, small (under a third of
    /// the width, one text line high), on even pixels; inside, the box is darker than the photo and the text
    /// white (pure white where a glyph covers its pixel fully).
    @Test(arguments: CreditCorner.allCases)
    func creditChangesOnlyItsBoxInTheCorner(corner: CreditCorner) throws {
        let photo = try Self.street(1280, 720)
        let overlay = try CreditOverlay(corner: corner)
        let credit = "Google Maps · © 2024 Google"
        var framed = photo
        overlay.draw(credit, into: &framed)
        let box = try #require(overlay.box(for: credit, frameWidth: 1280, frameHeight: 720))
        #expect(CreditOverlay.textSize(frameHeight: 720) == 18)
        // 0.5 em from the edges (9 px), made even: 10 px.
        let left = corner == .topLeft || corner == .bottomLeft
        let top = corner == .topLeft || corner == .topRight
        #expect((left ? box.x : 1280 - box.x - box.width) == 10, "\(box)")
        #expect((top ? box.y : 720 - box.y - box.height) == 10, "\(box)")
        #expect(box.x % 2 == 0 && box.y % 2 == 0 && box.width % 2 == 0 && box.height % 2 == 0)
        #expect(box.width > 150 && box.width < 1280 / 3 && box.height >= 20 && box.height <= 32, "\(box)")
        var changed = 0
        var white = 0
        var darker = 0
        for y in 0..<720 {
            for x in 0..<1280 {
                let a = photo[x, y]
                let b = framed[x, y]
                if !box.contains(x, y) {
                    if a != b {
                        Issue.record("pixel \(x),\(y) outside the box changed: \(a) → \(b)")
                        return
                    }
                    continue
                }
                #expect(b.a == a.a)
                if a != b { changed += 1 }
                if b == RGBA(255, 255, 255) { white += 1 }
                if Int(b.r) + Int(b.g) + Int(b.b) < Int(a.r) + Int(a.g) + Int(a.b) { darker += 1 }
            }
        }
        let area = box.width * box.height
        #expect(changed * 10 > area * 9, "\(changed) of \(area) box pixels changed")
        #expect(white > 100, "\(white) pure white text pixels")
        #expect(darker * 2 > area, "\(darker) of \(area) box pixels darker")
    }

    /// The drawn box, pixel by pixel, is the formula: the photo darkened to 105/255, then white laid over it by
    /// the text's coverage (checked on the row through the text's middle of a small frame).
    @Test func boxPixelsFollowTheBlend() throws {
        let photo = try Self.street(320, 180)
        let overlay = try CreditOverlay(corner: .bottomRight)
        var framed = photo
        overlay.draw("Panoramax", into: &framed)
        let box = try #require(overlay.box(for: "Panoramax", frameWidth: 320, frameHeight: 180))
        let mask = overlay.renderer.mask("Panoramax", pixelSize: CreditOverlay.textSize(frameHeight: 180))
        #expect(CreditOverlay.textSize(frameHeight: 180) == 10)
        let textX = box.x + (box.width - mask.width) / 2
        let textY = box.y + (box.height - mask.height) / 2
        for y in box.y..<box.y + box.height {
            for x in box.x..<box.x + box.width {
                let mx = x - textX
                let my = y - textY
                let c =
                    mx >= 0 && mx < mask.width && my >= 0 && my < mask.height
                    ? Int(mask.coverage[my * mask.width + mx]) : 0
                func blend(_ v: UInt8) -> UInt8 {
                    let dark = (Int(v) * 105 + 127) / 255
                    return UInt8(dark + ((255 - dark) * c + 127) / 255)
                }
                let p = photo[x, y]
                #expect(framed[x, y] == RGBA(blend(p.r), blend(p.g), blend(p.b), p.a), "pixel \(x),\(y)")
            }
        }
    }

    /// A credit a little too wide for a small frame is set smaller on one line (down to 9 px); one much too wide
    /// (a 160-pixel GIF) breaks at its " · " separators into 9 px lines that fit, inside the frame with its margin.
    @Test func longCreditShrinksThenWrapsInANarrowFrame() throws {
        let overlay = try CreditOverlay(corner: .bottomLeft)
        let credit = "© Zoë Éléonore · CC-BY-SA-4.0 · Panoramax"
        let atTen = overlay.renderer.mask(credit, pixelSize: 10)
        let atNine = overlay.renderer.mask(credit, pixelSize: 9)
        // Room for the 9 px line but not the 10 px one: one line of 9 px.
        let snug = atNine.width + 2 * 5 + 2 * 4 + 2
        #expect(snug < atTen.width + 2 * 5 + 2 * 4, "\(atNine.width), \(atTen.width)")
        let oneLine = try #require(overlay.box(for: credit, frameWidth: snug, frameHeight: 90))
        #expect(
            oneLine.height == (atNine.height + 2 * 2 + 1) & ~1 && oneLine.width == (atNine.width + 2 * 4 + 1) & ~1,
            "\(oneLine)")
        let box = try #require(overlay.box(for: credit, frameWidth: 160, frameHeight: 90))
        #expect(atNine.width > 160)
        #expect(box.x >= 5 && box.x + box.width <= 160 - 5 && box.y + box.height <= 90 - 5, "\(box)")
        let lines = CreditOverlay.wrapped(credit, room: 160 - 10 - 8) { overlay.renderer.width(of: $0, pixelSize: 9) }
        #expect(lines.split(separator: "\n").count >= 2, "\(lines)")
        #expect(box.height >= 2 * atNine.height, "\(box)")
        // Blank text draws nothing.
        var frame = try Self.street(160, 90)
        let before = frame
        overlay.draw("  ", into: &frame)
        #expect(frame == before && overlay.box(for: "", frameWidth: 160, frameHeight: 90) == nil)
    }
}
