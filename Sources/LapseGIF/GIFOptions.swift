// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// How the colours of a GIF are chosen.
public enum GIFPaletteMode: String, Sendable, CaseIterable {
    /// One palette of up to 255 colours (one of them transparent) for each frame, chosen in parallel and
    /// remapped in order over the displayed frame (the gifski approach; best quality).
    case perFrame = "per-frame"
    /// One palette shared by every frame, built from all frames with libimagequant's histogram API
    /// (`liq_histogram_*`); frames are spilled to a temporary file until the palette is known, so memory
    /// stays bounded.
    case global
}

/// Settings of a ``GIFEncoder``.
public struct GIFOptions: Sendable, Equatable {
    /// Quality, 1…100. Default 90. With a global palette, libimagequant's target quality
    /// (`liq_set_quality(attr, 0, quality)`); with per-frame palettes it sets the target in a luma/chroma
    /// space (`quality + 0.3 × (100 − quality)`, 93 at 90) and the colours of smooth frames
    /// (`255 × (quality / 100)¹⁰`, 89 at 90).
    public var quality: Int
    /// Floyd–Steinberg dithering level, 0 (none) … 1 (full) (`liq_set_dithering_level`). Default 1.
    public var dithering: Double
    /// Per-frame palettes (default) or one global palette.
    public var palette: GIFPaletteMode
    /// Loop count written in the NETSCAPE2.0 application extension: 0 = forever (default), N = N extra
    /// plays as browsers read it; `nil` writes no extension, so the GIF plays once.
    public var loopCount: Int?
    /// Trades quality for speed: libimagequant speed 10 instead of 5.
    public var fast: Bool
    /// Largest per-channel difference (0…255) between a pixel and what is already displayed there for the
    /// pixel to count as unchanged and become transparent. `nil` derives it from ``quality``:
    /// `max(0, (100 − quality) / 4)`, i.e. 2 at quality 90, 0 at 100. With per-frame palettes it applies
    /// where the 3×3 neighbourhood is textured (`min(tolerance, largest channel range / 4)`), not in flat
    /// areas nor in smooth frames, where a stale pixel shows.
    public var changeTolerance: Int?
    /// Frames quantized at the same time; `nil` = 2 × the number of active processors.
    public var framesInFlight: Int?
    /// Content-adaptive encoding (per-frame palettes only): palettes chosen in a luma/chroma space, smooth
    /// frames with more colours and no change tolerance, the change tolerance lowered in flat neighbourhoods.
    /// Off: palettes in RGB at ``quality`` and one tolerance everywhere (the behaviour before; for tests).
    var adaptive = true
    /// Repeat the previous pixel's palette index where it shows the same colour (smaller LZW output, same
    /// picture). For tests.
    var repeatIndices = true

    /// Options with the given values; every one has the default the command line uses.
    public init(
        quality: Int = 90, dithering: Double = 1, palette: GIFPaletteMode = .perFrame, loopCount: Int? = 0,
        fast: Bool = false, changeTolerance: Int? = nil, framesInFlight: Int? = nil
    ) {
        self.quality = quality
        self.dithering = dithering
        self.palette = palette
        self.loopCount = loopCount
        self.fast = fast
        self.changeTolerance = changeTolerance
        self.framesInFlight = framesInFlight
    }

    var effectiveTolerance: Int { changeTolerance ?? max(0, (100 - quality) / 4) }
}

/// What a finished GIF holds.
public struct GIFSummary: Sendable, Equatable {
    /// Where it was written.
    public var url: URL
    /// Logical screen size in pixels.
    public var width: Int
    /// Logical screen height in pixels.
    public var height: Int
    /// Delay of each frame written, in centiseconds (after merging identical frames).
    public var delays: [Int]
    /// The loop count written (`nil`: none, plays once).
    public var loopCount: Int?
    /// File size in bytes.
    public var bytes: Int64
    /// Frames given to the encoder (before merging).
    public var framesAdded: Int

    /// Number of frames in the file.
    public var frameCount: Int { delays.count }
    /// Total duration in seconds (sum of the delays).
    public var duration: Double { Double(delays.reduce(0, +)) / 100 }
}

/// How a frame is removed before the next one is drawn (GIF89a §23, "Disposal Method").
enum GIFDisposal: Int, Sendable {
    /// Leave it in place (the next frame draws over it).
    case keep = 1
    /// Clear its rectangle to the background (transparent).
    case background = 2
}

/// A rectangle of the logical screen, in pixels.
struct GIFRect: Sendable, Equatable {
    var x: Int, y: Int, width: Int, height: Int
    var isEmpty: Bool { width <= 0 || height <= 0 }
}

/// A frame after the change detection, ready for quantization: RGBA of its rectangle where alpha 0 means
/// "transparent index" (unchanged since the previous frame, or transparent in the source) and every other
/// pixel is opaque.
struct PreparedFrame: Sendable {
    var rect: GIFRect
    var pixels: [UInt8]
    var delay: Int
    var disposal: GIFDisposal
    /// Keep the rectangle as it is (first frame; frames cleared after display).
    var fixedRect: Bool
    /// Mostly smooth content (``FrameAnalysis/smoothShare(_:width:height:)``): quantized with more colours.
    var smooth = false
}

/// A quantized frame: palette indices of its rectangle.
struct IndexedFrame: Sendable {
    var rect: GIFRect
    var indices: [UInt8]
    /// Up to 256 colours.
    var palette: [RGBAColor]
    /// Index of the transparent colour, if the palette has one.
    var transparentIndex: Int?
    /// Whether `palette` is the file's global colour map (no local map is written).
    var usesGlobalPalette: Bool
    var delay: Int
    var disposal: GIFDisposal
    var fixedRect: Bool
    /// Let the writer repeat the previous pixel's index where it shows the same colour.
    var repeatIndices = false
}

/// A palette entry (straight alpha; GIF keeps only r, g, b and one transparent index).
struct RGBAColor: Sendable, Equatable {
    var r: UInt8, g: UInt8, b: UInt8, a: UInt8
    /// Packed like a ``PixelBuffer`` word (R lowest), alpha forced to 255 (0 for transparent entries).
    var packedOpaque: UInt32 { a < 128 ? 0 : UInt32(r) | UInt32(g) << 8 | UInt32(b) << 16 | 0xFF00_0000 }
}
