// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg
import Foundation
import LapseCore

/// Decodes a video and hands out upright RGBA frames chosen by presentation time.
///
/// - Time: seconds from the input's start (``MediaInput/startTime``, the same origin `lapse clip` uses;
///   the first frame's time for almost every file).
/// - Selection: ``frame(at:)`` returns the source frame *shown* at that time — the last frame whose
///   presentation time is ≤ t — so variable-frame-rate video keeps its speed and a frame that could not be
///   decoded is covered by the previous one (with a warning).
/// - Pictures: the display matrix rotation (`AV_PKT_DATA_DISPLAYMATRIX`, as the ffmpeg CLI's autorotate
///   applies it) and the sample aspect ratio are applied, so ``displayWidth`` × ``displayHeight`` is what a
///   player shows; PQ (HDR10) and HLG are tone-mapped to BT.709 SDR; alpha is kept (VP9 alpha through the
///   `libvpx-vp9` decoder, which FFmpeg's own VP9 decoder does not do).
/// - Memory: two decoded frames and the filter graph, whatever the length.
/// - Two streams: a GoPro MAX `.360` file, whose video is two streams of one size and codec side by side in time
///   (each three faces of its cube map; ``pairedStreamSizes``), is read as one video whose every frame holds both,
///   the first stream's picture above the second's (``streamCount`` 2; the second stream kept in step by time).
///
/// Use from one task at a time. Typical use:
/// ```swift
/// let reader = try VideoFrameReader(URL(fileURLWithPath: "clip.mov"))
/// reader.outputSize = (reader.displayWidth / 2, reader.displayHeight / 2)
/// try reader.seek(to: 1.5)
/// for i in 0..<20 { let picture = try reader.frame(at: 1.5 + Double(i) / 10) }
/// ```
public final class VideoFrameReader {
    /// The input as it may be printed (URL query strings redacted).
    public let name: String
    /// The input as it was opened.
    public var location: URL { input.location }
    /// Stored (coded) picture size in pixels.
    public let codedWidth: Int
    /// Stored (coded) picture height in pixels.
    public let codedHeight: Int
    /// Size as displayed: sample aspect ratio applied to the width, then rotated. Pixels.
    public let displayWidth: Int
    /// Height as displayed, pixels.
    public let displayHeight: Int
    /// Clockwise rotation applied to the stored picture: 0, 90, 180 or 270 degrees.
    public let rotation: Int
    /// Sample (pixel) aspect ratio, width / height of one stored pixel (1 for square pixels).
    public let sampleAspectRatio: Double
    /// Duration of the video in seconds, when the container tells it.
    public let duration: Double?
    /// Average frame rate in frames per second, when known.
    public let frameRate: Double?
    /// The same rate as the stream's fraction (`avg_frame_rate`: 30000/1001), when known.
    public let frameRateFraction: FrameRate?
    /// Whether the stream is PQ or HLG (tone-mapped to SDR on output).
    public let isHDR: Bool
    /// Whether frames carry alpha.
    public let hasAlpha: Bool
    /// Video streams in each frame: 1, or 2 for a file of two video streams of one size read together (see the
    /// type's comment); ``codedHeight`` and ``displayHeight`` are then twice a stream's.
    public var streamCount: Int { partner == nil ? 1 : 2 }
    /// The reader of the second stream of a two-stream file, kept in step with this one's frames.
    private let partner: VideoFrameReader?
    /// Rows of one stream's picture.
    private let streamHeight: Int
    /// The projection the stream's spherical metadata names — MP4's `sv3d` (Spherical Video V2), Matroska's
    /// `Projection`, or the older Spherical Video V1 XML in a `uuid` box, as FFmpeg reads them
    /// (`AV_PKT_DATA_SPHERICAL`): `equirectangular`, `cubemap` or `equirectangular tile`; nil when it has none.
    public let sphericalProjection: String?
    /// Whether the frames can be had as ``YUVFrame``s as they are decoded (``nextYUVFrame()``): 8-bit 4:2:0,
    /// limited range, BT.709 (or untagged at HD size, which players take as BT.709), SDR, opaque, upright, square
    /// pixels, at their own size (``outputSize`` unchanged).
    public var yuvFramesAvailable: Bool {
        yuvCompatible && outputSize == (codedWidth, codedHeight)
    }
    private let yuvCompatible: Bool
    /// Size of the frames handed out, upright; defaults to the displayed size. Set before reading frames
    /// (changing it later rebuilds the conversion).
    public var outputSize: (width: Int, height: Int) {
        didSet {
            converter = nil
            lastOutput = nil
            partner?.outputSize = (outputSize.width, max(1, outputSize.height / 2))
        }
    }
    /// Receives warnings (undecodable frames).
    public var warning: WarningHandler? {
        didSet { partner?.warning = warning }
    }
    /// Number of packets the decoder rejected so far.
    public private(set) var decodeErrors = 0

    private let input: MediaInput
    private let decoder: PacketDecoder
    private let codecID: AVCodecID
    /// The stream's decoder configuration (avcC / hvcC for MP4), for reading its packets' NAL units.
    private let extradata: [UInt8]
    private let streamIndex: Int32
    private let timeBase: AVRational
    private let startTime: Int64
    /// Time 0 in seconds on the stream's clock: the input's start (``MediaInput/startTime``), as `lapse clip` uses.
    private let origin: Double
    private let rotationFilters: [String]
    private let packet: Packet
    private var current: Frame?
    private var currentTime = 0.0
    private var lookahead: Frame?
    private var lookaheadTime = 0.0
    private var converter: VideoFrameConverter?
    /// The last conversion, by decoded-frame serial number (repeated frames are converted once).
    private var lastOutput: (serial: Int, pixels: PixelBuffer)?
    private var currentSerial = 0
    private var lookaheadSerial = 0
    private var serials = 0
    private var lastPts: Int64?

    /// Opens a video through ``MediaInput`` (files, http(s) with reconnects and timeouts, HLS).
    /// - Parameters:
    ///   - input: a file or an http(s)/HLS URL.
    ///   - options: network timeouts and deadline (see ``MediaInput/Options``).
    /// - Throws: ``LapseError`` `.invalidInput` (missing file, not a video, no video stream, no decoder),
    ///   `.network` (HTTP errors, timeouts), `.cancelled`.
    public convenience init(_ input: URL, options: MediaInput.Options = MediaInput.Options()) throws {
        try self.init(input: MediaInput(location: input, options: options))
    }

    /// Reads the main video stream of an opened input (the reader keeps it), and, when the input's video is two
    /// streams of one size and codec (a GoPro MAX `.360`), the second one with it (``streamCount``).
    /// - Parameters:
    ///   - input: the opened input, kept by the reader.
    ///   - only: the stream to read (nil: the main one, and its twin when there is one).
    /// - Throws: ``LapseError`` `.invalidInput` when it has no video stream or no decoder for it.
    public init(input: MediaInput, stream only: Int? = nil) throws {
        packet = try Packet()
        self.input = input
        let name = input.displayName
        // What the reader needs of its stream, read while the input's format context is lent (no pointer kept).
        let opened = try input.withFormatContext { try OpenedStream($0, only: only, name: name) }
        self.name = name
        let index = opened.index
        let par = opened.parameters
        streamIndex = index
        codecID = par.codec_id
        extradata = opened.extradata
        timeBase = opened.timeBase
        startTime = opened.startTime
        origin = input.startTime
        // Discard the other streams' packets early.
        input.discardStreams(except: Int(index))
        let alphaMode = opened.alphaMode
        decoder = opened.decoder

        codedWidth = Int(par.width)
        let sarRational =
            par.sample_aspect_ratio.num > 0 && par.sample_aspect_ratio.den > 0
            ? par.sample_aspect_ratio : opened.streamSampleAspectRatio
        sampleAspectRatio = sarRational.num > 0 && sarRational.den > 0 ? av_q2d(sarRational) : 1
        sphericalProjection = opened.sphericalProjection
        let (degrees, filters) = opened.rotation
        rotation = degrees
        rotationFilters = filters
        // The twin of the main stream: another video stream of its codec and size, upright, square pixels, of a
        // size a GoPro MAX writes its two cube-map streams at (other files' extra video streams are not read).
        let twin =
            only != nil || degrees != 0 || sampleAspectRatio != 1
                || !Self.pairedStreamSizes.contains { $0 == (Int(par.width), Int(par.height)) }
            ? nil
            : input.streams.first {
                $0.index != Int(index) && $0.kind == .video && !$0.isAttachedPicture
                    && $0.width == Int(par.width) && $0.height == Int(par.height)
                    && $0.codecName == String(cString: avcodec_get_name(par.codec_id))
            }
        if let twin {
            partner = try VideoFrameReader(
                input: MediaInput(location: input.location, options: input.options), stream: twin.index)
        } else {
            partner = nil
        }
        streamHeight = Int(par.height)
        codedHeight = streamHeight * (partner == nil ? 1 : 2)
        let sarWidth = max(1, Int((Double(codedWidth) * sampleAspectRatio).rounded()))
        let swap = degrees == 90 || degrees == 270
        displayWidth = swap ? codedHeight : sarWidth
        displayHeight = swap ? sarWidth : codedHeight
        outputSize = (displayWidth, displayHeight)
        duration = opened.duration
        let rate = opened.frameRate
        frameRate = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : nil
        frameRateFraction = rate.num > 0 && rate.den > 0 ? FrameRate(Int(rate.num), Int(rate.den)) : nil
        isHDR = VideoFrameConverter.isHDR(par.color_trc)
        let pixelFormat = AVPixelFormat(rawValue: par.format)
        let descriptor = av_pix_fmt_desc_get(decoder.pixelFormat != AV_PIX_FMT_NONE ? decoder.pixelFormat : pixelFormat)
        hasAlpha =
            alphaMode == "1" || (descriptor.map { ($0.pointee.flags & UInt64(AV_PIX_FMT_FLAG_ALPHA)) != 0 } ?? false)
        let matrix = par.color_space
        yuvCompatible =
            pixelFormat == AV_PIX_FMT_YUV420P && !hasAlpha && !isHDR && degrees == 0 && sampleAspectRatio == 1
            && par.color_range != AVCOL_RANGE_JPEG
            && (matrix == AVCOL_SPC_BT709
                || (matrix == AVCOL_SPC_UNSPECIFIED && VideoFrameConverter.isHD(codedWidth, streamHeight)))
            && (partner?.yuvCompatible ?? true)
        guard codedWidth > 0, codedHeight > 0 else {
            throw LapseError(.invalidInput, name, "the video stream has no picture size")
        }
    }

    /// What a reader takes from its stream as it opens it, read from the format context while the input lends it
    /// (``MediaInput/withFormatContext(_:)``): values, and the stream's decoder. (The copy of the codec parameters
    /// still holds their pointers, to the extradata and side data; only its scalar fields are read after.)
    private struct OpenedStream {
        let index: Int32
        /// A copy of the stream's codec parameters (its scalar fields; its pointers are not followed later).
        let parameters: AVCodecParameters
        let extradata: [UInt8]
        let timeBase: AVRational
        /// The stream's first timestamp in its time base (0 when not given).
        let startTime: Int64
        let streamSampleAspectRatio: AVRational
        /// The `alpha_mode` tag (WebM: `1` when VP8/VP9 carries an alpha plane).
        let alphaMode: String?
        let sphericalProjection: String?
        let rotation: (Int, [String])
        /// Seconds: the stream's, else the container's; nil when neither says.
        let duration: Double?
        let frameRate: AVRational
        let decoder: PacketDecoder

        /// - Parameters:
        ///   - context: the input's format context.
        ///   - only: the stream to read (nil: the best video stream).
        ///   - name: the input's name, for errors.
        /// - Throws: ``LapseError`` `.invalidInput` when there is no video stream or no decoder for it opens.
        init(_ context: UnsafeMutablePointer<AVFormatContext>, only: Int?, name: String) throws {
            let index = only.map(Int32.init) ?? av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
            guard index >= 0, let stream = context.pointee.streams[Int(index)], let par = stream.pointee.codecpar
            else {
                throw LapseError(.invalidInput, name, "no video stream")
            }
            self.index = index
            parameters = par.pointee
            extradata =
                par.pointee.extradata_size > 0 && par.pointee.extradata != nil
                ? [UInt8](UnsafeBufferPointer(start: par.pointee.extradata, count: Int(par.pointee.extradata_size)))
                : []
            let timeBase = stream.pointee.time_base
            self.timeBase = timeBase
            startTime = stream.pointee.start_time == lapse_nopts_value ? 0 : stream.pointee.start_time
            streamSampleAspectRatio = stream.pointee.sample_aspect_ratio
            // VP9 with alpha: only libvpx decodes the alpha plane (stored as BlockAdditional side data).
            var alphaDecoder: UnsafePointer<AVCodec>?
            let alphaMode = av_dict_get(stream.pointee.metadata, "alpha_mode", nil, 0).map {
                String(cString: $0.pointee.value)
            }
            if par.pointee.codec_id == AV_CODEC_ID_VP9, alphaMode == "1" {
                alphaDecoder = avcodec_find_decoder_by_name("libvpx-vp9")
            } else if par.pointee.codec_id == AV_CODEC_ID_VP8, alphaMode == "1" {
                alphaDecoder = avcodec_find_decoder_by_name("libvpx")
            }
            self.alphaMode = alphaMode
            decoder = try PacketDecoder(parameters: par, codec: alphaDecoder, name: name, what: "video") { c, _ in
                c.pointee.pkt_timebase = timeBase
                c.pointee.thread_count = 0
            }
            sphericalProjection = VideoFrameReader.sphericalProjection(of: stream)
            rotation = VideoFrameReader.rotation(of: stream)
            if stream.pointee.duration > 0 {
                duration = Double(stream.pointee.duration) * av_q2d(timeBase)
            } else if context.pointee.duration > 0 {
                duration = Double(context.pointee.duration) / Double(AV_TIME_BASE)
            } else {
                duration = nil
            }
            frameRate = stream.pointee.avg_frame_rate
        }
    }

    /// The stream sizes read as two streams together: GoPro MAX `.360` files' (5.6K: 4096 × 1344; 3K: 2272 × 736).
    public static let pairedStreamSizes = [(4096, 1344), (2272, 736)]

    /// Stops a blocking read in progress or to come (it throws `.cancelled`). Thread-safe.
    public func cancel() {
        input.cancel()
        partner?.cancel()
    }

    /// The spherical metadata's projection (see ``sphericalProjection``).
    static func sphericalProjection(of stream: UnsafeMutablePointer<AVStream>) -> String? {
        var size: Int = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_SPHERICAL, &size),
            size >= MemoryLayout<AVSphericalMapping>.size
        else { return nil }
        let projection = UnsafeRawPointer(data).loadUnaligned(as: AVSphericalMapping.self).projection
        switch projection {
        case AV_SPHERICAL_EQUIRECTANGULAR: return "equirectangular"
        case AV_SPHERICAL_CUBEMAP: return "cubemap"
        case AV_SPHERICAL_EQUIRECTANGULAR_TILE: return "equirectangular tile"
        default: return "unknown"
        }
    }

    /// The rotation as ffmpeg's autorotate reads it: θ = −round(av_display_rotation_get), wrapped to [0, 360);
    /// 90 → `transpose=clock` (`cclock_flip` when mirrored), 180 → `hflip,vflip`, 270 → `transpose=cclock`
    /// (`clock_flip` when mirrored); a vertical mirror alone → `vflip`.
    static func rotation(of stream: UnsafeMutablePointer<AVStream>) -> (Int, [String]) {
        var size: Int = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36 else {
            return (0, [])
        }
        return data.withMemoryRebound(to: Int32.self, capacity: 9) { m in
            let raw = av_display_rotation_get(m)
            guard raw.isFinite else { return (0, []) }
            var theta = -raw.rounded()
            theta -= 360 * (theta / 360 + 0.9 / 360).rounded(.down)
            if abs(theta - 90) < 1 { return (90, [m[3] > 0 ? "transpose=cclock_flip" : "transpose=clock"]) }
            if abs(theta - 180) < 1 {
                var f: [String] = []
                if m[0] < 0 { f.append("hflip") }
                if m[4] < 0 { f.append("vflip") }
                return (180, f)
            }
            if abs(theta - 270) < 1 { return (270, [m[3] < 0 ? "transpose=clock_flip" : "transpose=cclock"]) }
            if abs(theta) < 1, m[4] < 0 { return (0, ["vflip"]) }
            return (0, [])
        }
    }

    /// Moves to `seconds` (from the start): the next ``frame(at:)`` decodes from the keyframe before it.
    /// - Throws: ``LapseError`` `.invalidInput` when the input cannot seek (a live stream).
    public func seek(to seconds: Double) throws {
        try input.seek(to: max(0, seconds), stream: Int(streamIndex))
        decoder.flush()
        current = nil
        lookahead = nil
        lastPts = nil
        try partner?.seek(to: seconds)
    }

    // MARK: The second stream of a two-stream file

    /// The second stream's frame shown at `time` (the last whose time is at most `time` + 1 ms), decoded up to it
    /// without converting the ones passed (the first stream may skip frames this one decodes).
    private func advance(to time: Double) throws -> Frame {
        while true {
            if current != nil, lookahead == nil {
                guard let (f, t) = try decodeNext() else { break }
                lookahead = f
                lookaheadTime = t
                lookaheadSerial = nextSerial()
            }
            if current == nil || (lookahead != nil && lookaheadTime <= time + 1e-3) {
                guard try skipFrame() != nil else { break }
                continue
            }
            break
        }
        guard let current else { throw LapseError(.invalidInput, name, "the second video stream has no frame") }
        return current
    }

    /// The second stream's picture at `time`, RGBA at its output size.
    fileprivate func pixels(at time: Double) throws -> PixelBuffer { try pixels(of: try advance(to: time)) }

    /// The second stream's decoded frame at `time`, checked to be yuv420p of the stream's size (valid until the
    /// stream advances).
    fileprivate func yuvSource(at time: Double) throws -> Frame {
        let f = try advance(to: time)
        guard f.format == AV_PIX_FMT_YUV420P, f.width == codedWidth, f.height == streamHeight else {
            throw LapseError(
                .invalidInput, name, "the second video stream's frame is not yuv420p \(codedWidth)x\(streamHeight)")
        }
        return f
    }

    /// `top` with the second stream's picture at `time` below it (or `top` for a one-stream file).
    private func stacked(_ top: PixelBuffer, at time: Double) throws -> PixelBuffer {
        guard let partner else { return top }
        let below = try partner.pixels(at: time)
        var both = PixelBuffer(width: top.width, height: top.height + below.height)
        both.bytes.replaceSubrange(0..<top.bytes.count, with: top.bytes)
        both.bytes.replaceSubrange(top.bytes.count..<both.bytes.count, with: below.bytes)
        return both
    }

    /// The source frame shown at `seconds` (the last frame whose time is ≤ it; the first frame for times
    /// before it; the last frame for times after the end). Times should not decrease between calls
    /// (call ``seek(to:)`` to go back).
    /// - Returns: RGBA at ``outputSize``.
    /// - Throws: ``LapseError`` `.invalidInput` when no frame at all can be decoded; `.codec` when converting fails.
    public func frame(at seconds: Double) throws -> PixelBuffer {
        if current == nil {
            guard let (f, t) = try decodeNext() else {
                throw LapseError(.invalidInput, name, "no video frame could be decoded")
            }
            current = f
            currentTime = t
            currentSerial = nextSerial()
        }
        while true {
            if lookahead == nil {
                guard let (f, t) = try decodeNext() else { break }
                lookahead = f
                lookaheadTime = t
                lookaheadSerial = nextSerial()
            }
            guard lookaheadTime <= seconds + 1e-6 else { break }
            current = lookahead
            currentTime = lookaheadTime
            currentSerial = lookaheadSerial
            lookahead = nil
        }
        return try stacked(try pixels(of: current!), at: currentTime)
    }

    /// The next frame in decoding order with its time in seconds, or `nil` at the end.
    public func nextFrame() throws -> (time: Double, pixels: PixelBuffer)? {
        guard let time = try skipFrame() else { return nil }
        return (time, try stacked(try pixels(of: current!), at: time))
    }

    /// The next frame in decoding order as Y′CbCr, as decoded (no conversion), with its time in seconds, or `nil`
    /// at the end. Only when ``yuvFramesAvailable``. A picture of the frame's size (``codedWidth`` ×
    /// ``codedHeight``: both streams' of a two-stream file) kept in `spares` (frames given back) is written over
    /// rather than new memory mapped (a 2048 × 1024 frame's luma plane is 2 MB).
    /// - Throws: ``LapseError`` `.invalidInput` when a frame comes in another form than the stream said (the
    /// hyperlapse leaves that frame out).
    public func nextYUVFrame(spares: SpareFrames? = nil) throws -> (time: Double, frame: YUVFrame)? {
        precondition(yuvFramesAvailable, "nextYUVFrame() on a video whose frames are not BT.709 yuv420p at their size")
        guard let time = try skipFrame() else { return nil }
        let f = current!
        guard f.format == AV_PIX_FMT_YUV420P, f.width == codedWidth, f.height == streamHeight else {
            throw LapseError(
                .invalidInput, name,
                """
                a frame came as \(Scaler.name(f.format)) \(f.width)x\(f.height), not yuv420p \
                \(codedWidth)x\(streamHeight)
                """
            )
        }
        let below = try partner?.yuvSource(at: time)
        let spare = spares?.take(width: codedWidth, height: codedHeight)
        return (time, YUVFrame(copying: f, above: below, reusing: spare))
    }

    /// Decodes the next frame in decoding order without converting it (for frames not wanted: the decode cannot
    /// be skipped, the conversion can), and returns its time in seconds, or `nil` at the end.
    public func skipFrame() throws -> Double? {
        if let f = lookahead {
            lookahead = nil
            current = f
            currentTime = lookaheadTime
            currentSerial = lookaheadSerial
        } else {
            guard let (f, t) = try decodeNext() else { return nil }
            current = f
            currentTime = t
            currentSerial = nextSerial()
        }
        return currentTime
    }

    /// Presentation times (seconds, as ``nextFrame()`` gives them) of every frame of the video stream, read from
    /// its packets without decoding them: one frame per packet not marked to be discarded (the demuxer's edit
    /// lists), sorted into presentation order. Reads the input to its end, so call it on a reader of its own
    /// before any frame. Nil when a packet has no timestamp (a raw stream): decode to learn the times.
    /// - Throws: ``LapseError`` when the input cannot be read.
    public func frameTimesFromPackets() throws -> [Double]? {
        try framesFromPackets()?.times
    }

    /// The frames of the video stream as its packets tell them (see ``frameTimesFromPackets()``).
    public struct PacketFrames: Sendable {
        /// Presentation times, seconds, in presentation order.
        public var times: [Double]
        /// For each frame (in the same order), whether other frames are predicted from it; nil when the codec
        /// is not H.264 or H.265 (or a packet could not be read as one): every frame may be. Frames that are not
        /// are what ``skipsNonReferenceFrames`` leaves out.
        public var isReference: [Bool]?
    }

    /// As ``frameTimesFromPackets()``, with whether each frame is a reference frame, from its NAL units' headers:
    /// H.264's `nal_ref_idc` (ITU-T H.264 §7.4.1: zero for a picture no other one is predicted from), H.265's
    /// sub-layer non-reference NAL unit types (ITU-T H.265 §7.4.2.2: TRAIL_N, TSA_N, STSA_N, RADL_N, RASL_N and
    /// the reserved even types below 16), in MP4's length-prefixed form or as an Annex B byte stream.
    public func framesFromPackets() throws -> PacketFrames? {
        let parser = NALHeaderReader(codecID: codecID, extradata: extradata)
        var stamps: [(Int64, Bool?)] = []
        var known = parser != nil
        while try input.read(into: packet) {
            defer { av_packet_unref(packet.pointer) }
            let p = packet.pointer.pointee
            guard p.stream_index == streamIndex, p.flags & AV_PKT_FLAG_DISCARD == 0 else { continue }
            guard p.pts != lapse_nopts_value else { return nil }
            var reference: Bool?
            if known, let parser, let data = p.data {
                reference = parser.isReference(UnsafeBufferPointer(start: data, count: Int(p.size)))
                if reference == nil { known = false }
            }
            stamps.append((p.pts, reference))
        }
        stamps.sort { $0.0 < $1.0 }
        let times = stamps.map { Double($0.0) * av_q2d(timeBase) - origin }
        return PacketFrames(times: times, isReference: known ? stamps.map { $0.1 ?? true } : nil)
    }

    /// Frames no other frame is predicted from are not decoded (`skip_frame = AVDISCARD_NONREF`): ``nextFrame()``
    /// and ``skipFrame()`` give only the others (see ``PacketFrames/isReference``). Set before reading.
    public var skipsNonReferenceFrames = false {
        didSet { decoder.skipsNonReferenceFrames = skipsNonReferenceFrames }
    }

    /// The in-loop deblocking filter is left out (`skip_loop_filter = AVDISCARD_ALL`): the frames decode faster
    /// (H.264: about a fifth) and differ from the stream's by block-edge errors that grow until the next keyframe,
    /// so this is for frames that are analysed, never shown. Set before reading.
    public var skipsLoopFilter = false {
        didSet {
            decoder.skipsLoopFilter = skipsLoopFilter
            partner?.skipsLoopFilter = skipsLoopFilter
        }
    }

    /// True when the input has no frame after the one last returned and `seconds` is more than one frame
    /// interval past it (for inputs whose duration is unknown).
    public func isAtEnd(after seconds: Double) -> Bool {
        guard decoder.drained, lookahead == nil, current != nil else { return false }
        return seconds > currentTime + 1 / (frameRate ?? 25)
    }

    /// Time (seconds) of the frame last returned.
    public var lastFrameTime: Double { currentTime }

    /// `frame` is always `current`, whose serial number is `currentSerial`.
    private func pixels(of frame: Frame) throws -> PixelBuffer {
        let id = currentSerial
        if let last = lastOutput, last.serial == id { return last.pixels }
        if converter == nil {
            let swap = rotation == 90 || rotation == 270
            converter = try VideoFrameConverter(
                width: outputSize.width, height: max(1, outputSize.height / streamCount),
                rotationFilters: rotationFilters, swapsAxes: swap, toneMap: true)
        }
        let p = try converter!.convert(frame)
        lastOutput = (id, p)
        return p
    }

    private func nextSerial() -> Int {
        serials += 1
        return serials
    }

    /// Decodes the next frame; undecodable packets are skipped with a warning.
    private func decodeNext() throws -> (Frame, Double)? {
        let frame = try Frame()
        let got = try decoder.receive(
            into: frame,
            read: { packet in
                while try input.read(into: packet) {
                    if packet.pointer.pointee.stream_index == streamIndex { return true }
                    av_packet_unref(packet.pointer)
                }
                return false
            },
            failed: { failure in
                decodeErrors += 1
                switch failure {
                case .receive(let code):
                    warning?(
                        "\(name): a frame could not be decoded (\(ffmpegMessage(code))); the previous frame is repeated"
                    )
                case .send(let code, let pts):
                    let t = Double(pts) * av_q2d(timeBase) - origin
                    warning?(
                        "\(name): the frame at \(TimeValue.format(max(0, t))) could not be decoded "
                            + "(\(ffmpegMessage(code))); the previous frame is repeated")
                }
            })
        guard got else { return nil }
        var pts = frame.pointer.pointee.best_effort_timestamp
        if pts == lapse_nopts_value {
            let step = frameRate.map { Int64((1 / $0 / av_q2d(timeBase)).rounded()) } ?? 1
            pts = (lastPts ?? startTime - step) + step
        }
        lastPts = pts
        return (frame, Double(pts) * av_q2d(timeBase) - origin)
    }
}

/// Reads the NAL unit headers of H.264 and H.265 packets: whether a packet's picture is a reference picture.
struct NALHeaderReader {
    let hevc: Bool
    /// Bytes of each NAL unit's length prefix (MP4's avcC/hvcC), or 0 for an Annex B byte stream (start codes).
    let lengthSize: Int

    init?(codecID: AVCodecID, extradata: [UInt8]) {
        switch codecID {
        case AV_CODEC_ID_H264:
            hevc = false
            // avcC: configurationVersion 1, …, lengthSizeMinusOne in the low two bits of byte 4 (ISO/IEC 14496-15
            // §5.3.3.1).
            lengthSize = extradata.count >= 7 && extradata[0] == 1 ? Int(extradata[4] & 3) + 1 : 0
        case AV_CODEC_ID_HEVC:
            hevc = true
            // hvcC: configurationVersion 1, lengthSizeMinusOne in the low two bits of byte 21 (§8.3.3.1).
            lengthSize = extradata.count >= 23 && extradata[0] == 1 ? Int(extradata[21] & 3) + 1 : 0
        default:
            return nil
        }
        if lengthSize == 3 { return nil } // not allowed
    }

    /// Whether the packet's picture is a reference picture: any of its slices says so. Nil when the packet holds
    /// no slice or cannot be read.
    func isReference(_ data: UnsafeBufferPointer<UInt8>) -> Bool? {
        var sawSlice = false
        var reference = false
        func visit(_ header: Int) -> Bool {
            guard header + (hevc ? 1 : 0) < data.count else { return false }
            let b = data[header]
            if hevc {
                let type = Int(b >> 1) & 0x3F
                guard type < 32 else { return true } // not a slice (VCL types are 0…31)
                sawSlice = true
                if !(type <= 14 && type % 2 == 0) { reference = true }
            } else {
                let type = Int(b & 0x1F)
                guard type == 1 || type == 5 else { return true } // coded slices (IDR or not)
                sawSlice = true
                if b & 0x60 != 0 { reference = true }
            }
            return true
        }
        if lengthSize > 0 {
            var i = 0
            while i + lengthSize <= data.count {
                var length = 0
                for k in 0..<lengthSize { length = length << 8 | Int(data[i + k]) }
                let start = i + lengthSize
                guard length > 0, start + length <= data.count, visit(start) else { return nil }
                i = start + length
            }
        } else {
            // Annex B: each NAL unit follows 00 00 01 (or 00 00 00 01).
            var i = 0
            while i + 3 < data.count {
                if data[i] == 0, data[i + 1] == 0, data[i + 2] == 1 {
                    guard visit(i + 3) else { return nil }
                    i += 3
                } else {
                    i += 1
                }
            }
        }
        return sawSlice ? reference : nil
    }
}
