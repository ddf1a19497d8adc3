// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg
import Foundation
import LapseCore

/// A soundtrack made from the audio of one or more inputs: decoded, each taken from its own start time,
/// resampled to one rate and to mono when every source is mono (else stereo, as ffmpeg's `-ac 2` downmixes), mixed
/// with libavfilter `amix` when there are several, padded with silence
/// or cut to exactly `duration` seconds, and encoded to AAC (FFmpeg's native encoder).
///
/// The packets come out in order with timestamps in ``timeBase`` (1/sample rate), starting at 0 (minus the AAC
/// encoder's priming, which MP4/MOV muxers hide with an edit list). Pull them as far as the video has got
/// with ``write(upTo:into:stream:)`` (a ``VideoEncoder`` or a clip muxer), or ``nextPacket(before:)``,
/// so audio and video interleave without buffering the whole track.
///
/// Used by `lapse clip --audio FILE [--audio-mode replace|mix]` and `lapse video --audio FILE`.
/// Not thread-safe.
public final class AudioTrack {
    /// One input of the track.
    public struct Source: Sendable {
        /// A file or URL (anything ``MediaInput`` opens) holding an audio stream.
        public var location: URL
        /// Where to begin in that input, seconds from its start.
        public var start: Double
        /// Audio from `location` (a file or an http(s) URL), from `start` seconds into it.
        public init(location: URL, start: Double = 0) {
            self.location = location
            self.start = start
        }
    }

    /// Length of the track in seconds.
    public let duration: Double
    /// Output sample rate in Hz (the first source's rate).
    public let sampleRate: Int
    /// Output channels: 1 when every source is mono (a mono soundtrack stays mono, at its level), else 2.
    public let channels: Int
    /// AAC packets handed out so far.
    public private(set) var packetsWritten = 0

    private var decoders: [SourceDecoder] = []
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private var sources: [UnsafeMutablePointer<AVFilterContext>] = []
    private var sink: UnsafeMutablePointer<AVFilterContext>?
    private var encoder: UnsafeMutablePointer<AVCodecContext>?
    private var codecParameters: UnsafeMutablePointer<AVCodecParameters>?
    private let frame: Frame
    private var pending: Packet?
    private var graphEnded = false
    private var encoderEnded = false

    /// Opens every source, seeks it to its start, and sets up the filter graph and the AAC encoder.
    /// - Parameters:
    ///   - sources: one source (replace) or several (mixed with `amix`, each input's level divided by their number).
    ///   - duration: track length in seconds (> 0).
    ///   - options: how network sources are opened.
    ///   - bitRate: AAC bit rate in bits per second; default 160 000.
    /// - Throws: ``LapseError`` `.invalidInput` when a source has no audio stream, and what ``MediaInput`` throws.
    public init(
        sources: [Source], duration: Double, options: MediaInput.Options = MediaInput.Options(),
        bitRate: Int = 160_000
    ) throws {
        frame = try Frame()
        precondition(!sources.isEmpty, "an audio track needs a source")
        FFmpegLog.quiet()
        self.duration = max(0.001, duration)
        var inputOptions = options
        inputOptions.requireVideo = false
        decoders = try sources.map { try SourceDecoder(source: $0, options: inputOptions) }
        let rate = decoders[0].sampleRate
        sampleRate = [8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000, 88200, 96000].contains(rate) ? rate : 48000
        channels = decoders.allSatisfy { $0.channelCount == 1 } ? 1 : 2
        try openEncoder(bitRate: bitRate)
        try buildGraph()
    }

    deinit {
        var g = graph
        avfilter_graph_free(&g)
        var e = encoder
        avcodec_free_context(&e)
        var p = codecParameters
        avcodec_parameters_free(&p)
    }

    /// Checks that `location` opens and holds an audio stream (before any output is created).
    public static func checkReadable(_ location: URL, options: MediaInput.Options = MediaInput.Options()) throws {
        var o = options
        o.requireVideo = false
        let input = try MediaInput(location: location, options: o)
        if input.audioStreamIndex == nil { throw LapseError(.invalidInput, input.displayName, "no audio stream") }
    }

    /// The AAC stream's codec parameters (for a muxer's stream).
    var parameters: UnsafePointer<AVCodecParameters> { UnsafePointer(codecParameters!) }
    /// The time base of the packets' timestamps: 1/``sampleRate``.
    var timeBase: AVRational { AVRational(num: 1, den: Int32(sampleRate)) }
    /// Parameters to give ``VideoEncoder`` for muxing this track beside the video.
    var streamParameters: AudioStreamParameters { AudioStreamParameters(parameters: parameters, timeBase: timeBase) }

    /// The next AAC packet if it starts before `seconds` (track time); `nil` when it starts later or the track
    /// has ended. Timestamps are in ``timeBase``.
    func nextPacket(before seconds: Double) throws -> Packet? {
        if pending == nil { pending = try produce() }
        guard let p = pending else { return nil }
        let t = Double(p.pointer.pointee.pts) / Double(sampleRate)
        guard t < seconds else { return nil }
        pending = nil
        packetsWritten += 1
        return p
    }

    /// Writes every packet that starts before `seconds` (track time) to stream `stream` of `muxer`.
    func write(upTo seconds: Double, into muxer: ClipMuxer, stream: Int) throws {
        let tb = muxer.timeBase(stream)
        while let p = try nextPacket(before: seconds) {
            av_packet_rescale_ts(p.pointer, timeBase, tb)
            p.pointer.pointee.stream_index = Int32(stream)
            try muxer.write(p.pointer)
        }
    }

    /// Writes every packet that starts before `seconds` to audio stream `stream` (0-based among its audio
    /// streams) of `encoder`, which must have been created with ``streamParameters``.
    package func write(upTo seconds: Double, into encoder: VideoEncoder, stream: Int = 0) throws {
        while let p = try nextPacket(before: seconds) {
            try encoder.writeAudio(p.pointer, stream: stream)
        }
    }

    // MARK: - Pipeline

    private func openEncoder(bitRate: Int) throws {
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_AAC), let c = avcodec_alloc_context3(codec) else {
            throw LapseError(.codec, nil, "the AAC encoder is not available in this FFmpeg")
        }
        encoder = c
        c.pointee.sample_rate = Int32(sampleRate)
        c.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        av_channel_layout_default(&c.pointee.ch_layout, Int32(channels))
        c.pointee.bit_rate = Int64(bitRate)
        c.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
        // MP4, MOV and Matroska keep the AudioSpecificConfig in the stream header.
        c.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        try ffCheck(avcodec_open2(c, codec, nil), nil, "cannot open the AAC encoder")
        codecParameters = avcodec_parameters_alloc()
        try ffCheck(avcodec_parameters_from_context(codecParameters, c), nil, "cannot describe the AAC stream")
    }

    private func buildGraph() throws {
        guard let g = avfilter_graph_alloc() else { throw LapseError(.codec, nil, "out of memory") }
        graph = g
        let abuffer = avfilter_get_by_name("abuffer")
        let abuffersink = avfilter_get_by_name("abuffersink")
        // The in/out lists are freed on every way out (parsing takes what it links; the rest is left to free).
        var outputs: UnsafeMutablePointer<AVFilterInOut>?
        var inputs: UnsafeMutablePointer<AVFilterInOut>?
        defer {
            avfilter_inout_free(&inputs)
            avfilter_inout_free(&outputs)
        }
        for (i, d) in decoders.enumerated() {
            var src: UnsafeMutablePointer<AVFilterContext>?
            try ffCheck(
                avfilter_graph_create_filter(&src, abuffer, "in\(i)", d.abufferArguments, nil, g),
                d.displayName, "cannot set up the audio filter")
            sources.append(src!)
            guard let io = avfilter_inout_alloc() else { throw LapseError(.codec, nil, "out of memory") }
            io.pointee.name = av_strdup("in\(i)")
            io.pointee.filter_ctx = src
            io.pointee.pad_idx = 0
            io.pointee.next = outputs
            outputs = io
        }
        var sinkContext: UnsafeMutablePointer<AVFilterContext>?
        try ffCheck(
            avfilter_graph_create_filter(&sinkContext, abuffersink, "out", nil, nil, g), nil,
            "cannot set up the audio filter")
        sink = sinkContext
        guard let sinkIO = avfilter_inout_alloc() else { throw LapseError(.codec, nil, "out of memory") }
        inputs = sinkIO
        sinkIO.pointee.name = av_strdup("out")
        sinkIO.pointee.filter_ctx = sinkContext
        sinkIO.pointee.pad_idx = 0
        sinkIO.pointee.next = nil
        let d = String(format: "%.6f", duration)
        let format =
            "aresample=\(sampleRate),aformat=sample_fmts=fltp:sample_rates=\(sampleRate):channel_layouts="
            + (channels == 1 ? "mono" : "stereo")
        var description = ""
        for i in decoders.indices {
            // Each input begins at its own start (its frames are timed from there): trim the samples before it.
            description += "[in\(i)]atrim=start=0,asetpts=PTS-STARTPTS,\(format)[a\(i)];"
        }
        if decoders.count == 1 {
            description += "[a0]"
        } else {
            description +=
                decoders.indices.map { "[a\($0)]" }.joined()
                + "amix=inputs=\(decoders.count):duration=longest:dropout_transition=0,"
        }
        description += "apad=whole_dur=\(d),atrim=end=\(d),\(format)[out]"
        try ffCheck(
            avfilter_graph_parse_ptr(g, description, &inputs, &outputs, nil), nil, "cannot set up the audio filter")
        try ffCheck(avfilter_graph_config(g, nil), nil, "cannot set up the audio filter")
        av_buffersink_set_frame_size(sinkContext, UInt32(encoder!.pointee.frame_size))
    }

    /// Runs the pipeline until one encoded packet is out; `nil` at the end.
    private func produce() throws -> Packet? {
        guard let encoder else { return nil }
        while true {
            let packet = try Packet()
            let r = avcodec_receive_packet(encoder, packet.pointer)
            if r == 0 { return packet }
            if r == lapse_averror_eof() {
                encoderEnded = true
                return nil
            }
            guard r == lapse_averror_eagain() else {
                try ffCheck(r, nil, "AAC encoding failed")
                return nil
            }
            // The encoder wants a frame.
            if graphEnded {
                try ffCheck(avcodec_send_frame(encoder, nil), nil, "AAC encoding failed")
                continue
            }
            av_frame_unref(frame.pointer)
            let g = av_buffersink_get_frame(sink, frame.pointer)
            if g == lapse_averror_eof() {
                graphEnded = true
                continue
            }
            if g == lapse_averror_eagain() {
                try feed()
                continue
            }
            try ffCheck(g, nil, "the audio filter failed")
            try ffCheck(avcodec_send_frame(encoder, frame.pointer), nil, "AAC encoding failed")
        }
    }

    /// Gives one decoded frame (or the end) to every source that has not ended.
    private func feed() throws {
        var any = false
        for (i, d) in decoders.enumerated() where !d.ended {
            any = true
            if let f = try d.nextFrame() {
                try ffCheck(
                    av_buffersrc_add_frame_flags(sources[i], f.pointer, Int32(AV_BUFFERSRC_FLAG_KEEP_REF)),
                    d.displayName, "the audio filter refused a frame")
            } else {
                try ffCheck(av_buffersrc_add_frame_flags(sources[i], nil, 0), d.displayName, "the audio filter failed")
            }
        }
        if !any {
            // Every source ended but the sink still waits: the graph is draining; nothing more will come.
            graphEnded = true
        }
    }
}

/// Decodes the audio stream of one input from its start time.
private final class SourceDecoder {
    let input: MediaInput
    let stream: Int
    let start: Double
    let clock: StreamClock
    private let decoder: PacketDecoder
    private let frame: Frame
    private(set) var ended = false

    var displayName: String { input.displayName }
    var sampleRate: Int { Int(decoder.sampleRate) }

    init(source: AudioTrack.Source, options: MediaInput.Options) throws {
        frame = try Frame()
        input = try MediaInput(location: source.location, options: options)
        guard let a = input.audioStreamIndex else {
            throw LapseError(.invalidInput, input.displayName, "no audio stream")
        }
        stream = a
        start = source.start
        clock = StreamClock(input, stream: a)
        let opened = input
        decoder = try opened.withStream(a) { s in
            try PacketDecoder(
                parameters: s.pointee.codecpar, name: opened.displayName, what: "audio", errorCode: .codec
            ) { c, _ in
                c.pointee.pkt_timebase = s.pointee.time_base
            }
        }
        if start > 0 { try input.seek(to: start, stream: a) }
    }

    /// The source's channels (as its stream says).
    var channelCount: Int { Int(decoder.channelLayout.nb_channels) }

    /// `abuffer` arguments: the decoder's format, with time base 1/sample rate (frames are re-timed from `start`).
    var abufferArguments: String {
        var layout = decoder.channelLayout
        if layout.order == AV_CHANNEL_ORDER_UNSPEC { av_channel_layout_default(&layout, layout.nb_channels) }
        var buf = [CChar](repeating: 0, count: 128)
        av_channel_layout_describe(&layout, &buf, buf.count)
        let layoutName = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let fmt = av_get_sample_fmt_name(decoder.sampleFormat).map { String(cString: $0) } ?? "fltp"
        let rate = decoder.sampleRate
        return "time_base=1/\(rate):sample_rate=\(rate):sample_fmt=\(fmt):channel_layout=\(layoutName)"
    }

    /// The next decoded frame with pts in 1/sample rate counted from `start` (negative before it), or `nil` at the end.
    /// A packet the decoder finds invalid is passed over; other errors throw.
    func nextFrame() throws -> Frame? {
        guard !ended else { return nil }
        let got = try decoder.receive(
            into: frame,
            read: { packet in
                while try input.read(into: packet) {
                    if Int(packet.pointer.pointee.stream_index) == stream { return true }
                    av_packet_unref(packet.pointer)
                }
                return false
            },
            failed: { failure in
                if case .send(let code, _) = failure, code == lapse_averror_invaliddata() { return }
                try ffCheck(failure.code, input.displayName, "cannot decode the audio")
            })
        guard got else {
            ended = true
            return nil
        }
        let ts = frame.pointer.pointee.best_effort_timestamp
        let t = ts == lapse_nopts_value ? 0 : clock.seconds(ts) - start
        frame.pointer.pointee.pts = Int64((t * Double(decoder.sampleRate)).rounded())
        return frame
    }
}
