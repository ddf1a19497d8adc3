// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg
import Foundation
import LapseCore

/// What to do with the clip's sound.
public enum ClipAudio: Sendable, Equatable {
    /// Copy the input's main audio stream (the default; nothing when the input has none).
    case original
    /// No audio stream in the output.
    case none
    /// Replace the sound with the audio of the file or URL `path` (decoded, cut to the clip's length, AAC).
    case replace(path: URL)
    /// Mix the input's audio with the file or URL `path` (libavfilter `amix`), cut to the clip's length, AAC.
    case mix(path: URL)
}

/// What ``Clipper`` cuts and how.
public struct ClipOptions: Sendable {
    /// Start of the range, seconds from the start of the media (≥ 0).
    public var start: Double
    /// End of the range, seconds from the start of the media (> `start`); clamped to the media's duration
    /// (`.infinity`: to the end of the media, for an input whose duration is known).
    public var end: Double
    /// Re-encode the video (libx264, CRF ``crf``, same size) for a frame-exact start and end;
    /// otherwise (default) stream copy from the keyframe at or before `start`.
    public var accurate: Bool = false
    /// Constant rate factor of the re-encode in `accurate` mode (x264 scale). Default 18.
    public var crf: Double = 18
    /// x264 preset of the re-encode in `accurate` mode. Default `fast`.
    public var preset: EncoderPreset = .fast
    /// The audio of the clip: the input's own (default), none, or another file's (replacing or mixed).
    public var audio: ClipAudio = .original
    /// How the input is opened (timeouts).
    public var input: MediaInput.Options = MediaInput.Options()

    /// A cut of `start ..< end`, seconds from the start of the media; every other option at its default.
    public init(start: Double, end: Double) {
        self.start = start
        self.end = end
    }
}

/// What ``Clipper`` did. Encoded as `lapse clip --json` prints it (``LapseCore/SummaryKey``): output, start,
/// end, keyframeTime, videoFrames (the frames shown: ``shownFrames``), hiddenFrames, framesPastEnd, editList,
/// duration, mediaDuration (left out when unknown), audio, accurate, container.
public struct ClipResult: Sendable, Encodable {
    /// The clip written (nil until it is).
    public var output: URL?
    /// Whether the video was re-encoded from the exact frame (``ClipOptions/accurate``), not copied.
    public var accurate = false
    /// The range cut, seconds from the start of the media (`end` clamped to the media's duration).
    public var start: Double
    /// The end of the range cut, seconds from the start of the media (clamped to its duration).
    public var end: Double
    /// Copy mode: time (seconds from the media's start) of the keyframe the copied video begins at, which
    /// is at or before `start`. In `accurate` mode: the first frame's time (= `start` to within a frame).
    public var keyframeTime: Double
    /// True when an edit list hides the frames between `keyframeTime` and `start` (MP4/MOV in copy mode),
    /// so playback begins at `start`; false for Matroska, where playback begins at `keyframeTime`.
    public var usesEditList: Bool
    /// Output duration in seconds (`end − start`, or `end − keyframeTime` without an edit list).
    public var duration: Double
    /// Video packets (frames) written, including hidden pre-roll frames in copy mode.
    public var videoFrames: Int
    /// Of ``videoFrames``, those before `start` that the edit list hides (copy mode into MP4/MOV: the frames
    /// from the keyframe to the start, which the decoder needs); 0 otherwise.
    public var hiddenFrames: Int = 0
    /// Of ``videoFrames``, those at or after `end` that the edit list hides (copy mode into MP4/MOV: frames shown
    /// later that an in-range frame needs as a reference, B-frames' forward references); 0 otherwise.
    public var framesPastEnd: Int = 0
    /// The frames a player shows: ``videoFrames`` less those the edit list hides either side.
    public var shownFrames: Int { videoFrames - hiddenFrames - framesPastEnd }
    /// Audio packets written (0 without audio).
    public var audioPackets: Int
    /// Whether the output has an audio stream.
    public var hasAudio: Bool
    /// The input's duration in seconds, when known.
    public var mediaDuration: Double?
    /// Bytes read from the input (top-level I/O; 0 when unknown, e.g. HLS segments).
    public var bytesRead: Int64
    /// The output container.
    public var container: MediaContainer
    /// Things the user should know (e.g. a rotation Matroska cannot carry), one line each.
    public var warnings: [String] = []

    /// See the type's documentation for the keys.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: SummaryKey.self)
        try c.encode(output?.shown ?? "", forKey: "output")
        try c.encode(start, forKey: "start")
        try c.encode(end, forKey: "end")
        try c.encode(keyframeTime, forKey: "keyframeTime")
        try c.encode(shownFrames, forKey: "videoFrames")
        try c.encode(hiddenFrames, forKey: "hiddenFrames")
        try c.encode(framesPastEnd, forKey: "framesPastEnd")
        try c.encode(usesEditList, forKey: "editList")
        try c.encode(duration, forKey: "duration")
        try c.encodeIfPresent(mediaDuration, forKey: "mediaDuration")
        try c.encode(hasAudio, forKey: "audio")
        try c.encode(accurate, forKey: "accurate")
        try c.encode(container, forKey: "container")
    }
}

/// Cuts a time range out of a video (file, HTTP(S) URL or HLS playlist) into an MP4, MOV, M4V or MKV file.
///
/// Copy mode (default) copies the compressed video and audio, starting at the keyframe at or before the start
/// (found through the container's index: only the needed part of the input is read). Timestamps are shifted so
/// that `start` becomes 0; in MP4/MOV the frames before it get negative times, which the `mov` muxer turns
/// into an edit list (as `ffmpeg -ss S -i IN -c copy` does), so players begin exactly at `start` while
/// the decoder still gets its keyframe. Video packets whose presentation time lies past the end are kept only
/// when a later-decoded frame inside the range may reference them. Rotation (display matrix), stream
/// languages and other stream metadata are copied; MP4/MOV get `+faststart`.
///
/// `accurate` mode decodes from that keyframe and re-encodes frames from `start` to `end` with ``VideoEncoder``
/// (libx264, same size, frame timestamps kept, so variable frame rates survive) and cuts the audio to match.
public enum Clipper {
    /// The container for an output file name, from its extension.
    /// - Throws: ``LapseError`` `.usage` for an extension other than `.mp4`, `.m4v`, `.mov`, `.mkv`.
    public static func container(for output: URL) throws -> MediaContainer {
        let ext = output.pathExtension
        guard let c = MediaContainer(fileExtension: ext) else {
            throw LapseError.usage("cannot write '.\(ext)' files: name the output .mp4, .mov, .m4v or .mkv")
        }
        return c
    }

    /// Cuts `options.start ..< options.end` of `location` into `output`.
    /// - Parameters:
    ///   - location: a file, an `http(s)://` URL or an HLS playlist URL (see ``MediaInput``).
    ///   - output: the output file; written through ``AtomicOutput`` (nothing is left there on failure).
    ///   - options: the range, the mode (copy or accurate), the audio and the input's options.
    ///   - overwrite: replace an existing `output`.
    ///   - progress: called with stage `clip`, unit `frames`.
    /// - Returns: what was cut (see ``ClipResult``).
    /// - Throws: ``LapseError``: `.usage` (end not after start or not a number, unknown extension), `.notFound`
    ///   (start at or beyond the media's end; the message gives its duration), `.invalidInput` (an infinite end
    ///   for an input whose duration is unknown), `.output`, and everything ``MediaInput`` throws.
    public static func clip(
        _ location: URL, to output: URL, options: ClipOptions, overwrite: Bool = false,
        progress: ProgressHandler? = nil
    ) throws -> ClipResult {
        guard options.start >= 0, options.start.isFinite else { throw LapseError.usage("the start must be a time ≥ 0") }
        guard !options.end.isNaN else { throw LapseError.usage("the end must be a time, not NaN") }
        guard options.end > options.start else {
            throw LapseError.usage(
                """
                the end (\(TimeValue.format(options.end))) must come after the start \
                (\(TimeValue.format(options.start)))
                """
            )
        }
        let container = try container(for: output)
        var inputs = [location]
        switch options.audio {
        case .replace(let path), .mix(let path): inputs.append(path)
        default: break
        }
        let target = try AtomicOutput(url: output, overwrite: overwrite, inputs: inputs)
        var audioOptions = options.input
        audioOptions.requireVideo = false
        if case .replace(let path) = options.audio { try AudioTrack.checkReadable(path, options: audioOptions) }
        if case .mix(let path) = options.audio { try AudioTrack.checkReadable(path, options: audioOptions) }

        let input = try MediaInput(location: location, options: options.input)
        guard !input.isStillImage else {
            throw LapseError(
                .invalidInput, input.displayName, "a still image (\(input.formatName)), not a video to cut")
        }
        let duration = input.duration
        if let duration, options.start >= duration - 0.0005 {
            throw LapseError(
                .notFound, input.displayName,
                """
                the start \(TimeValue.format(options.start)) is at or beyond the end of the media (its duration \
                is \(TimeValue.format(duration)))
                """
            )
        }
        guard options.end.isFinite || duration != nil else {
            throw LapseError(
                .invalidInput, input.displayName, "its duration is unknown (a live stream?): give the end of the range")
        }
        var range = options
        if let duration { range.end = min(options.end, duration) }
        do {
            var result: ClipResult
            if options.accurate {
                result = try AccurateClip(
                    input: input, options: range, container: container,
                    path: target.temporaryURL.path, progress: progress
                ).run()
            } else {
                result = try StreamCopyClip(
                    input: input, options: range, container: container,
                    path: target.temporaryURL.path, progress: progress
                ).run()
            }
            result.mediaDuration = duration
            result.output = output
            result.accurate = options.accurate
            if options.end.isFinite, let duration, options.end > duration + 0.005 {
                // Asked for past the end: say what is made instead of a shorter clip without a word (as `lapse gif`).
                result.warnings.append(
                    """
                    the end \(TimeValue.format(options.end)) runs past the end of the media \
                    (\(TimeValue.format(duration))): the clip is \(TimeValue.format(duration - options.start)), from \
                    \(TimeValue.format(options.start)) to the end
                    """
                )
            }
            if container == .matroska, let rotation = input.videoStream?.rotation, rotation != 0 {
                // FFmpeg 5.1's Matroska muxer writes no display matrix.
                result.warnings.append(
                    """
                    the input is rotated \(Int(rotation))° but Matroska cannot store that: players will show it \
                    sideways (use .mp4 or .mov to keep it)
                    """
                )
            }
            try target.commit()
            return result
        } catch {
            target.discard()
            throw error
        }
    }
}

// MARK: - Output

/// The output file of a clip: an `AVFormatContext` for writing, streams copied from an input or given by
/// codec parameters, `+faststart` for MP4/MOV.
final class ClipMuxer {
    let path: String
    let container: MediaContainer
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var headerWritten = false

    init(path: String, container: MediaContainer) throws {
        self.path = path
        self.container = container
        var oc: UnsafeMutablePointer<AVFormatContext>?
        try ffCheck(
            avformat_alloc_output_context2(&oc, nil, container.rawValue, path), path,
            "cannot create a \(container) file",
            as: .output)
        context = oc
    }

    deinit {
        guard let context else { return }
        if context.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0, context.pointee.pb != nil {
            avio_closep(&context.pointee.pb)
        }
        avformat_free_context(context)
    }

    /// Adds a stream with `input`'s codec parameters, time base, metadata (language…), disposition and
    /// side data (display matrix…). Returns the output stream's index.
    func addStream(copying input: UnsafeMutablePointer<AVStream>) throws -> Int {
        guard let context, let s = avformat_new_stream(context, nil) else {
            throw LapseError(.codec, path, "out of memory")
        }
        try ffCheck(
            avcodec_parameters_copy(s.pointee.codecpar, input.pointee.codecpar), path,
            "cannot copy the stream parameters")
        s.pointee.codecpar.pointee.codec_tag = 0
        s.pointee.time_base = input.pointee.time_base
        s.pointee.avg_frame_rate = input.pointee.avg_frame_rate
        s.pointee.r_frame_rate = input.pointee.r_frame_rate
        s.pointee.sample_aspect_ratio = input.pointee.sample_aspect_ratio
        Self.copyMetadata(from: input, to: s)
        Self.copySideData(from: input, to: s)
        return Int(s.pointee.index)
    }

    /// Adds a stream with the given codec parameters and time base. Returns its index.
    func addStream(
        parameters: UnsafePointer<AVCodecParameters>, timeBase: AVRational,
        language: String? = nil
    ) throws -> Int {
        guard let context, let s = avformat_new_stream(context, nil) else {
            throw LapseError(.codec, path, "out of memory")
        }
        try ffCheck(avcodec_parameters_copy(s.pointee.codecpar, parameters), path, "cannot copy the stream parameters")
        s.pointee.codecpar.pointee.codec_tag = 0
        s.pointee.time_base = timeBase
        if let language { av_dict_set(&s.pointee.metadata, "language", language, 0) }
        return Int(s.pointee.index)
    }

    /// Copies the stream metadata (language, handler name, …) and disposition.
    static func copyMetadata(from input: UnsafeMutablePointer<AVStream>, to output: UnsafeMutablePointer<AVStream>) {
        av_dict_copy(&output.pointee.metadata, input.pointee.metadata, 0)
        output.pointee.disposition = input.pointee.disposition
    }

    /// Copies the stream-level side data (display matrix, …).
    static func copySideData(from input: UnsafeMutablePointer<AVStream>, to output: UnsafeMutablePointer<AVStream>) {
        for i in 0..<Int(input.pointee.nb_side_data) {
            let sd = input.pointee.side_data[i]
            guard let dst = av_stream_new_side_data(output, sd.type, sd.size) else { continue }
            memcpy(dst, sd.data, sd.size)
        }
    }

    /// Sets the container metadata (`title`, `copyright`, `comment`…); call before ``writeHeader()``.
    func setMetadata(_ metadata: [String: String]) {
        guard let context else { return }
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            av_dict_set(&context.pointee.metadata, key, value, 0)
        }
    }

    /// The time base of output stream `index` (valid after ``writeHeader()``, which may change it).
    func timeBase(_ index: Int) -> AVRational { context!.pointee.streams[index]!.pointee.time_base }

    /// Opens the file and writes the header (`+faststart` for MP4/MOV).
    func writeHeader() throws {
        guard let context else { return }
        if context.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 {
            try ffCheck(
                avio_open(&context.pointee.pb, path, AVIO_FLAG_WRITE), path, "cannot create the file", as: .output)
        }
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        if container.isISOBaseMedia { av_dict_set(&options, "movflags", "+faststart", 0) }
        try ffCheck(avformat_write_header(context, &options), path, "cannot write the file header", as: .output)
        headerWritten = true
    }

    /// Writes `packet` (timestamps already in the output stream's time base, `stream_index` set).
    func write(_ packet: UnsafeMutablePointer<AVPacket>) throws {
        try ffCheck(av_interleaved_write_frame(context, packet), path, "cannot write to the file", as: .output)
    }

    /// Writes the index (and moves it to the front for MP4/MOV) and closes the file.
    func finish() throws {
        guard let context, headerWritten else { return }
        try ffCheck(av_write_trailer(context), path, "cannot finish the file", as: .output)
        if context.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 { avio_closep(&context.pointee.pb) }
    }
}

// MARK: - Finding the start

/// Seconds ↔ stream ticks for one stream of a ``MediaInput`` (times relative to the input's start time).
struct StreamClock {
    let timeBase: AVRational
    let origin: Double
    init(_ input: MediaInput, stream: Int) {
        timeBase = input.timeBase(of: stream)
        origin = input.startTime
    }
    func seconds(_ ts: Int64) -> Double {
        Double(ts) * Double(timeBase.num) / Double(timeBase.den) - origin
    }
    func ticks(_ seconds: Double) -> Int64 {
        Int64(((seconds + origin) * Double(timeBase.den) / Double(timeBase.num)).rounded())
    }
}

extension MediaInput {
    /// Positions the input so that the packets from the returned list on begin at the last video keyframe at
    /// or before `start`, and returns the packets already read from that keyframe on (all streams, in file order).
    ///
    /// Seeks backward through the container's index; for inputs whose seek lands after the wanted keyframe
    /// (HLS seeks forward to the next keyframe) it seeks earlier and earlier (by 2, 6, 14… s) until a keyframe
    /// at or before `start` is found, then reads on to the last such keyframe.
    /// - Returns: the buffered packets (the first video packet among them is the keyframe) and the keyframe's time.
    func seekToKeyframe(before start: Double) throws -> (packets: [Packet], keyframeTime: Double) {
        guard let video = videoStreamIndex else { throw LapseError(.invalidInput, displayName, "no video stream") }
        let clock = StreamClock(self, stream: video)
        var back = 0.0
        while true {
            let target = max(0, start - back)
            try seek(to: target)
            var buffer: [Packet] = []
            var keyframe: Double?
            var firstKeyframe: Double?
            while true {
                let p = try Packet()
                guard try read(into: p) else { break }
                let isVideo = Int(p.pointer.pointee.stream_index) == video
                if isVideo {
                    let pts = p.pointer.pointee.pts != lapse_nopts_value ? p.pointer.pointee.pts : p.pointer.pointee.dts
                    let dts = p.pointer.pointee.dts != lapse_nopts_value ? p.pointer.pointee.dts : pts
                    let isKey = p.pointer.pointee.flags & AV_PKT_FLAG_KEY != 0
                    if isKey, pts != lapse_nopts_value {
                        var t = clock.seconds(pts)
                        if abs(t) < 1e-9 { t = 0 } // rounding noise, printed as -0.000 otherwise
                        if firstKeyframe == nil { firstKeyframe = t }
                        if t <= start + 1e-6 {
                            keyframe = t
                            // Video from an earlier keyframe is not needed; other streams are filtered by time later.
                            buffer.removeAll { Int($0.pointer.pointee.stream_index) == video }
                        } else if keyframe == nil {
                            break // the first keyframe found is already past the start: seek earlier
                        }
                    }
                    if keyframe == nil { continue } // video before the first usable keyframe
                    buffer.append(p)
                    // Later keyframes all have dts ≥ this one's: none at or before `start` can follow.
                    if dts != lapse_nopts_value, clock.seconds(dts) > start + 1e-6 { break }
                    continue
                }
                buffer.append(p) // other streams: kept, filtered by time later
            }
            if let keyframe {
                return (buffer, keyframe)
            }
            if target <= 0 {
                if let firstKeyframe {
                    // The media starts after `start` (or has no keyframe before it): begin at its first keyframe.
                    try seek(to: 0)
                    return try seekFirstKeyframe(at: firstKeyframe)
                }
                throw LapseError(.invalidInput, displayName, "no video keyframe found")
            }
            back = back * 2 + 2
        }
    }

    /// After a seek to 0: reads up to and including the first video keyframe, returning it and what follows it.
    private func seekFirstKeyframe(at time: Double) throws -> (packets: [Packet], keyframeTime: Double) {
        guard let video = videoStreamIndex else { return ([], time) }
        var buffer: [Packet] = []
        var found = false
        while true {
            let p = try Packet()
            guard try read(into: p) else { break }
            if Int(p.pointer.pointee.stream_index) == video {
                if !found && p.pointer.pointee.flags & AV_PKT_FLAG_KEY == 0 { continue }
                found = true
                buffer.append(p)
                break
            }
            buffer.append(p)
        }
        return (buffer, time)
    }
}

// MARK: - Copy mode

/// The stream-copy cut (see ``Clipper``).
struct StreamCopyClip {
    let input: MediaInput
    let options: ClipOptions
    let container: MediaContainer
    let path: String
    let progress: ProgressHandler?

    func run() throws -> ClipResult {
        guard let video = input.videoStreamIndex else {
            throw LapseError(.invalidInput, input.displayName, "no video stream")
        }
        let muxer = try ClipMuxer(path: path, container: container)
        let outVideo = try input.withStream(video) { try muxer.addStream(copying: $0) }
        let copyAudio = options.audio == .original ? input.audioStreamIndex : nil
        let outAudio = try copyAudio.map { audio in try input.withStream(audio) { try muxer.addStream(copying: $0) } }
        let editList = container.isISOBaseMedia

        let (buffered, keyframeTime) = try input.seekToKeyframe(before: options.start)
        // Output time 0: `start` with an edit list hiding the pre-roll; the keyframe otherwise.
        let zero = editList ? options.start : keyframeTime
        let clipLength = options.end - zero

        // A new soundtrack (replace or mix) is made beside the copy.
        var track: AudioTrack?
        var outTrack: Int?
        switch options.audio {
        case .replace(let file):
            track = try AudioTrack(sources: [.init(location: file)], duration: clipLength, options: options.input)
        case .mix(let file):
            var sources: [AudioTrack.Source] = [.init(location: file)]
            if input.audioStreamIndex != nil {
                sources.insert(.init(location: input.location, start: zero), at: 0)
            }
            track = try AudioTrack(sources: sources, duration: clipLength, options: options.input)
        default: break
        }
        if let track {
            outTrack = try muxer.addStream(
                parameters: track.parameters, timeBase: track.timeBase,
                language: input.audioStream?.language)
        }
        try muxer.writeHeader()

        let vClock = StreamClock(input, stream: video)
        let vShift = vClock.ticks(zero)
        let vEnd = vClock.ticks(options.end)
        let vInTB = input.timeBase(of: video)
        let vOutTB = muxer.timeBase(outVideo)
        let aClock = copyAudio.map { StreamClock(input, stream: $0) }
        let aShift = aClock?.ticks(zero) ?? 0
        let aEnd = aClock?.ticks(options.end) ?? 0
        // Audio: keep one packet before the start as decoder pre-roll (hidden by the edit list).
        let aFrom = aClock?.ticks(max(editList ? options.start - 0.05 : keyframeTime, 0)) ?? 0
        let aInTB = copyAudio.map { input.timeBase(of: $0) } ?? AVRational(num: 1, den: 1)
        let aOutTB = outAudio.map { muxer.timeBase($0) } ?? AVRational(num: 1, den: 1)

        var videoDone = false
        var audioDone = copyAudio == nil
        var trailing: [Packet] = [] // video packets past the end, kept until we know whether a frame needs them
        var videoFrames = 0
        var audioPackets = 0
        var hiddenFrames = 0
        var framesPastEnd = 0
        // An estimate for the progress while copying (never reached before the end: the final event has the count).
        let expected = max(1, Int(((options.end - keyframeTime) * (input.videoStream?.frameRate ?? 30)).rounded()))

        func writeVideo(_ p: Packet) throws {
            let pk = p.pointer
            if pk.pointee.pts != lapse_nopts_value { pk.pointee.pts -= vShift }
            if pk.pointee.dts != lapse_nopts_value { pk.pointee.dts -= vShift }
            if editList && pk.pointee.pts != lapse_nopts_value && pk.pointee.pts < 0 { hiddenFrames += 1 }
            av_packet_rescale_ts(pk, vInTB, vOutTB)
            pk.pointee.stream_index = Int32(outVideo)
            pk.pointee.pos = -1
            try muxer.write(pk)
            videoFrames += 1
            progress?(
                ProgressEvent(stage: .clip, completed: min(videoFrames, expected - 1), total: expected, unit: "frames")
            )
        }

        func handle(_ p: Packet) throws {
            let pk = p.pointer
            let index = Int(pk.pointee.stream_index)
            if index == video {
                guard !videoDone else { return }
                let pts = pk.pointee.pts != lapse_nopts_value ? pk.pointee.pts : pk.pointee.dts
                let dts = pk.pointee.dts != lapse_nopts_value ? pk.pointee.dts : pts
                if dts >= vEnd {
                    // Decode order: every later frame has dts ≥ this one, so none can be inside the range.
                    videoDone = true
                    trailing.removeAll()
                    return
                }
                if pts >= vEnd {
                    trailing.append(p)
                    return
                }
                for t in trailing { try writeVideo(t) } // a reference of this in-range frame
                framesPastEnd += trailing.count
                trailing.removeAll()
                try writeVideo(p)
            } else if let a = copyAudio, index == a, let outAudio {
                guard !audioDone else { return }
                let pts = pk.pointee.pts != lapse_nopts_value ? pk.pointee.pts : pk.pointee.dts
                if pts == lapse_nopts_value { return }
                if pts >= aEnd {
                    audioDone = true
                    return
                }
                if pts + max(pk.pointee.duration, 0) <= aFrom { return }
                pk.pointee.pts = pts - aShift
                if pk.pointee.dts != lapse_nopts_value {
                    pk.pointee.dts -= aShift
                } else {
                    pk.pointee.dts = pk.pointee.pts
                }
                av_packet_rescale_ts(pk, aInTB, aOutTB)
                pk.pointee.stream_index = Int32(outAudio)
                pk.pointee.pos = -1
                try muxer.write(pk)
                audioPackets += 1
            }
        }

        for p in buffered { try handle(p) }
        while !(videoDone && audioDone) {
            let p = try Packet()
            guard try input.read(into: p) else { break }
            let time = input.time(of: p.pointer)
            // An audio stream that ends before the range does not make us read the rest of the file.
            if videoDone, let time, time > options.end + 2 { break }
            try handle(p)
            if let track, let outTrack, let time {
                try track.write(upTo: time - zero, into: muxer, stream: outTrack)
            }
        }
        if let track, let outTrack { try track.write(upTo: .infinity, into: muxer, stream: outTrack) }
        // The total was an estimate from the range and the frame rate: the count copied ends the stage.
        progress?(ProgressEvent(stage: .clip, completed: videoFrames, total: videoFrames, unit: "frames"))
        try muxer.finish()
        // Frames past the end kept as references of the last ones: the edit list ends at the cut, hiding them.
        if editList && framesPastEnd > 0 { try MP4EditList.trimVideo(path, to: options.end - zero) }
        guard videoFrames > 0 else {
            throw LapseError(
                .invalidInput, input.displayName,
                "no video frames in \(TimeValue.format(options.start))–\(TimeValue.format(options.end))")
        }
        var result = ClipResult(
            start: options.start, end: options.end, keyframeTime: keyframeTime, usesEditList: editList,
            duration: options.end - zero, videoFrames: videoFrames,
            audioPackets: track?.packetsWritten ?? audioPackets,
            hasAudio: outAudio != nil || outTrack != nil, mediaDuration: nil,
            bytesRead: input.bytesRead, container: container)
        result.hiddenFrames = hiddenFrames
        result.framesPastEnd = editList ? framesPastEnd : 0
        return result
    }
}
