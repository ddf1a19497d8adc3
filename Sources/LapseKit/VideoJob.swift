// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Still images → a video file (`lapse video`): every image shown for its duration at a constant frame rate,
/// EXIF orientation applied, fitted to one frame size, transparency composited over a background colour,
/// encoded as BT.709 yuv420p H.264 (or HEVC) in MP4/MOV with `moov` first.
///
/// Images are decoded and fitted on all cores, a bounded number ahead of the encoder, so memory does not grow
/// with the number of images.
public struct VideoJob: Sendable {
    /// The images in order (see ``ImageInputs/expand(_:)``); an entry's own duration overrides ``imageDuration``.
    public var inputs: [ImageInput]
    /// Output path; the container comes from its extension (`.mp4`, `.m4v`, `.mov`).
    public var output: URL
    /// Seconds each image is shown, > 0. Default 1.
    public var imageDuration: Double = 1
    /// Output frame rate, 1–240 frames per second (exact fractions such as 30000/1001). Default 30.
    public var frameRate = FrameRate(30)
    /// The frame rate in whole frames per second (setting it sets ``frameRate`` to that number).
    public var fps: Int {
        get { Int(frameRate.value.rounded()) }
        set { frameRate = FrameRate(max(1, newValue)) }
    }
    /// Frame size; `nil` means the first image's displayed size (rounded down to even numbers), scaled down to
    /// ``largestDefaultSide`` and ``largestDefaultPixels`` when larger.
    public var size: (width: Int, height: Int)?
    /// How an image of another shape fills the frame (default: contain, padded with ``background``).
    public var fit: FitMode = .contain
    /// Padding and the colour behind transparent pixels. Default black.
    public var background = RGBA(0, 0, 0)
    /// H.264 (default) or HEVC.
    public var codec: VideoEncoderSettings.Codec = .h264
    /// 0–51, default 20.
    public var crf: Double = 20
    /// x264/x265 preset, default `medium`.
    public var preset = EncoderPreset.medium
    /// Skip images that cannot be decoded (with a warning) instead of failing; a skipped image takes no time.
    public var skipInvalid = false
    /// Replace an existing output file.
    public var overwrite = false
    /// A file whose first audio stream is added as AAC, cut to the video's length.
    public var audio: URL?

    /// A job making a video of `inputs` (shown in order) at `output` (.mp4, .m4v or .mov).
    public init(inputs: [ImageInput], output: URL) {
        self.inputs = inputs
        self.output = output
    }

    /// What a finished job made. Encoded as `lapse video --json` prints it (``LapseCore/SummaryKey``): output,
    /// width, height, frames, fps (a number), frameRate (`"30000/1001"`), duration, bytes, images, skipped.
    public struct Summary: Sendable, Encodable {
        /// The video written.
        public var output: URL
        /// Images in the video.
        public var images: Int
        /// Images skipped because they could not be read (with ``skipInvalid``).
        public var skipped: Int
        /// Frames written.
        public var frames: Int
        /// Frame width in pixels.
        public var width: Int
        /// Frame height in pixels.
        public var height: Int
        /// Frames per second, rounded to a whole number (``frameRate`` is exact).
        public var fps: Int
        /// The exact frame rate (``fps`` rounded to whole frames).
        public var frameRate: FrameRate
        /// Seconds.
        public var duration: Double
        /// The video's size in bytes.
        public var bytes: Int64

        /// See the type's documentation for the keys.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: SummaryKey.self)
            try c.encode(output.shown, forKey: "output")
            try c.encodeFrameFormat(width: width, height: height, frameRate: frameRate)
            try c.encode(frames, forKey: "frames")
            try c.encode(duration, forKey: "duration")
            try c.encode(bytes, forKey: "bytes")
            try c.encode(images, forKey: "images")
            try c.encode(skipped, forKey: "skipped")
        }
    }

    /// The longest side and the most pixels of a frame size taken from the first image: HEVC level 5.1's largest
    /// picture (4096 × 2176, 8 912 896 pixels, ITU-T H.265 table A.8), within H.264 level 5.1's 36 864 macroblocks
    /// (table A-1) — what 4K players and hardware decoders take. A larger size can still be set explicitly.
    public static let largestDefaultSide = 4096
    /// The most pixels of a frame size taken from the first image (HEVC level 5.1's largest picture).
    public static let largestDefaultPixels = 8_912_896

    /// The frame size for a first image displayed at `w × h` when none is set: its own, or scaled down (aspect
    /// kept) to fit ``largestDefaultSide`` and ``largestDefaultPixels``; not yet rounded to even numbers.
    public static func defaultSize(displayWidth w: Int, displayHeight h: Int) -> (width: Int, height: Int) {
        let side = Double(largestDefaultSide) / Double(max(w, h))
        let area = (Double(largestDefaultPixels) / (Double(w) * Double(h))).squareRoot()
        let f = min(1, side, area)
        guard f < 1 else { return (w, h) }
        return (max(1, Int((Double(w) * f).rounded(.down))), max(1, Int((Double(h) * f).rounded(.down))))
    }

    /// The container for an output path's extension, or a usage error naming the extensions allowed.
    public static func container(for output: URL) throws -> MediaContainer {
        // MP4 and MOV (`.mp4`, `.m4v`, `.mov`); not Matroska, which `lapse clip` writes.
        guard let c = MediaContainer(fileExtension: output.pathExtension), c.isISOBaseMedia else {
            let gif = output.pathExtension.lowercased() == "gif" ? " (an animated GIF: lapse gif)" : ""
            throw LapseError.usage("\(output.shown): the output must end in .mp4, .m4v or .mov\(gif)")
        }
        return c
    }

    /// Runs the job.
    /// - Parameters:
    ///   - progress: called with stage "encode", frames done of the total.
    ///   - warning: called once per skipped image (with ``skipInvalid``).
    /// - Returns: a summary of what was written.
    /// - Throws: ``LapseError``: `.usage` for bad settings, `.invalidInput` naming the first image that cannot be
    ///   decoded (unless skipped) or when no image is valid, `.output` when the output cannot be written,
    ///   `.cancelled` when the task is cancelled. On any error no file is left at ``output``.
    public func run(progress: ProgressHandler? = nil, warning: WarningHandler? = nil) async throws -> Summary {
        let container = try Self.container(for: output)
        guard imageDuration > 0, imageDuration.isFinite else {
            throw LapseError.usage("the image duration must be more than 0 seconds")
        }
        guard (1...240).contains(frameRate.value) else { throw LapseError.usage("the frame rate must be 1 to 240 fps") }
        guard (0...51).contains(crf) else { throw LapseError.usage("CRF must be 0 to 51") }
        guard !inputs.isEmpty else { throw LapseError.usage("no input images") }
        let target = try AtomicOutput(
            url: output, overwrite: overwrite, inputs: inputs.map(\.url) + [audio].compactMap { $0 })
        defer { target.discard() }

        // The first valid image decides the default size. Images are decoded at reduced size where the decoder
        // can and they are shown much smaller (a JPEG at ½, ¼ or ⅛).
        var skipped = 0
        var firstIndex = 0
        var first: DecodedImage?
        var firstSize: (width: Int, height: Int)?
        let chosen = size
        while first == nil && firstIndex < inputs.count {
            do {
                first = try DecodedImage(url: inputs[firstIndex].url) { w, h in
                    firstSize = (w, h)
                    let (fw, fh) =
                        chosen.map { ($0.width, $0.height) } ?? Self.defaultSize(displayWidth: w, displayHeight: h)
                    return FrameFitter(width: fw, height: fh, mode: fit, background: background).scaledSize(
                        displayWidth: w, displayHeight: h)
                }
            } catch let error as LapseError where skipInvalid {
                warning?("skipped \(error.description)")
                skipped += 1
                firstIndex += 1
                firstSize = nil
            }
        }
        guard let first else { throw LapseError(.invalidInput, nil, "no valid image among the \(inputs.count) inputs") }
        let (width, height): (Int, Int)
        if let size {
            (width, height) = size
        } else {
            let full = firstSize ?? (first.fullDisplayWidth, first.fullDisplayHeight)
            (width, height) = Self.defaultSize(displayWidth: full.width, displayHeight: full.height)
            if (width, height) != full {
                warning?(
                    """
                    \(inputs[firstIndex].url.shown) is \(full.width)x\(full.height): the video is \
                    \(width & ~1)x\(height & ~1), 
                    """
                        + "the largest frame 4K players take (set a size for another)")
            }
        }
        let evenWidth = max(2, width & ~1)
        let evenHeight = max(2, height & ~1)
        let fitter = FrameFitter(width: evenWidth, height: evenHeight, mode: fit, background: background)

        // Frame counts: cumulative times rounded to frames, so the total is the sum of durations (±1 frame),
        // and every image gets at least one frame.
        let remaining = Array(inputs[firstIndex...])
        var frameCounts: [Int] = []
        var elapsed = 0.0
        var cursor = 0
        for input in remaining {
            elapsed += input.duration ?? imageDuration
            let end = max(cursor + 1, Int((elapsed * frameRate.value).rounded()))
            frameCounts.append(end - cursor)
            cursor = end
        }
        let totalFrames = cursor

        var settings = VideoEncoderSettings(width: evenWidth, height: evenHeight, fps: fps)
        settings.frameRate = (frameRate.numerator, frameRate.denominator)
        settings.codec = codec
        settings.crf = crf
        settings.preset = preset
        settings.metadata = ["encoder": "lapse \(lapseVersion)"]
        let videoLength = Double(totalFrames) / frameRate.value
        let audioTrack = try audio.map { try AudioTrack(sources: [.init(location: $0)], duration: videoLength) }
        let encoder = try VideoEncoder(
            url: target.temporaryURL, container: container, settings: settings,
            audioTracks: audioTrack.map { [$0] } ?? [])

        let skip = skipInvalid
        let firstImage = first
        // Images decoded and fitted on the cooperative pool, several at once (one task each, as a hyperlapse renders
        // its frames), encoded in order.
        let cores = ProcessInfo.processInfo.activeProcessorCount
        var done = 0
        var images = 0
        try await forEachOrdered(
            count: remaining.count, concurrency: 2 * max(1, cores),
            produce: { i -> Result<EncoderFrame, LapseError> in
                try Task.checkCancellation() // no new decode once the job is cancelled
                let input = remaining[i]
                do {
                    let image =
                        i == 0
                        ? firstImage
                        : try DecodedImage(url: input.url) {
                            fitter.scaledSize(displayWidth: $0, displayHeight: $1)
                        }
                    if let misnamed = image.misnamed { warning?("\(input.url.shown): \(misnamed), decoded as it is") }
                    // Straight to the encoder's Y′CbCr when nothing is composited (one conversion, not two).
                    if let picture = try fitter.yuvFrame(for: image) { return .success(.yuv(picture)) }
                    return .success(.rgba(try fitter.frame(for: image)))
                } catch let error as LapseError {
                    return .failure(error) // skipped, or thrown in input order (the first bad image is named)
                }
            },
            consume: { index, result in
                try Task.checkCancellation()
                let count = frameCounts[index]
                switch result {
                case .success(let frame):
                    switch frame {
                    case .rgba(let pixels): try encoder.append(pixels, count: count)
                    case .yuv(let picture): try encoder.append(picture, count: count)
                    }
                    try audioTrack?.write(upTo: encoder.duration, into: encoder)
                    images += 1
                    done += count
                    progress?(ProgressEvent(stage: .encode, completed: done, total: totalFrames, unit: "frames"))
                case .failure(let error):
                    guard skip else { throw error }
                    // A skipped image takes no time: the video is the valid images' durations.
                    warning?("skipped \(error.description)")
                    skipped += 1
                    done += count
                }
            })
        // the video may be shorter than planned (skipped images)
        try audioTrack?.write(upTo: encoder.duration, into: encoder)
        try encoder.finish()
        try target.commit()
        let bytes =
            (try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? NSNumber)?.int64Value ?? 0
        return Summary(
            output: output, images: images, skipped: skipped, frames: encoder.framesWritten,
            width: evenWidth, height: evenHeight, fps: fps, frameRate: frameRate,
            duration: Double(encoder.framesWritten) / frameRate.value, bytes: bytes)
    }
}

/// An image made ready for the encoder: Y′CbCr when nothing was composited, else RGBA.
private enum EncoderFrame: Sendable {
    case rgba(PixelBuffer)
    case yuv(YUVFrame)
}
