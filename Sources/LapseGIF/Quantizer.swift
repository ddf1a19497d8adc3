// SPDX-License-Identifier: GPL-3.0-or-later
internal import CImageQuant
import Foundation
import LapseCore

/// libimagequant behind two calls: a palette for one frame (``quantize(_:options:)``), or one palette for
/// many frames (``GlobalPalette``).
///
/// Facts used (libimagequant 2.x/4.x docs): `liq_image_quantize` replaces the deprecated `liq_quantize_image`;
/// the palette must be read after remapping (remapping refines it); the pixel buffer must outlive the
/// `liq_image`; handles arrive in Swift as `OpaquePointer`.
enum Quantizer {
    /// Colours libimagequant may use: 255, leaving one GIF index for transparency.
    static let maxColors: Int32 = 255

    /// `omp_set_num_threads` of the OpenMP runtime libimagequant is built with (Debian builds it with libgomp),
    /// looked up at run time so that a build without OpenMP works too.
    private static let ompSetNumThreads: (@convention(c) (Int32) -> Void)? = {
        guard let sym = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "omp_set_num_threads") else { return nil }
        return unsafeBitCast(sym, to: (@convention(c) (Int32) -> Void).self)
    }()

    /// Makes libimagequant's OpenMP loops run on the calling thread only. Frames are already quantized in
    /// parallel, one per task; letting each call also start an OpenMP team oversubscribes the cores and
    /// spends the time in libgomp's spin-waits. The setting is per thread (OpenMP's nthreads-var of the
    /// calling thread), so it is applied before each per-frame quantization and remapping (the global
    /// palette, built on one thread, keeps OpenMP).
    static func runOnCallingThread() {
        ompSetNumThreads?(1)
    }

    /// The colour space a frame's palette is chosen and remapped in.
    enum Space: Sendable {
        /// The pixels as they are, sRGB (libimagequant's default gamma).
        case rgb
        /// Full-range BT.601 Y, Cb, Cr (chroma companded by ``compand(_:)``) in the R, G, B slots,
        /// marked linear (gamma 1) so that libimagequant's error is the plain squared difference of Y, Cb, Cr —
        /// the planes SSIM is taken on, each as much as the others. Text edges and noise keep their luma and
        /// the colours that matter in flat areas keep their chroma; palettes come out smaller for the same
        /// SSIM than in RGB (measured on bench/gif.sh's clips).
        case ycc
    }

    /// Chroma weight of ``Space/ycc`` near grey: chroma errors count twice as much as in plain YCbCr (SSIM
    /// punishes them hard: the chroma planes are mostly flat). Beyond ±``chromaKnee`` the slope drops so that
    /// the most saturated colours (|Cb|, |Cr| up to 127.5) still fit in 0…255 (a piecewise-linear, invertible
    /// companding; saturated colours are then located to about ±1.3 levels).
    static let chromaGain = 2.0
    static let chromaKnee = 48.0
    private static let kneeOut = chromaGain * chromaKnee
    private static let outerSlope = (127.5 - kneeOut) / (127.5 - chromaKnee)

    /// Chroma (−127.5…127.5) → companded chroma (−127.5…127.5).
    static func compand(_ c: Double) -> Double {
        let a = abs(c)
        let out = a <= chromaKnee ? a * chromaGain : kneeOut + (a - chromaKnee) * outerSlope
        return c < 0 ? -out : out
    }

    /// Inverse of ``compand(_:)``.
    static func expand(_ c: Double) -> Double {
        let a = abs(c)
        let out = a <= kneeOut ? a / chromaGain : chromaKnee + (a - kneeOut) / outerSlope
        return c < 0 ? -out : out
    }

    /// How one frame is quantized.
    struct Profile: Sendable {
        var space: Space
        /// libimagequant target quality (1…100).
        var quality: Int
        var maxColors: Int32
        /// Pixels handed to libimagequant as linear (gamma 1): its error is then the plain squared difference
        /// of the stored values, as SSIM and PSNR take it; otherwise its default sRGB gamma.
        var linear = false
        /// Factor on ``GIFOptions/dithering``.
        var ditheringScale = 1.0
        /// libimagequant speed (1…10) unless ``GIFOptions/fast`` asks for 10.
        var speed: Int32 = 5

        /// The profile for a frame under `options` (q = ``GIFOptions/quality``).
        /// - Plain (``GIFOptions/adaptive`` off, or a global palette): RGB at q, up to 255 colours.
        /// - Adaptive: ``Space/ycc`` (linear) at `q + 0.3 (100 − q)` (90 → 93; libimagequant's quality is an
        ///   MSE target, which means something else in that space).
        /// - Adaptive, smooth frame: linear RGB at quality 100, at most `255 × (q / 100)¹⁰` colours
        ///   (90 → 89, 95 → 153, 100 → 255), half the dithering: libimagequant's MSE target stops adding colours
        ///   to a smooth gradient with faint noise long before it stops banding (and SSIM stops improving);
        ///   with colours about a level apart, full Floyd–Steinberg adds more noise than it removes banding.
        ///   RGB here: palette entries hit the source colours exactly, where chroma rounding through
        ///   ``Space/ycc`` adds noise to flat chroma. Speed 7: the many colours at quality 100 make speed 5's
        ///   extra k-means passes a third of the encoding time for an SSIM gain under 0.0001.
        /// Tuned on bench/gif.sh's clips (a screen recording, a 360° street video, a phone video of a wall).
        static func of(_ options: GIFOptions, smooth: Bool) -> Profile {
            let q = max(1, min(100, options.quality))
            guard options.adaptive, options.palette == .perFrame else {
                return Profile(space: .rgb, quality: q, maxColors: Quantizer.maxColors)
            }
            if smooth {
                let colors = Int((255 * pow(Double(q) / 100, 10)).rounded())
                return Profile(
                    space: .rgb, quality: 100, maxColors: Int32(max(16, min(Int(Quantizer.maxColors), colors))),
                    linear: true, ditheringScale: 0.5, speed: 7)
            }
            return Profile(
                space: .ycc, quality: Int((Double(q) + 0.3 * Double(100 - q)).rounded()),
                maxColors: Quantizer.maxColors, linear: true)
        }

        /// libimagequant's gamma argument (0 = its default, sRGB).
        var gamma: Double { linear ? 1 : 0 }
    }

    static func makeAttributes(_ options: GIFOptions, profile: Profile? = nil) throws -> OpaquePointer {
        guard let attr = liq_attr_create() else { throw LapseError(.codec, nil, "libimagequant: out of memory") }
        let p = profile ?? Profile.of(options, smooth: false)
        _ = liq_set_max_colors(attr, p.maxColors)
        _ = liq_set_quality(attr, 0, Int32(p.quality))
        _ = liq_set_speed(attr, options.fast ? 10 : p.speed)
        return attr
    }

    /// `x` rounded and clamped to a byte.
    private static func clamp(_ x: Double) -> UInt8 { UInt8(max(0, min(255, x.rounded()))) }

    /// Converts RGBA pixels in place into `space` (alpha kept).
    static func convert(_ p: UnsafeMutableRawPointer, count: Int, to space: Space) {
        guard space == .ycc else { return }
        let px = p.bindMemory(to: UInt8.self, capacity: count * 4)
        for i in 0..<count {
            let r = Double(px[i * 4])
            let g = Double(px[i * 4 + 1])
            let b = Double(px[i * 4 + 2])
            let y = 0.299 * r + 0.587 * g + 0.114 * b
            px[i * 4] = clamp(y)
            px[i * 4 + 1] = clamp(127.5 + compand(0.564 * (b - y)))
            px[i * 4 + 2] = clamp(127.5 + compand(0.713 * (r - y)))
        }
    }

    /// A palette entry in `space` back to RGB (clamped to 0…255).
    static func rgb(_ c: RGBAColor, from space: Space) -> RGBAColor {
        guard space == .ycc, c.a >= 128 else { return c }
        let y = Double(c.r)
        let cb = expand(Double(c.g) - 127.5)
        let cr = expand(Double(c.b) - 127.5)
        return RGBAColor(
            r: clamp(y + 1.402 * cr), g: clamp(y - 0.344136 * cb - 0.714136 * cr),
            b: clamp(y + 1.772 * cb), a: c.a)
    }

    /// Chooses one frame's own palette (the slow part, run in parallel); remapping follows in display order
    /// with ``QuantizedFrame/remap(background:)``.
    /// - Throws: ``LapseError`` `.codec` when libimagequant fails.
    static func quantize(_ frame: PreparedFrame, options: GIFOptions) throws -> QuantizedFrame {
        runOnCallingThread()
        let profile = Profile.of(options, smooth: frame.smooth)
        let attr = try makeAttributes(options, profile: profile)
        let w = frame.rect.width
        let h = frame.rect.height
        // libimagequant owns (and frees) the pixels: they must outlive the image.
        let pixels = copyToMalloc(frame.pixels)
        convert(pixels, count: w * h, to: profile.space)
        guard let image = liq_image_create_rgba(attr, pixels, Int32(w), Int32(h), profile.gamma) else {
            free(pixels)
            liq_attr_destroy(attr)
            throw LapseError(.codec, nil, "libimagequant: cannot take a \(w)x\(h) image")
        }
        _ = liq_image_set_memory_ownership(image, Int32(LIQ_OWN_PIXELS.rawValue))
        // A transparent entry, so that remapping over the previous frame can leave pixels unchanged.
        _ = liq_image_add_fixed_color(image, liq_color(r: 0, g: 0, b: 0, a: 0))
        var result: OpaquePointer?
        let status = liq_image_quantize(image, attr, &result)
        guard status == LIQ_OK, let result else {
            liq_image_destroy(image)
            liq_attr_destroy(attr)
            throw LapseError(.codec, nil, "libimagequant: quantization failed (error \(status.rawValue))")
        }
        _ = liq_set_dithering_level(result, Float(max(0, min(1, options.dithering * profile.ditheringScale))))
        return QuantizedFrame(
            frame: frame, attr: attr, image: image, result: result, profile: profile,
            repeatIndices: options.repeatIndices)
    }

    static func copyToMalloc(_ bytes: [UInt8]) -> UnsafeMutableRawPointer {
        let p = malloc(max(1, bytes.count))!
        bytes.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        return p
    }

    /// Remaps `frame` (whose `liq_image` is `image`) with `result`, then makes sure every pixel that was
    /// transparent in the input uses one transparent index.
    /// - Parameters:
    ///   - frame: the frame prepared for quantization.
    ///   - image: its `liq_image`.
    ///   - result: the quantization result to remap with.
    ///   - globalPalette: when given, the palette the frame should share; if remapping refined the palette away
    ///     from it, the frame keeps its own.
    ///   - overBackground: the image was given the displayed frame as background, so transparent pixels chosen by
    ///     libimagequant are deliberate ("the background shows this pixel better").
    ///   - space: the space the palette is in (converted back to RGB here).
    /// - Returns: the frame's indices and palette.
    /// - Throws: ``LapseError`` `.codec` when libimagequant fails to remap.
    static func remap(
        _ frame: PreparedFrame, image: OpaquePointer, result: OpaquePointer,
        globalPalette: [RGBAColor]?, overBackground: Bool = false, space: Space = .rgb
    ) throws -> IndexedFrame {
        let count = frame.rect.width * frame.rect.height
        var indices = [UInt8](repeating: 0, count: count)
        let status = indices.withUnsafeMutableBytes { liq_write_remapped_image(result, image, $0.baseAddress!, count) }
        guard status == LIQ_OK else {
            throw LapseError(.codec, nil, "libimagequant: remapping failed (error \(status.rawValue))")
        }
        var palette = readPalette(result).map { rgb($0, from: space) }
        var transparent = palette.firstIndex { $0.a < 128 }
        // Any input pixel with alpha 0 must show as transparent; add the entry if libimagequant made none.
        let hasTransparentPixels = frame.pixels.withUnsafeBytes { raw in
            raw.bindMemory(to: UInt32.self).contains { $0 >> 24 == 0 }
        }
        if transparent == nil, palette.count < 256 {
            palette.append(RGBAColor(r: 0, g: 0, b: 0, a: 0))
            transparent = palette.count - 1
        }
        if let t = transparent {
            let tIndex = UInt8(t)
            let opaqueOf = palette.map { $0.a >= 128 }
            frame.pixels.withUnsafeBytes { raw in
                let src = raw.bindMemory(to: UInt32.self)
                indices.withUnsafeMutableBufferPointer { dst in
                    for i in 0..<count {
                        if src[i] >> 24 == 0 {
                            dst[i] = tIndex
                        } else if !opaqueOf[Int(dst[i])] {
                            dst[i] = overBackground ? tIndex : nearestOpaque(src[i], palette)
                        }
                    }
                }
            }
        } else if hasTransparentPixels {
            throw LapseError(.codec, nil, "libimagequant: no palette slot left for transparency")
        }
        let shared = globalPalette != nil && globalPalette! == palette
        return IndexedFrame(
            rect: frame.rect, indices: indices, palette: shared ? globalPalette! : palette,
            transparentIndex: transparent, usesGlobalPalette: shared, delay: frame.delay,
            disposal: frame.disposal, fixedRect: frame.fixedRect)
    }

    /// The closest opaque palette entry (for the rare opaque pixel libimagequant mapped to a transparent one).
    private static func nearestOpaque(_ v: UInt32, _ palette: [RGBAColor]) -> UInt8 {
        var best = 0
        var bestD = Int.max
        for (i, c) in palette.enumerated() where c.a >= 128 {
            let dr = Int(v & 0xFF) - Int(c.r)
            let dg = Int(v >> 8 & 0xFF) - Int(c.g)
            let db = Int(v >> 16 & 0xFF) - Int(c.b)
            let d = dr * dr + dg * dg + db * db
            if d < bestD {
                bestD = d
                best = i
            }
        }
        return UInt8(best)
    }

    static func readPalette(_ result: OpaquePointer) -> [RGBAColor] {
        guard let p = liq_get_palette(result) else { return [] }
        let n = Int(p.pointee.count)
        return withUnsafeBytes(of: p.pointee.entries) { raw in
            let colors = raw.bindMemory(to: liq_color.self)
            return (0..<min(n, 256)).map {
                RGBAColor(r: colors[$0].r, g: colors[$0].g, b: colors[$0].b, a: colors[$0].a)
            }
        }
    }
}

/// One palette for many frames, built with libimagequant's histogram API: add every frame, then
/// ``finish()`` quantizes the histogram; frames are then remapped one at a time (a `liq_result` is not
/// safe to remap with from two threads).
final class GlobalPalette {
    private let options: GIFOptions
    private let attr: OpaquePointer
    private let histogram: OpaquePointer
    private var result: OpaquePointer?
    private(set) var palette: [RGBAColor] = []

    init(options: GIFOptions) throws {
        self.options = options
        attr = try Quantizer.makeAttributes(options)
        guard let h = liq_histogram_create(attr) else {
            liq_attr_destroy(attr)
            throw LapseError(.codec, nil, "libimagequant: out of memory")
        }
        histogram = h
    }

    deinit {
        if let result { liq_result_destroy(result) }
        liq_histogram_destroy(histogram)
        liq_attr_destroy(attr)
    }

    /// Adds a frame's colours (transparent pixels included: they reserve the transparent entry).
    func add(_ frame: PreparedFrame) throws {
        try frame.pixels.withUnsafeBytes { raw in
            guard
                let image = liq_image_create_rgba(
                    attr, raw.baseAddress!, Int32(frame.rect.width),
                    Int32(frame.rect.height), 0)
            else {
                throw LapseError(.codec, nil, "libimagequant: cannot take a frame")
            }
            defer { liq_image_destroy(image) }
            let status = liq_histogram_add_image(histogram, attr, image)
            guard status == LIQ_OK else {
                throw LapseError(.codec, nil, "libimagequant: histogram failed (error \(status.rawValue))")
            }
        }
    }

    /// Quantizes the histogram into the shared palette (≤ 255 colours plus a transparent entry).
    func finish() throws {
        var r: OpaquePointer?
        let status = liq_histogram_quantize(histogram, attr, &r)
        guard status == LIQ_OK, let r else {
            throw LapseError(.codec, nil, "libimagequant: palette failed (error \(status.rawValue))")
        }
        _ = liq_set_dithering_level(r, Float(max(0, min(1, options.dithering))))
        result = r
        var p = Quantizer.readPalette(r)
        if !p.contains(where: { $0.a < 128 }), p.count < 256 { p.append(RGBAColor(r: 0, g: 0, b: 0, a: 0)) }
        palette = p
    }

    /// Remaps one frame to the shared palette.
    func remap(_ frame: PreparedFrame) throws -> IndexedFrame {
        guard let result else { throw LapseError(.codec, nil, "global palette used before it was built") }
        return try frame.pixels.withUnsafeBytes { raw in
            guard
                let image = liq_image_create_rgba(
                    attr, raw.baseAddress!, Int32(frame.rect.width),
                    Int32(frame.rect.height), 0)
            else {
                throw LapseError(.codec, nil, "libimagequant: cannot take a frame")
            }
            defer { liq_image_destroy(image) }
            return try Quantizer.remap(frame, image: image, result: result, globalPalette: palette)
        }
    }
}

/// A frame whose palette is chosen, waiting to be remapped in display order over what is displayed
/// (`liq_image_set_background`, the technique gifski uses: pixels the displayed frame already shows better
/// than the palette can become transparent).
///
/// `@unchecked Sendable`: created by one quantizing task and then used only by the writer, never by two
/// threads at once; it owns its libimagequant handles and frees them in `deinit`.
final class QuantizedFrame: @unchecked Sendable {
    let frame: PreparedFrame
    private let attr: OpaquePointer
    private let image: OpaquePointer
    private let result: OpaquePointer
    let profile: Quantizer.Profile
    /// Whether the writer should make pixels repeat their left neighbour's index where that shows the same.
    let repeatIndices: Bool

    init(
        frame: PreparedFrame, attr: OpaquePointer, image: OpaquePointer, result: OpaquePointer,
        profile: Quantizer.Profile, repeatIndices: Bool
    ) {
        self.profile = profile
        self.repeatIndices = repeatIndices
        self.frame = frame
        self.attr = attr
        self.image = image
        self.result = result
    }

    deinit {
        liq_result_destroy(result)
        liq_image_destroy(image)
        liq_attr_destroy(attr)
    }

    /// Remaps the frame.
    /// - Parameter background: RGBA of what is displayed under the frame's rectangle (alpha 0 where nothing
    ///   is), or `nil` to remap without one.
    /// - Returns: the frame's indices and palette.
    /// - Throws: ``LapseError`` `.codec` when libimagequant fails.
    func remap(background: [UInt8]?) throws -> IndexedFrame {
        Quantizer.runOnCallingThread()
        var over = false
        if let background {
            let pixels = Quantizer.copyToMalloc(background)
            Quantizer.convert(pixels, count: frame.rect.width * frame.rect.height, to: profile.space)
            if let bg = liq_image_create_rgba(
                attr, pixels, Int32(frame.rect.width), Int32(frame.rect.height),
                profile.gamma)
            {
                _ = liq_image_set_memory_ownership(bg, Int32(LIQ_OWN_PIXELS.rawValue))
                // liq_image_set_background takes ownership of `bg`.
                over = liq_image_set_background(image, bg) == LIQ_OK
            } else {
                free(pixels)
            }
        }
        var indexed = try Quantizer.remap(
            frame, image: image, result: result, globalPalette: nil,
            overBackground: over, space: profile.space)
        indexed.repeatIndices = repeatIndices
        return indexed
    }
}
