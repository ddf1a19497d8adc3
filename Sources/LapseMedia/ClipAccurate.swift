// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg
import Foundation
import LapseCore

/// The frame-exact cut (`ClipOptions.accurate`, see ``Clipper``): decodes from the keyframe at or before the
/// start, re-encodes the frames shown from `start` to `end` with ``VideoEncoder`` (libx264, same size, the
/// frames' own timestamps in the stream's time base, so variable frame rates survive), and makes the sound with
/// ``AudioTrack`` cut to the same range. Rotation (display matrix) and languages are copied to the output.
struct AccurateClip {
    let input: MediaInput
    let options: ClipOptions
    let container: MediaContainer
    let path: String
    let progress: ProgressHandler?

    func run() throws -> ClipResult {
        guard let video = input.videoStreamIndex else {
            throw LapseError(.invalidInput, input.displayName, "no video stream")
        }
        // What the clip needs of the video stream, and its decoder, while the stream is lent once.
        let (par, tb, averageRate, baseRate, decoder) = try input.withStream(video) { stream in
            let tb = stream.pointee.time_base
            let decoder = try PacketDecoder(
                parameters: stream.pointee.codecpar, name: input.displayName, what: "video",
                errorCode: .codec
            ) { context, _ in
                context.pointee.pkt_timebase = tb
                context.pointee.thread_count = 0
            }
            return (
                stream.pointee.codecpar.pointee, tb, stream.pointee.avg_frame_rate, stream.pointee.r_frame_rate,
                decoder
            )
        }

        // Same size (rounded down to even for 4:2:0), the stream's time base, its average frame rate.
        let width = max(2, Int(par.width) & ~1)
        let height = max(2, Int(par.height) & ~1)
        var rate = averageRate
        if rate.num <= 0 || rate.den <= 0 { rate = baseRate }
        if rate.num <= 0 || rate.den <= 0 { rate = AVRational(num: 30, den: 1) }
        var settings = VideoEncoderSettings(width: width, height: height, fps: 30)
        settings.frameRate = (Int(rate.num), Int(rate.den))
        settings.timeBase = (Int(tb.num), Int(tb.den))
        settings.crf = options.crf
        settings.preset = options.preset

        let length = options.end - options.start
        var track: AudioTrack?
        switch options.audio {
        case .original:
            if input.audioStreamIndex != nil {
                track = try AudioTrack(
                    sources: [.init(location: input.location, start: options.start)],
                    duration: length, options: options.input)
            }
        case .none: break
        case .replace(let file):
            track = try AudioTrack(sources: [.init(location: file)], duration: length, options: options.input)
        case .mix(let file):
            var sources: [AudioTrack.Source] = [.init(location: file)]
            if input.audioStreamIndex != nil {
                sources.insert(.init(location: input.location, start: options.start), at: 0)
            }
            track = try AudioTrack(sources: sources, duration: length, options: options.input)
        }
        // Pixels pass through in the source's matrix (only the range may change): describe them as the source does,
        // with BT.601 for untagged standard-definition-style sources as FFmpeg's decoders assume.
        let sourceColour = par
        settings.colour = (
            sourceColour.color_primaries == AVCOL_PRI_UNSPECIFIED
                ? (sourceColour.color_space == AVCOL_SPC_BT709 ? AVCOL_PRI_BT709 : AVCOL_PRI_SMPTE170M)
                : sourceColour.color_primaries,
            sourceColour.color_trc == AVCOL_TRC_UNSPECIFIED
                ? (sourceColour.color_space == AVCOL_SPC_BT709 ? AVCOL_TRC_BT709 : AVCOL_TRC_SMPTE170M)
                : sourceColour.color_trc,
            Self.passedThrough.contains(sourceColour.color_space) ? sourceColour.color_space : AVCOL_SPC_SMPTE170M
        )
        // The source's side data and tags go to the output's streams as the encoder sets them up (during its init).
        let encoder = try input.withStream(video) { stream in
            try VideoEncoder(
                path: path, muxer: container.rawValue, settings: settings,
                audio: track.map { [$0.streamParameters] } ?? []
            ) { v, audio in
                ClipMuxer.copySideData(from: stream, to: v)
                av_dict_copy(&v.pointee.metadata, stream.pointee.metadata, 0)
                if let source = input.audioStreamIndex, let a = audio.first {
                    _ = input.withStream(source) { av_dict_copy(&a.pointee.metadata, $0.pointee.metadata, 0) }
                }
            }
        }

        let (buffered, _) = try input.seekToKeyframe(before: options.start)
        let clock = StreamClock(input, stream: video)
        let startTicks = clock.ticks(options.start)
        let endTicks = clock.ticks(options.end)
        let frameTicks = max(1, av_rescale_q(1, av_inv_q(rate), tb))
        let expected = max(1, Int((length * av_q2d(rate)).rounded()))

        let scaler = Scaler()
        let yuv = try Frame()
        try yuv.allocate(width: width, height: height, format: AV_PIX_FMT_YUV420P)
        var held: Frame? // the last frame before the start: shown at the start when no frame falls on it
        var written = 0
        var firstTime: Double?

        func encode(_ f: Frame, pts: Int64) throws {
            let src = f.pointer
            if f.format == AV_PIX_FMT_YUV420P && f.width == width && f.height == height {
                try encoder.append(yuvFrame: src, pts: pts)
            } else {
                try ffCheck(av_frame_make_writable(yuv.pointer), path, "cannot get a frame buffer")
                let planes = f.planes.map { UnsafePointer($0) }
                var dst = yuv.planes
                var dstStrides = yuv.lineSizes
                let matrix = src.pointee.colorspace == AVCOL_SPC_BT709 ? SWS_CS_ITU709 : SWS_CS_ITU601
                try planes.withUnsafeBufferPointer { p in
                    try f.lineSizes.withUnsafeBufferPointer { s in
                        try scaler.scale(
                            src: p.baseAddress!, srcStrides: s.baseAddress!, srcWidth: f.width, srcHeight: f.height,
                            srcFormat: f.format, srcMatrix: matrix,
                            srcFullRange: src.pointee.color_range == AVCOL_RANGE_JPEG,
                            dst: &dst, dstStrides: &dstStrides, dstWidth: width, dstHeight: height,
                            dstFormat: AV_PIX_FMT_YUV420P, dstMatrix: matrix, dstFullRange: false)
                    }
                }
                try encoder.append(yuvFrame: yuv.pointer, pts: pts)
            }
            written += 1
            progress?(ProgressEvent(stage: .clip, completed: min(written, expected), total: expected, unit: "frames"))
            if let track { try track.write(upTo: Double(pts + frameTicks) * av_q2d(tb), into: encoder) }
        }

        // The packets read while seeking first, then the input's; an invalid packet is passed over.
        var next = buffered.makeIterator()
        func read(_ packet: Packet) throws -> Bool {
            while let p = next.next() {
                guard Int(p.pointer.pointee.stream_index) == video else { continue }
                try ffCheck(av_packet_ref(packet.pointer, p.pointer), input.displayName, "cannot read the video")
                return true
            }
            while try input.read(into: packet) {
                if Int(packet.pointer.pointee.stream_index) == video { return true }
                av_packet_unref(packet.pointer)
            }
            return false
        }
        func failed(_ failure: PacketDecoder.Failure) throws {
            if case .send(let code, _) = failure, code == lapse_averror_invaliddata() { return }
            try ffCheck(failure.code, input.displayName, "cannot decode the video")
        }
        while true {
            let f = try Frame()
            guard try decoder.receive(into: f, read: read, failed: failed) else { break }
            let ts = f.pointer.pointee.best_effort_timestamp
            guard ts != lapse_nopts_value else { continue }
            if ts >= endTicks { break }
            if ts < startTicks {
                held = f
                continue
            }
            if written == 0 {
                if ts > startTicks, let held {
                    firstTime = options.start
                    try encode(held, pts: 0)
                } else {
                    firstTime = clock.seconds(ts)
                }
            }
            try encode(f, pts: ts - startTicks)
        }
        if written == 0, let held {
            // The range lies within the last frame's display time.
            firstTime = options.start
            try encode(held, pts: 0)
        }
        guard written > 0 else {
            throw LapseError(
                .invalidInput, input.displayName,
                "no video frames in \(TimeValue.format(options.start))–\(TimeValue.format(options.end))")
        }
        if let track { try track.write(upTo: .infinity, into: encoder) }
        try encoder.finish()
        var result = ClipResult(
            start: options.start, end: options.end, keyframeTime: firstTime ?? options.start,
            usesEditList: false, duration: length, videoFrames: written,
            audioPackets: track?.packetsWritten ?? 0, hasAudio: track != nil, mediaDuration: nil,
            bytesRead: input.bytesRead, container: container)
        let depth = av_pix_fmt_desc_get(AVPixelFormat(par.format)).map { Int($0.pointee.comp.0.depth) } ?? 8
        if depth > 8 {
            let hdr = [AVCOL_TRC_SMPTE2084, AVCOL_TRC_ARIB_STD_B67].contains(par.color_trc)
            result.warnings.append(
                """
                the video is \(depth)-bit\(hdr ? " HDR" : ""); --accurate re-encodes it as 8-bit H.264\
                \(hdr ? ", its HDR tags kept" : "") (smooth gradients may band): without --accurate the cut keeps \
                the original stream
                """)
        }
        return result
    }

    /// Matrices whose tag the re-encoded pixels keep (they pass through in the source's matrix); any other is
    /// described as BT.601 (`smpte170m`), as FFmpeg's decoders take an untagged one.
    static let passedThrough: Set<AVColorSpace> = [
        AVCOL_SPC_BT709, AVCOL_SPC_SMPTE170M, AVCOL_SPC_BT470BG, AVCOL_SPC_BT2020_NCL
    ]
}
