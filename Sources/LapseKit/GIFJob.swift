// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A video (file, http(s) URL, HLS) or still images → an animated GIF (`lapse gif`).
///
/// Video: frame i is the source frame shown at `start + i / fps` (variable frame rates keep their speed), with
/// rotation, sample aspect ratio, HDR tone mapping and alpha handled by ``VideoFrameReader``; each frame lasts
/// `1 / fps` (the last one up to the end), so the delays add up to the range asked for.
/// Images: each shown for its own duration (from a list file) or ``imageDelay``, fitted into the first image's
/// size with transparent padding.
/// Frames are encoded by ``GIFEncoder`` (libimagequant palettes, inter-frame transparency, giflib).
/// Decoding and encoding stream: memory does not grow with the duration.
public struct GIFJob: Sendable {
    /// What the GIF is made from.
    public enum Source: Sendable, Equatable {
        /// A video: a file or an http(s) URL.
        case video(URL)
        /// Still images in order (see ``ImageInputs/expand(_:)``).
        case images([ImageInput])
    }

    /// Output size rule.
    public enum Size: Sendable, Equatable {
        /// By the longer displayed side L: L ≥ 1200 → ×0.2, ≥ 800 → ×0.3, ≥ 400 → ×0.5, else ×0.7.
        case auto
        /// Both sides times a factor (> 0).
        case scale(Double)
        /// This width in pixels, height from the aspect ratio.
        case width(Int)
        /// This height in pixels, width from the aspect ratio.
        case height(Int)
    }

    /// The video or the images the GIF is made from.
    public var source: Source
    /// The GIF to write (`.gif`).
    public var output: URL
    /// Video: seconds from the start of the input to begin at. Default 0.
    public var start: Double = 0
    /// Video: seconds from the start of the input to end at; `nil` = ``duration`` after ``start``, or the end.
    public var end: Double?
    /// Video: length in seconds from ``start`` (used when ``end`` is nil); `nil` = to the end.
    public var duration: Double?
    /// Video: frames sampled from the source a second, at most 50 (a GIF's delays are centiseconds, and players
    /// slow delays under 2 cs down). Default 10; an exact fraction, as the other jobs' frame rates (30000/1001).
    public var frameRate = FrameRate(10)
    /// How big the GIF is: a rule of ``outputSize(displayWidth:displayHeight:rule:)`` (default: by the source's size).
    public var size: Size = .auto
    /// Images: seconds each is shown when its list line gives none; `nil` = one frame's time at ``frameRate``.
    public var imageDelay: Double?
    /// Palette, dithering, loop and speed options (``LapseGIF/GIFOptions``).
    public var options = GIFOptions()
    /// Replace an existing output file.
    public var overwrite = false
    /// Allow a GIF more than ``maxUpscale`` times the video's width or height (default false: such a size is
    /// refused — every frame upscaled makes a GIF many times larger and no sharper).
    public var upscale = false
    /// How much larger than the video, per side, a GIF may be without ``upscale`` (2×).
    public static let maxUpscale = 2
    /// Network timeouts for URL inputs.
    public var inputOptions = MediaInput.Options()

    /// A GIF of `source` written to `output` (a `.gif` file).
    public init(source: Source, output: URL) {
        self.source = source
        self.output = output
    }

    /// What a finished job made. Encoded as `lapse gif --json` prints it: output, width, height, frames, delays
    /// (centiseconds), duration, loop (`null`: plays once), bytes, framesSampled, decodeErrors.
    public struct Summary: Sendable, Encodable {
        /// The GIF as written: size, delays, loop count, bytes.
        public var gif: GIFSummary
        /// Frames sampled from the source (before merging identical ones).
        public var framesSampled: Int
        /// Video: seconds of the source covered.
        public var start: Double
        /// Video: the end of the source covered, seconds (images: their total duration).
        public var end: Double
        /// Warnings seen (undecodable frames).
        public var decodeErrors: Int

        /// See the type's documentation for the keys.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: SummaryKey.self)
            try c.encode(gif.url.shown, forKey: "output")
            try c.encode(gif.width, forKey: "width")
            try c.encode(gif.height, forKey: "height")
            try c.encode(gif.frameCount, forKey: "frames")
            try c.encode(gif.delays, forKey: "delays")
            try c.encode(gif.duration, forKey: "duration")
            try c.encodeNullable(gif.loopCount, forKey: "loop")
            try c.encode(gif.bytes, forKey: "bytes")
            try c.encode(framesSampled, forKey: "framesSampled")
            try c.encode(decodeErrors, forKey: "decodeErrors")
        }
    }

    /// The output size for a displayed size under `rule` (each side ≥ 1).
    public static func outputSize(displayWidth w: Int, displayHeight h: Int, rule: Size) -> (width: Int, height: Int) {
        func scaled(_ f: Double) -> (Int, Int) {
            (max(1, Int((Double(w) * f).rounded())), max(1, Int((Double(h) * f).rounded())))
        }
        switch rule {
        case .auto:
            let longer = max(w, h)
            return scaled(longer >= 1200 ? 0.2 : longer >= 800 ? 0.3 : longer >= 400 ? 0.5 : 0.7)
        case .scale(let f): return scaled(f)
        case .width(let width): return (width, max(1, Int((Double(width) * Double(h) / Double(w)).rounded())))
        case .height(let height): return (max(1, Int((Double(height) * Double(w) / Double(h)).rounded())), height)
        }
    }

    /// Runs the job.
    /// - Parameters:
    ///   - progress: stage "gif", frames sampled of the total when known.
    ///   - warning: undecodable frames (the previous frame is repeated).
    /// - Throws: ``LapseError``: `.usage` (bad settings), `.output` (unwritable or existing output),
    ///   `.invalidInput`/`.network` (input cannot be read; no decodable frame), `.notFound` (start beyond the end).
    ///   On any error no file is left at ``output``.
    /// - Returns: the GIF written and what was sampled.
    public func run(progress: ProgressHandler? = nil, warning: WarningHandler? = nil) async throws -> Summary {
        guard frameRate.value <= 50 else {
            throw LapseError.usage("the frame rate must be more than 0 and at most 50 fps")
        }
        guard (1...100).contains(options.quality) else { throw LapseError.usage("quality must be 1 to 100") }
        guard (0...1).contains(options.dithering) else { throw LapseError.usage("dithering must be 0 to 1") }
        if case .scale(let f) = size, !(f > 0 && f <= 10) {
            throw LapseError.usage("the scale must be more than 0 and at most 10")
        }
        // Fail on an unwritable or existing output before any (network) reading.
        let inputs: [URL]
        switch source {
        case .video(let location): inputs = [location]
        case .images(let images): inputs = images.map(\.url)
        }
        try AtomicOutput(url: output, overwrite: overwrite, inputs: inputs).discard()
        switch source {
        case .video(let location): return try await runVideo(location, progress: progress, warning: warning)
        case .images(let images): return try await runImages(images, progress: progress, warning: warning)
        }
    }

    private func runVideo(_ location: URL, progress: ProgressHandler?, warning: WarningHandler?) async throws
        -> Summary
    {
        guard start >= 0 else { throw LapseError.usage("`start` must be 0 or more") }
        if let end, end <= start { throw LapseError.usage("`end` must be after `start`") }
        if let duration, duration <= 0 { throw LapseError.usage("`duration` must be more than 0") }
        // The reader opens, reads and decodes on a thread of its own (network waits and decoding off the pool).
        let source = try await BackgroundVideoReader.open(location, options: inputOptions)
        let (size, start, end, duration, upscale) = (self.size, self.start, self.end, self.duration, self.upscale)
        let (w, h, stop) = try await source.run { reader -> (Int, Int, Double) in
            reader.warning = warning
            let (w, h) = Self.outputSize(
                displayWidth: reader.displayWidth, displayHeight: reader.displayHeight, rule: size)
            try GIFEncoder.checkSize(width: w, height: h)
            let (vw, vh) = (reader.displayWidth, reader.displayHeight)
            if !upscale && (w > Self.maxUpscale * vw || h > Self.maxUpscale * vh) {
                throw LapseError(
                    .usage, reader.name,
                    """
                    the GIF would be \(w)x\(h), more than \(Self.maxUpscale)× the video's \(vw)x\(vh) (every frame \
                    upscaled: larger, no sharper); give --width \(Self.maxUpscale * vw) or less, or --upscale to make \
                    it anyway
                    """)
            }
            reader.outputSize = (w, h)
            if w > reader.displayWidth || h > reader.displayHeight {
                warning?(
                    """
                    \(reader.name): the GIF (\(w)x\(h)) is larger than the video \
                    (\(reader.displayWidth)x\(reader.displayHeight)): its frames are upscaled
                    """
                )
            }
            let videoEnd = reader.duration
            if let videoEnd, start >= videoEnd {
                throw LapseError(
                    .notFound, reader.name,
                    """
                    `start` \(TimeValue.format(start)) is at or after the end of the video \
                    (\(TimeValue.format(videoEnd)))
                    """
                )
            }
            var stop = end ?? duration.map { start + $0 } ?? videoEnd ?? .infinity
            // A live stream (its duration unknown) never ends by itself: the GIF would grow until killed.
            if !stop.isFinite && !location.isFileURL {
                throw LapseError(
                    .usage, reader.name,
                    "its duration is unknown (a live stream?): give the end of the range (`end` or `duration`)")
            }
            if let videoEnd, stop > videoEnd + 0.005 {
                // Asked for past the end: say what is made instead of a shorter GIF without a word.
                let asked =
                    end != nil ? "`end` \(TimeValue.format(stop))" : "`duration` \(TimeValue.format(stop - start))"
                warning?(
                    """
                    \(reader.name): \(asked) runs past the end of the video (\(TimeValue.format(videoEnd))): the GIF \
                    is \(TimeValue.format(videoEnd - start)), from \(TimeValue.format(start)) to the end
                    """
                )
            }
            if let videoEnd { stop = min(stop, videoEnd) }
            if start > 0 { try reader.seek(to: start) }
            return (w, h, stop)
        }

        let encoder = try GIFEncoder(url: output, width: w, height: h, options: options, overwrite: overwrite)
        let interval = 1 / frameRate.value
        let total = stop.isFinite ? Self.frameCount(start: start, stop: stop, interval: interval) : nil
        var i = 0
        var lastTime = start
        while true {
            try Task.checkCancellation()
            let t = start + Double(i) * interval
            if t >= stop - 1e-9 && i > 0 { break }
            let first = i == 0
            guard
                let frame = try await source.run({ reader -> PixelBuffer? in
                    if !stop.isFinite, !first, reader.isAtEnd(after: t) { return nil }
                    return try reader.frame(at: t)
                })
            else { break }
            var frameEnd = t + interval
            // A last frame shorter than 2 cs is not shown: this frame lasts to the end instead.
            let isLast = stop.isFinite && Self.cs(stop) - Self.cs(frameEnd) < 2
            if isLast { frameEnd = stop }
            try await encoder.add(frame, duration: max(frameEnd - t, 0.01))
            lastTime = frameEnd
            i += 1
            progress?(ProgressEvent(stage: .gif, completed: i, total: total, unit: "frames"))
            if isLast { break }
        }
        let gif = try await encoder.finish()
        let decodeErrors = try await source.run { $0.decodeErrors }
        return Summary(gif: gif, framesSampled: i, start: start, end: lastTime, decodeErrors: decodeErrors)
    }

    /// Frames the loop below samples from `start` to a finite `stop`: frame i (at start + i·interval) is shown when at
    /// least 2 cs remain before `stop`, else the frame before it lasts to the end.
    static func frameCount(start: Double, stop: Double, interval: Double) -> Int {
        var n = 1
        while cs(stop) - cs(start + Double(n) * interval) >= 2 { n += 1 }
        return n
    }

    private func runImages(_ images: [ImageInput], progress: ProgressHandler?, warning: WarningHandler?) async throws
        -> Summary
    {
        guard !images.isEmpty else { throw LapseError.usage("no input images") }
        let delay = imageDelay ?? 1 / frameRate.value
        guard delay > 0, delay.isFinite else { throw LapseError.usage("`delay` must be more than 0 seconds") }
        let own = images.filter { $0.duration != nil }.count
        if let imageDelay, own > 0 {
            // Both given: the list's own seconds win where a line has them; say so rather than leave it a riddle.
            warning?(
                """
                \(own) of \(images.count) images have their own seconds in the list, which win over `delay` \
                (\(NumberText.compact(imageDelay, digits: 3)) s, kept for the others)
                """
            )
        }
        // Images are decoded at reduced size where the decoder can and they are shown much smaller (a JPEG at
        // ½, ¼ or ⅛); the first one's full size decides the GIF's.
        var firstSize: (width: Int, height: Int)?
        let rule = size
        let first = try DecodedImage(url: images[0].url) { w, h in
            firstSize = (w, h)
            return Self.outputSize(displayWidth: w, displayHeight: h, rule: rule)
        }
        let full = firstSize ?? (first.fullDisplayWidth, first.fullDisplayHeight)
        let (w, h) = Self.outputSize(displayWidth: full.width, displayHeight: full.height, rule: size)
        let fitter = FrameFitter(width: w, height: h, mode: .contain, background: RGBA(0, 0, 0, 0))
        let encoder = try GIFEncoder(url: output, width: w, height: h, options: options, overwrite: overwrite)
        // Images decoded on the cooperative pool, several at once, added to the GIF in order.
        var i = 0
        var seconds = 0.0
        try await forEachOrdered(
            count: images.count, concurrency: 2 * max(1, ProcessInfo.processInfo.activeProcessorCount),
            produce: { k -> Result<PixelBuffer, LapseError> in
                try Task.checkCancellation() // no new decode once the job is cancelled
                let input = images[k]
                do {
                    let image =
                        k == 0
                        ? first
                        : try DecodedImage(url: input.url) {
                            fitter.scaledSize(displayWidth: $0, displayHeight: $1)
                        }
                    if let misnamed = image.misnamed { warning?("\(input.url.shown): \(misnamed), decoded as it is") }
                    let (sw, sh) = fitter.scaledSize(
                        displayWidth: image.fullDisplayWidth, displayHeight: image.fullDisplayHeight)
                    return .success(Self.centred(try image.pixels(width: sw, height: sh), width: w, height: h))
                } catch let error as LapseError {
                    return .failure(error) // thrown in input order: the first bad image is named
                }
            },
            consume: { _, made in
                try Task.checkCancellation()
                let frame = try made.get()
                let d = images[i].duration ?? delay
                try await encoder.add(frame, duration: d)
                seconds += d
                i += 1
                progress?(ProgressEvent(stage: .gif, completed: i, total: images.count, unit: "images"))
            })
        let gif = try await encoder.finish()
        return Summary(gif: gif, framesSampled: i, start: 0, end: seconds, decodeErrors: 0)
    }

    private static func cs(_ seconds: Double) -> Int { Int((seconds * 100).rounded()) }

    /// `image` centred on a transparent `width × height` canvas (the image is at most that size).
    static func centred(_ image: PixelBuffer, width: Int, height: Int) -> PixelBuffer {
        if image.width == width && image.height == height { return image }
        var out = PixelBuffer(width: width, height: height, fill: RGBA(0, 0, 0, 0))
        let ox = (width - image.width) / 2
        let oy = (height - image.height) / 2
        let row = min(image.width, width) * 4
        for y in 0..<min(image.height, height) {
            let d = ((oy + y) * width + ox) * 4
            out.bytes.replaceSubrange(d..<d + row, with: image.bytes[y * image.width * 4..<y * image.width * 4 + row])
        }
        return out
    }
}
