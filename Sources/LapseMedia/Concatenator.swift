// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg
import Foundation
import LapseCore

/// What ``Concatenator`` joined.
public struct ConcatResult: Sendable {
    /// Video packets (frames) written.
    public var videoFrames: Int
    /// Packets written in all streams.
    public var packets: Int
    /// Length of the joined video, seconds (the sum of the inputs').
    public var duration: Double
    /// Each input's length, seconds, in order.
    public var inputDurations: [Double]
    /// Each input's container metadata (`title`, `copyright`, `comment`…), in order.
    public var inputMetadata: [[String: String]]
    /// The output container.
    public var container: MediaContainer
}

/// Joins videos end to end by stream copy (nothing is decoded): the parts of a hyperlapse rendered as segments
/// (`lapse hyperlapse --segment K/N`), or any videos made with the same encoder settings.
///
/// The inputs must have the same streams (video, audio, subtitles; data streams are left out) with the same codec
/// parameters — codec, profile, size, pixel format, sample rate and channels, and the same decoder configuration
/// (`extradata`: H.264's SPS/PPS) — as a decoder reading one file sees one configuration. Timestamps are made
/// continuous from 0: each input starts where the previous one ended (its first presentation time, wherever its
/// own timeline begins, maps to the sum of the previous inputs' lengths; an input's length runs from its first
/// presentation time to the end of its last frame). MP4/MOV get `+faststart` (`moov` first).
public enum Concatenator {
    /// Joins `inputs` (two or more, in order) into `output`.
    /// - Parameters:
    ///   - inputs: the videos to join, two or more, in order.
    ///   - output: `.mp4`, `.m4v`, `.mov` or `.mkv`; written through ``AtomicOutput`` (nothing left on failure).
    ///   - metadata: the output's container metadata; nil copies the first input's.
    ///   - overwrite: replace an existing `output`.
    ///   - progress: called per input with stage `concat`, unit `inputs`.
    /// - Throws: ``LapseError``: `.usage` (fewer than two inputs, an unknown extension), `.invalidInput` naming the
    ///   input whose streams differ from the first input's (and how), or that cannot be read or starts with frames
    ///   hidden by an edit list (a cut by stream copy, which cannot be joined without re-encoding), `.output`.
    /// - Returns: the frames and duration written, and each input's duration.
    public static func concat(
        _ inputs: [URL], to output: URL, metadata: [String: String]? = nil,
        overwrite: Bool = false, progress: ProgressHandler? = nil
    ) throws -> ConcatResult {
        guard inputs.count >= 2 else { throw LapseError.usage("give at least two videos to join") }
        let container = try Clipper.container(for: output)
        let target = try AtomicOutput(url: output, overwrite: overwrite, inputs: inputs)
        do {
            let result = try join(
                inputs, path: target.temporaryURL.path, container: container, metadata: metadata, progress: progress)
            try target.commit()
            return result
        } catch {
            target.discard()
            throw error
        }
    }

    /// Each input's container metadata (`title`, `copyright`, `comment`…; not the container's own fields such as
    /// `major_brand`), in order.
    /// - Throws: ``LapseError`` `.invalidInput` naming an input that cannot be read.
    public static func metadata(of inputs: [URL]) throws -> [[String: String]] {
        var options = MediaInput.Options()
        options.requireVideo = false
        return try inputs.map { containerMetadata(try MediaInput(location: $0, options: options)) }
    }

    /// The streams joined: every video, audio and subtitle stream, in order.
    private static func copiedStreams(of input: MediaInput) -> [Int] {
        input.streams.filter { [.video, .audio, .subtitle].contains($0.kind) && !$0.isAttachedPicture }.map(\.index)
    }

    private static func join(
        _ paths: [URL], path: String, container: MediaContainer, metadata: [String: String]?,
        progress: ProgressHandler?
    ) throws -> ConcatResult {
        var options = MediaInput.Options()
        options.requireVideo = true
        // Every input is opened (and checked against the first) before anything is written.
        let inputs = try paths.map { try MediaInput(location: $0, options: options) }
        let first = inputs[0]
        let layout = copiedStreams(of: first)
        for input in inputs.dropFirst() {
            let streams = copiedStreams(of: input)
            guard streams.count == layout.count else {
                throw LapseError(
                    .invalidInput, input.displayName,
                    """
                    cannot be joined to \(first.displayName): it has \(streams.count) streams to join, \
                    \(first.displayName) has \(layout.count)
                    """
                )
            }
            for (a, b) in zip(layout, streams) {
                let mismatch: String? = first.withStream(a) { sa in
                    input.withStream(b) { sb in difference(sa.pointee.codecpar, sb.pointee.codecpar) }
                }
                if let difference = mismatch {
                    throw LapseError(
                        .invalidInput, input.displayName,
                        """
                        cannot be joined to \(first.displayName) by stream copy: \(difference) (render every part \
                        with the same settings)
                        """
                    )
                }
            }
        }

        let muxer = try ClipMuxer(path: path, container: container)
        let outputStreams = try layout.map { index in
            try first.withStream(index) { try muxer.addStream(copying: $0) }
        }
        muxer.setMetadata(metadata ?? containerMetadata(first))
        try muxer.writeHeader()

        let packet = try Packet()
        var offset = 0.0 // seconds: where the current input starts in the output
        var lastDTS = [Int64](repeating: Int64.min, count: layout.count)
        var videoFrames = 0
        var packets = 0
        var durations: [Double] = []
        let videoSlot = layout.firstIndex { first.streams[$0].kind == .video }!
        for (n, input) in inputs.enumerated() {
            let streams = copiedStreams(of: input)
            let slot = Dictionary(uniqueKeysWithValues: streams.enumerated().map { ($1, $0) })
            // Where the input's timeline starts: its first presentation time, read from its first packets.
            let origin = firstPresentationTime(of: input, streams: streams)
            // A part of a hyperlapse starts at its frames' global time: one that does not follow on from the
            // parts before it is out of order (or another job's).
            let frame = 1 / (input.videoStream?.frameRate ?? 30)
            if origin >= frame - 1e-6, abs(origin - offset) > frame / 2 {
                let before =
                    n == 0
                    ? "the first input must start at 0:00.000 (is the first part missing?)"
                    : "the inputs before it end at \(TimeValue.format(offset))"
                throw LapseError(
                    .invalidInput, input.displayName,
                    "starts at \(TimeValue.format(origin)) of its video, but \(before): give the parts in order, "
                        + "every one")
            }
            var end = origin
            while try input.read(into: packet) {
                let p = packet.pointer
                defer { av_packet_unref(p) }
                guard let k = slot[Int(p.pointee.stream_index)] else { continue }
                let inBase = input.timeBase(of: streams[k])
                let outBase = muxer.timeBase(outputStreams[k])
                if p.pointee.flags & AV_PKT_FLAG_DISCARD != 0 {
                    // Audio an edit list hides is the encoder's priming: left out. Hidden video frames are a cut by
                    // stream copy, which would show twice.
                    guard k != videoSlot else {
                        throw LapseError(
                            .invalidInput, input.displayName,
                            """
                            starts with frames an edit list hides (a cut made by stream copy): it cannot be \
                            joined without re-encoding
                            """
                        )
                    }
                    continue
                }
                if p.pointee.pts != lapse_nopts_value {
                    let t = Double(p.pointee.pts) * av_q2d(inBase)
                    end = max(end, t + Double(max(0, p.pointee.duration)) * av_q2d(inBase))
                }
                // Shift by (offset − origin), in the input's ticks, then into the output's.
                let shift = Int64(((offset - origin) / av_q2d(inBase)).rounded())
                for keyPath in [\AVPacket.pts, \AVPacket.dts] where p.pointee[keyPath: keyPath] != lapse_nopts_value {
                    p.pointee[keyPath: keyPath] = av_rescale_q(p.pointee[keyPath: keyPath] + shift, inBase, outBase)
                }
                p.pointee.duration = av_rescale_q(p.pointee.duration, inBase, outBase)
                // Decoding order stays strictly increasing across the joins.
                if p.pointee.dts != lapse_nopts_value {
                    if p.pointee.dts <= lastDTS[k] { p.pointee.dts = lastDTS[k] + 1 }
                    if p.pointee.pts != lapse_nopts_value, p.pointee.pts < p.pointee.dts {
                        p.pointee.pts = p.pointee.dts
                    }
                    lastDTS[k] = p.pointee.dts
                }
                p.pointee.stream_index = Int32(outputStreams[k])
                p.pointee.pos = -1
                if k == videoSlot { videoFrames += 1 }
                packets += 1
                try muxer.write(p)
            }
            durations.append(end - origin)
            offset += end - origin
            progress?(ProgressEvent(stage: .concat, completed: n + 1, total: inputs.count, unit: "inputs"))
        }
        try muxer.finish()
        return ConcatResult(
            videoFrames: videoFrames, packets: packets, duration: offset, inputDurations: durations,
            inputMetadata: inputs.map(containerMetadata), container: container)
    }

    /// The earliest start (first presentation time) of `streams`, seconds in the input's timeline; 0 when the
    /// container does not say.
    private static func firstPresentationTime(of input: MediaInput, streams: [Int]) -> Double {
        let starts = streams.compactMap { i -> Double? in
            input.withStream(i) { s in
                s.pointee.start_time == lapse_nopts_value
                    ? nil : Double(s.pointee.start_time) * av_q2d(s.pointee.time_base)
            }
        }
        return starts.min() ?? 0
    }

    /// How two streams' codec parameters differ in a way a decoder would notice, or nil.
    static func difference(_ a: UnsafeMutablePointer<AVCodecParameters>, _ b: UnsafeMutablePointer<AVCodecParameters>)
        -> String?
    {
        let x = a.pointee
        let y = b.pointee
        func codec(_ p: AVCodecParameters) -> String { String(cString: avcodec_get_name(p.codec_id)) }
        if x.codec_type != y.codec_type { return "its streams are of other kinds" }
        if x.codec_id != y.codec_id { return "its codec is \(codec(y)), not \(codec(x))" }
        if x.codec_type == AVMEDIA_TYPE_VIDEO {
            if x.width != y.width || x.height != y.height {
                return "its video is \(y.width)x\(y.height), not \(x.width)x\(x.height)"
            }
            if x.format != y.format {
                return
                    """
                    its pixel format is \(Scaler.name(AVPixelFormat(rawValue: y.format))), not \
                    \(Scaler.name(AVPixelFormat(rawValue: x.format)))
                    """
            }
        }
        if x.codec_type == AVMEDIA_TYPE_AUDIO {
            if x.sample_rate != y.sample_rate { return "its audio is \(y.sample_rate) Hz, not \(x.sample_rate) Hz" }
            if x.ch_layout.nb_channels != y.ch_layout.nb_channels {
                return "its audio has \(y.ch_layout.nb_channels) channels, not \(x.ch_layout.nb_channels)"
            }
        }
        if x.profile != y.profile { return "its \(codec(y)) profile differs" }
        let same =
            x.extradata_size == y.extradata_size
            && (x.extradata_size == 0 || memcmp(x.extradata, y.extradata, Int(x.extradata_size)) == 0)
        if !same { return "its \(codec(y)) decoder configuration (extradata: the encoder's settings) differs" }
        return nil
    }

    /// The container metadata of an input (`title`, `copyright`, `comment`…).
    static func containerMetadata(_ input: MediaInput) -> [String: String] {
        // The container's own fields, which the muxer writes itself, left out.
        input.containerMetadata.filter {
            !["major_brand", "minor_version", "compatible_brands", "encoder"].contains($0.key)
        }
    }
}
