// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg
import Foundation
import LapseCore

/// The speed/compression presets of x264 and x265, fastest first (`x264 --fullhelp`): each slower one gives a
/// smaller file at the same CRF. `"slow"` in a job file.
public enum EncoderPreset: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    case ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow, placebo

    /// Every name, fastest first.
    public static let names = allCases.map(\.rawValue)

    /// The preset's name (`medium`).
    public var description: String { rawValue }

    /// Reads a preset's name.
    /// - Throws: `DecodingError.dataCorrupted` saying which names it takes, for any other text.
    public init(from decoder: any Decoder) throws {
        self = try decoder.singleValueContainer().decodeText(
            takes: "one of \(Self.names.joined(separator: ", "))", Self.init(rawValue:))
    }
}

/// Settings of a ``VideoEncoder``. The defaults give a file that plays everywhere: H.264 High profile,
/// yuv420p, BT.709 limited range (converted and tagged), `moov` before `mdat` (faststart).
public struct VideoEncoderSettings: Sendable {
    /// The video codec: H.264 through libx264 or HEVC through libx265 (tagged `hvc1` for Apple players).
    public enum Codec: String, Sendable, CaseIterable { case h264, hevc }

    /// Output width and height in pixels; both must be even (yuv420p) and ≥ 2.
    public var width: Int
    /// Output height in pixels; even and ≥ 2.
    public var height: Int
    /// Frames per second as a fraction (`frameRate.num / frameRate.den`), e.g. (30, 1) or (30000, 1001).
    public var frameRate: (num: Int, den: Int)
    /// H.264 (libx264, default) or HEVC (libx265).
    public var codec: Codec = .h264
    /// Constant rate factor, 0–51 (lower is better quality; x264's scale). Default 20. For H.264, CRF 0 is lossless
    /// and uses the High 4:4:4 Predictive profile, which some hardware players cannot decode (x265 at CRF 0 is
    /// near-lossless, not lossless).
    public var crf: Double = 20
    /// x264/x265 preset. Default `medium`.
    public var preset: EncoderPreset = .medium
    /// The preset name given to the encoder instead of ``preset``'s (tests: a name x264 refuses, to make it fail
    /// after its contexts exist).
    var presetName: String?
    /// Largest distance between keyframes in frames (the GOP length); `nil` for the encoder's default (250).
    public var keyframeInterval: Int?
    /// Container metadata (`title`, `comment`, `copyright`, `artist`…), written into the file.
    public var metadata: [String: String] = [:]
    /// Colour description written into the stream: primaries, transfer and matrix. `nil` (the default) is BT.709,
    /// which the RGBA path converts to. Frames given as YUV (`append(yuvFrame:)`) pass through unconverted, so
    /// their caller sets the source's description here.
    var colour: (primaries: AVColorPrimaries, transfer: AVColorTransferCharacteristic, matrix: AVColorSpace)?
    /// Timestamp of the first frame, in the time base (default 0): a part of a longer video (a hyperlapse's
    /// segment) keeps its frames' global timestamps, and the MP4 an edit list that starts it there.
    public var firstPTS: Int64 = 0
    /// The time base of the timestamps given to ``VideoEncoder/append(_:pts:)``; default `1/fps`.
    public var timeBase: (num: Int, den: Int)?

    /// Settings for a `width × height` video at `fps` whole frames per second; every other setting at its default.
    public init(width: Int, height: Int, fps: Int) {
        self.width = width
        self.height = height
        self.frameRate = (fps, 1)
    }
}

/// The containers Lapse writes, named as FFmpeg's muxers are (`mp4`, `mov`, `matroska`; the raw value).
public enum MediaContainer: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    case mp4, mov, matroska

    /// The container of a file name's extension, any case (`mp4`, `m4v` → mp4; `mov` → mov; `mkv` → matroska), or
    /// `nil` for an extension Lapse does not write.
    public init?(fileExtension ext: String) {
        switch ext.lowercased() {
        case "mp4", "m4v": self = .mp4
        case "mov": self = .mov
        case "mkv": self = .matroska
        default: return nil
        }
    }

    /// Whether it is ISO base media (MP4, MOV): `moov` can be moved before `mdat` and edit lists are kept.
    public var isISOBaseMedia: Bool { self != .matroska }

    /// The muxer's name.
    public var description: String { rawValue }
}

/// Encodes RGBA frames to an H.264/HEVC video file (MP4, MOV or Matroska), converting colours to BT.709
/// limited-range yuv420p with swscale and tagging the stream accordingly.
///
/// Frames are given in presentation order. With the default time base (1/fps) a frame's pts is its index,
/// and the last frame lasts one frame interval, so `n` frames give a video of exactly `n / fps` seconds.
/// The file is written to `url` directly: wrap it in ``AtomicOutput`` to get the write-then-rename behaviour.
///
/// Not thread-safe: use from one thread at a time (the encoder itself runs x264's own threads).
public final class VideoEncoder {
    /// What the encoder was made with.
    public let settings: VideoEncoderSettings
    /// The file being written.
    public var url: URL { URL(fileURLWithPath: path) }
    /// Its path, as errors name it.
    let path: String
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codecContext: UnsafeMutablePointer<AVCodecContext>?
    private var stream: UnsafeMutablePointer<AVStream>
    private let packet: Packet
    private let frame: Frame
    private let scaler = Scaler()
    private var nextPts: Int64 = 0
    private var lastPts: Int64 = -1
    private var finished = false
    private var extraStreams: [(stream: UnsafeMutablePointer<AVStream>, timeBase: AVRational)] = []
    /// Number of frames given to the encoder so far.
    public private(set) var framesWritten = 0

    /// Opens the encoder and the output file.
    /// - Parameters:
    ///   - url: where to write (any name; the container comes from `container`).
    ///   - container: the container (see ``MediaContainer/init(fileExtension:)``).
    ///   - settings: size, frame rate, codec, quality.
    /// - Throws: ``LapseError`` `.usage` for an odd or zero size, `.codec` when the encoder cannot be opened,
    ///   `.output` when the file cannot be created.
    public convenience init(url: URL, container: MediaContainer, settings: VideoEncoderSettings) throws {
        try self.init(path: url.filePath, muxer: container.rawValue, settings: settings, audio: [])
    }

    /// As the public initializer, with the AAC streams of `audioTracks` muxed beside the video (written with
    /// ``AudioTrack/write(upTo:into:stream:)``, stream `i` for track `i`).
    /// - Throws: as the public initializer.
    package convenience init(
        url: URL, container: MediaContainer, settings: VideoEncoderSettings, audioTracks: [AudioTrack]
    ) throws {
        try self.init(
            path: url.filePath, muxer: container.rawValue, settings: settings,
            audio: audioTracks.map(\.streamParameters))
    }

    /// As the public initializer, with audio streams to mux beside the video.
    /// - Parameters:
    ///   - path: the output file.
    ///   - muxer: the muxer's name (a ``MediaContainer``'s raw value; tests give one FFmpeg does not have).
    ///   - settings: the video's size, rate, codec and quality.
    ///   - audio: the audio streams to mux, as their parameters.
    ///   - configure: called once, during this initialiser, with the video stream and the audio streams before the
    ///     header is written, to add stream metadata or side data (e.g. a clip's display matrix and languages); not
    ///     kept (non-escaping: what it captures, such as another input's lent stream, is not used after).
    /// - Throws: as the public initializer.
    init(
        path: String, muxer: String, settings: VideoEncoderSettings,
        audio: [AudioStreamParameters],
        configure: (UnsafeMutablePointer<AVStream>, [UnsafeMutablePointer<AVStream>]) -> Void = { _, _ in }
    ) throws {
        packet = try Packet()
        frame = try Frame()
        FFmpegLog.quiet()
        self.settings = settings
        self.path = path
        nextPts = settings.firstPTS
        guard settings.width >= 2, settings.height >= 2, settings.width % 2 == 0, settings.height % 2 == 0 else {
            throw LapseError.usage("video size \(settings.width)x\(settings.height) must be even and at least 2x2")
        }
        let encoderName = settings.codec == .h264 ? "libx264" : "libx265"
        guard let codec = avcodec_find_encoder_by_name(encoderName) else {
            throw LapseError(.codec, nil, "the \(encoderName) encoder is not available in this FFmpeg")
        }
        var format: UnsafeMutablePointer<AVFormatContext>?
        try ffCheck(
            avformat_alloc_output_context2(&format, nil, muxer, path), path, "cannot create a \(muxer) file",
            as: .output)
        guard let format else { throw LapseError(.output, path, "cannot create the output") }
        guard let stream = avformat_new_stream(format, nil) else {
            avformat_free_context(format)
            throw LapseError(.codec, path, "out of memory")
        }
        // Every stored property set: from here on a throw runs deinit, which frees what is allocated.
        self.format = format
        self.stream = stream
        guard let context = avcodec_alloc_context3(codec) else { throw LapseError(.codec, path, "out of memory") }
        codecContext = context
        let frameRate = AVRational(num: Int32(settings.frameRate.num), den: Int32(settings.frameRate.den))
        let timeBase =
            settings.timeBase.map { AVRational(num: Int32($0.num), den: Int32($0.den)) } ?? av_inv_q(frameRate)
        context.pointee.width = Int32(settings.width)
        context.pointee.height = Int32(settings.height)
        context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        context.pointee.time_base = timeBase
        context.pointee.framerate = frameRate
        context.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        context.pointee.color_range = AVCOL_RANGE_MPEG
        context.pointee.color_primaries = colour.primaries
        context.pointee.color_trc = colour.transfer
        context.pointee.colorspace = colour.matrix
        context.pointee.thread_count = 0
        if let gop = settings.keyframeInterval { context.pointee.gop_size = Int32(gop) }
        if format.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
            context.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        }
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        let presetName = settings.presetName ?? settings.preset.rawValue
        av_dict_set(&options, "preset", presetName, 0)
        av_dict_set(&options, "crf", String(settings.crf), 0)
        if settings.codec == .h264 {
            // High plays everywhere; CRF 0 (lossless) needs High 4:4:4 Predictive, which x264 picks itself.
            if settings.crf > 0 { av_dict_set(&options, "profile", "high", 0) }
            // x264's AVX-512 code reads memory of its own that it never set (seen at 320×160, 854×480 and other
            // sizes: the output changed with MALLOC_PERTURB_), so two runs on the same frames could give different
            // files. Its AVX2 code is as fast here (bench/x264-asm.sh: AVX2 / AVX-512 0.99–1.07 in four sets of
            // runs, within the noise) and repeatable, so the AVX-512 paths are left out.
            if av_get_cpu_flags() & AV_CPU_FLAG_AVX512 != 0 {
                av_dict_set(&options, "x264-params", "asm=AVX2,FMA3,BMI2", 0)
            }
        } else {
            av_dict_set(&options, "x265-params", "log-level=error", 0)
        }
        let openCode = avcodec_open2(context, codec, &options)
        if openCode < 0 {
            throw LapseError(
                .usage, nil,
                """
                cannot open \(encoderName) with preset '\(presetName)' and CRF \(settings.crf): \
                \(ffmpegMessage(openCode))
                """
            )
        }
        try ffCheck(
            avcodec_parameters_from_context(stream.pointee.codecpar, context), path, "cannot set up the video stream")
        if settings.codec == .hevc {
            stream.pointee.codecpar.pointee.codec_tag = Self.fourCC("hvc1")
        }
        stream.pointee.time_base = timeBase
        stream.pointee.avg_frame_rate = frameRate

        for a in audio {
            guard let s = avformat_new_stream(format, nil) else { throw LapseError(.codec, path, "out of memory") }
            try ffCheck(
                avcodec_parameters_copy(s.pointee.codecpar, a.parameters), path, "cannot set up the audio stream")
            s.pointee.codecpar.pointee.codec_tag = 0
            s.pointee.time_base = a.timeBase
            extraStreams.append((s, a.timeBase))
        }
        for (key, value) in settings.metadata { av_dict_set(&format.pointee.metadata, key, value, 0) }
        configure(stream, extraStreams.map(\.stream))

        if format.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 {
            try ffCheck(
                avio_open(&format.pointee.pb, path, AVIO_FLAG_WRITE), path, "cannot create the file", as: .output)
        }
        var muxOptions: OpaquePointer?
        defer { av_dict_free(&muxOptions) }
        if MediaContainer(rawValue: muxer)?.isISOBaseMedia == true {
            av_dict_set(&muxOptions, "movflags", "+faststart", 0)
            if settings.firstPTS != 0 {
                // The edit list that starts the video at its first frame counts in the movie's timescale: the
                // stream's own (not 1/1000 s) keeps that start exact.
                av_dict_set(&muxOptions, "movie_timescale", String(stream.pointee.time_base.den), 0)
            }
        }
        try ffCheck(avformat_write_header(format, &muxOptions), path, "cannot write the file header", as: .output)
        try frame.allocate(width: settings.width, height: settings.height, format: AV_PIX_FMT_YUV420P)
        tagFrame(frame.pointer)
    }

    deinit {
        if let codecContext {
            var c: UnsafeMutablePointer<AVCodecContext>? = codecContext
            avcodec_free_context(&c)
        }
        if let format {
            if format.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 { avio_closep(&format.pointee.pb) }
            avformat_free_context(format)
        }
    }

    /// The encoder's time base (1/fps unless settings say otherwise).
    public var timeBase: (num: Int, den: Int) {
        let tb = codecContext!.pointee.time_base
        return (Int(tb.num), Int(tb.den))
    }

    /// Converts `pixels` (must be the encoder's size) to BT.709 yuv420p and encodes it `count` times
    /// (an image held on screen for several frames), at consecutive timestamps.
    /// - Parameters:
    ///   - pixels: the frame, RGBA, the encoder's size.
    ///   - count: how many frames it lasts, ≥ 1.
    ///   - pts: timestamp of the first copy in the encoder's time base; default: right after the last frame.
    /// - Throws: ``LapseError`` `.codec` when the encoder fails (a frame of another size is a programming error).
    public func append(_ pixels: PixelBuffer, count: Int = 1, pts: Int64? = nil) throws {
        precondition(
            pixels.width == settings.width && pixels.height == settings.height, "frame size differs from the encoder's")
        try prepare(pixels)
        var t = pts ?? nextPts
        for _ in 0..<max(1, count) {
            try send(pts: t)
            t += 1
        }
    }

    /// Encodes a Y′CbCr frame (the encoder's size) as it is, `count` times at consecutive timestamps: no
    /// conversion, its BT.709 limited-range values are the output's.
    /// - Parameters:
    ///   - picture: the frame, Y′CbCr 4:2:0, the encoder's size.
    ///   - count: how many frames it lasts, ≥ 1.
    ///   - pts: timestamp of the first copy in the encoder's time base; default: right after the last frame.
    /// - Throws: ``LapseError`` `.codec` when the encoder fails (a frame of another size is a programming error).
    public func append(_ picture: YUVFrame, count: Int = 1, pts: Int64? = nil) throws {
        precondition(
            picture.width == settings.width && picture.height == settings.height,
            "frame size differs from the encoder's")
        try ffCheck(av_frame_make_writable(frame.pointer), path, "cannot get a frame buffer")
        let planes = frame.planes
        let strides = frame.lineSizes
        func copy(_ source: [UInt8], _ plane: Int, _ w: Int, _ h: Int) {
            let dst = planes[plane]!
            let stride = Int(strides[plane])
            source.withUnsafeBytes { src in
                for row in 0..<h {
                    (dst + row * stride).update(
                        from: src.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * w, count: w)
                }
            }
        }
        copy(picture.y, 0, picture.width, picture.height)
        copy(picture.cb, 1, picture.chromaWidth, picture.chromaHeight)
        copy(picture.cr, 2, picture.chromaWidth, picture.chromaHeight)
        var t = pts ?? nextPts
        for _ in 0..<max(1, count) {
            try send(pts: t)
            t += 1
        }
    }

    /// Encodes a frame that is already yuv420p at the encoder's size (e.g. decoded and scaled by the caller),
    /// at `pts` in the encoder's time base (default: after the last frame).
    func append(yuvFrame: UnsafeMutablePointer<AVFrame>, pts: Int64? = nil) throws {
        let t = pts ?? nextPts
        yuvFrame.pointee.pts = t
        tagFrame(yuvFrame)
        try encode(yuvFrame)
        lastPts = t
        nextPts = t + 1
        framesWritten += 1
    }

    /// Converts RGBA pixels into the reusable YUV frame (copying it first if the encoder still holds it).
    private func prepare(_ pixels: PixelBuffer) throws {
        try ffCheck(av_frame_make_writable(frame.pointer), path, "cannot get a frame buffer")
        var dst = frame.planes
        var dstStrides = frame.lineSizes
        try pixels.bytes.withUnsafeBytes { raw in
            var src: [UnsafePointer<UInt8>?] = [raw.baseAddress!.assumingMemoryBound(to: UInt8.self), nil, nil, nil]
            var srcStrides: [Int32] = [Int32(pixels.stride), 0, 0, 0]
            try scaler.scale(
                src: &src, srcStrides: &srcStrides, srcWidth: pixels.width, srcHeight: pixels.height,
                srcFormat: AV_PIX_FMT_RGBA, srcMatrix: SWS_CS_ITU709, srcFullRange: true,
                dst: &dst, dstStrides: &dstStrides, dstWidth: settings.width, dstHeight: settings.height,
                dstFormat: AV_PIX_FMT_YUV420P, dstMatrix: SWS_CS_ITU709, dstFullRange: false,
                flags: SWS_POINT)
        }
    }

    private func send(pts: Int64) throws {
        frame.pointer.pointee.pts = pts
        try encode(frame.pointer)
        lastPts = pts
        nextPts = pts + 1
        framesWritten += 1
    }

    private var colour: (primaries: AVColorPrimaries, transfer: AVColorTransferCharacteristic, matrix: AVColorSpace) {
        settings.colour ?? (AVCOL_PRI_BT709, AVCOL_TRC_BT709, AVCOL_SPC_BT709)
    }

    private func tagFrame(_ f: UnsafeMutablePointer<AVFrame>) {
        f.pointee.color_range = AVCOL_RANGE_MPEG
        f.pointee.color_primaries = colour.primaries
        f.pointee.color_trc = colour.transfer
        f.pointee.colorspace = colour.matrix
        f.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
    }

    private func encode(_ f: UnsafeMutablePointer<AVFrame>?) throws {
        guard let codecContext, let format else { return }
        try ffCheck(avcodec_send_frame(codecContext, f), path, "the encoder refused a frame")
        while true {
            let r = avcodec_receive_packet(codecContext, packet.pointer)
            if r == lapse_averror_eagain() || r == lapse_averror_eof() { break }
            try ffCheck(r, path, "encoding failed")
            // Every frame lasts one tick of the frame rate: this gives the last frame its full duration.
            if packet.pointer.pointee.duration <= 0 {
                packet.pointer.pointee.duration = av_rescale_q(
                    1, av_inv_q(codecContext.pointee.framerate), codecContext.pointee.time_base)
            }
            av_packet_rescale_ts(packet.pointer, codecContext.pointee.time_base, stream.pointee.time_base)
            packet.pointer.pointee.stream_index = stream.pointee.index
            try ffCheck(
                av_interleaved_write_frame(format, packet.pointer), path, "cannot write to the file", as: .output)
        }
    }

    /// Writes an already-encoded audio packet to audio stream `stream` (0-based among the audio streams given
    /// at init). The packet's timestamps are in that stream's time base.
    func writeAudio(_ packet: UnsafeMutablePointer<AVPacket>, stream index: Int) throws {
        guard let format else { return }
        let s = extraStreams[index]
        av_packet_rescale_ts(packet, s.timeBase, s.stream.pointee.time_base)
        packet.pointee.stream_index = s.stream.pointee.index
        try ffCheck(av_interleaved_write_frame(format, packet), path, "cannot write to the file", as: .output)
    }

    /// The presentation time (seconds) just after the last frame given so far.
    public var duration: Double {
        let tb = codecContext!.pointee.time_base
        let frameTicks = av_rescale_q(1, av_inv_q(codecContext!.pointee.framerate), tb)
        return Double(lastPts + frameTicks) * Double(tb.num) / Double(tb.den)
    }

    /// Flushes the encoder and finishes the file (writes the index; moves `moov` to the front for MP4/MOV).
    /// - Parameter metadata: container metadata known only at the end (e.g. the credits of every panorama used),
    ///   added to ``VideoEncoderSettings/metadata``. MP4 and MOV write their metadata with the index, at the end;
    ///   containers that write it in the header (Matroska) keep only what was set at the start.
    /// - Throws: ``LapseError`` `.codec` when flushing fails, `.output` when the file cannot be finished.
    public func finish(metadata: [String: String] = [:]) throws {
        guard !finished else { return }
        finished = true
        try encode(nil)
        guard let format else { return }
        for (key, value) in metadata { av_dict_set(&format.pointee.metadata, key, value, 0) }
        try ffCheck(av_write_trailer(format), path, "cannot finish the file", as: .output)
        if format.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 { avio_closep(&format.pointee.pb) }
    }

    private static func fourCC(_ s: String) -> UInt32 {
        let b = Array(s.utf8)
        return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }
}

/// Codec parameters and time base of an audio stream to be muxed beside the video.
struct AudioStreamParameters {
    var parameters: UnsafePointer<AVCodecParameters>
    var timeBase: AVRational
}
