// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg
import Foundation
import LapseCore
import Synchronization

/// A media input opened with libavformat: a local file, an `http(s)://` URL (progressive MP4/MOV with `moov`
/// at the start or at the end, from a server with or without Range support) or an HLS playlist (`.m3u8`).
/// This is the one way Lapse opens media; clip, GIF and frame readers build on it.
///
/// Network inputs are read through libavformat's own HTTP layer with reconnects (`reconnect`,
/// `reconnect_streamed`, `reconnect_on_network_error`), a per-read timeout (`rw_timeout`) and an interrupt
/// callback that enforces an optional overall deadline and ``cancel()``.
/// Errors are ``LapseError``s whose subject is the path or the URL without its query string
/// (``Redaction/url(_:)``): missing file, not a media file, no video stream, HTTP 404/403, connection refused,
/// timeout, truncated file.
///
/// An MP4/MOV served without Range support whose `moov` is at the end cannot be read in place (the index comes
/// after the samples); it is then downloaded once to a temporary file, which is removed on deinit.
///
/// Not thread-safe, except ``cancel()`` which may be called from any thread.
public final class MediaInput {
    /// How to open an input.
    public struct Options: Sendable {
        /// Network inputs: seconds without any data before a read fails (libavformat `rw_timeout`). Default 15.
        public var readTimeout: Double = 15
        /// Seconds from opening after which every blocking call fails with a timeout; `nil` for none (default).
        public var deadline: Double?
        /// Fail with `.invalidInput` ("no video stream") when the input holds no video. Default true.
        public var requireVideo: Bool = true
        /// The HTTP `User-Agent`.
        public var userAgent: String = lapseUserAgent
        /// Where an input that must be downloaded first is kept (default: the system's temporary directory).
        public var temporaryDirectory: URL?
        /// Options at their defaults.
        public init() {}
    }

    /// One stream of the input.
    public struct Stream: Sendable {
        /// What a stream carries.
        public enum Kind: String, Sendable { case video, audio, subtitle, data, other }
        /// Index in the container (the `stream_index` of its packets).
        public var index: Int
        /// What the stream carries.
        public var kind: Kind
        /// FFmpeg's codec name (`h264`, `aac`…).
        public var codecName: String
        /// The stream's time base: timestamps of its packets are in units of `num/den` seconds.
        public var timeBase: (num: Int, den: Int)
        /// Start time in seconds (the first pts), when known.
        public var startTime: Double?
        /// Duration in seconds, when known.
        public var duration: Double?
        /// Video: coded width and height in pixels (0 for other kinds).
        public var width: Int
        /// Video: coded height in pixels (0 for other kinds).
        public var height: Int
        /// Video: display rotation in degrees, counter-clockwise as `av_display_rotation_get` gives it
        /// (ffprobe's `rotation`; −90 for a portrait iPhone clip); 0 when there is no display matrix.
        public var rotation: Double
        /// Video: average frame rate (frames per second), when known.
        public var frameRate: Double?
        /// Audio: sample rate (Hz) and channel count (0 for other kinds).
        public var sampleRate: Int
        /// Audio: channel count (0 for other kinds).
        public var channels: Int
        /// The stream's `language` tag (ISO 639-2, e.g. `eng`), when present and not `und`.
        public var language: String?
        /// True for an attached picture (cover art), which is not a real video stream.
        public var isAttachedPicture: Bool
    }

    /// The location as given (may hold a secret in its query string: print ``displayName`` instead).
    public let location: URL
    /// The location as it may be printed: a path, or the URL without its query string.
    public let displayName: String
    /// True for `http://`, `https://` and other network inputs.
    public let isNetwork: Bool
    /// The streams, in container order.
    public private(set) var streams: [Stream] = []
    /// The index of the main video stream (FFmpeg's best pick), if any.
    public private(set) var videoStreamIndex: Int?
    /// The index of the main audio stream, if any.
    public private(set) var audioStreamIndex: Int?
    /// The container's name as FFmpeg knows it (`mov,mp4,m4a,3gp,3g2,mj2`, `hls`, `matroska,webm`…).
    public private(set) var formatName: String = ""
    /// True when the data came through a temporary download (see the type's comment).
    public private(set) var downloadedFirst = false

    /// The format context: reached by the input's own methods, or for the length of a call through
    /// ``withFormatContext(_:)`` and ``withStream(_:_:)`` (no pointer into it outlives the call).
    private var context: UnsafeMutablePointer<AVFormatContext>?
    let options: Options
    private let interrupt: InterruptState
    private var temporaryFile: String?

    /// Opens `location` and reads its stream information.
    /// - Parameters:
    ///   - location: a file or an `http://`, `https://` URL (progressive file or HLS `.m3u8`).
    ///   - options: timeouts and checks (see ``Options``).
    /// - Throws: ``LapseError`` — `.invalidInput` (missing or unreadable file, not a media file, no video stream,
    ///   truncated file), `.network` (HTTP status, refused connection, timeout), `.cancelled`.
    public init(location: URL, options: Options = Options()) throws {
        FFmpegLog.quiet()
        let url = location
        self.location = url
        self.displayName = url.printable
        self.options = options
        isNetwork = !url.isFileURL
        let target = url.openable
        interrupt = InterruptState()
        if let deadline = options.deadline { interrupt.arm(seconds: deadline) }
        // A read that waits out rw_timeout, and the one reconnection that follows it (its delay included), may
        // pass before the input counts as stalled.
        if isNetwork { interrupt.watchStalls(seconds: options.readTimeout + Double(reconnectDelayMax)) }
        if !isNetwork {
            let path = url.path
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw LapseError(.invalidInput, displayName, "no such file", cause: .posix(ENOENT))
            }
            if isDirectory.boolValue {
                throw LapseError(.invalidInput, displayName, "is a directory, not a media file")
            }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw LapseError(.invalidInput, displayName, "permission denied")
            }
        }
        if isNetwork, let refusal = Self.unreachable(target, timeout: options.readTimeout) {
            throw LapseError(.network, displayName, refusal)
        }
        if isNetwork { try checkPlaylistLoops() }
        var mustDownload = false
        try open(target) { mustDownload = self.isNetwork && self.needsDownload() }
        if mustDownload {
            close()
            let file = try download()
            temporaryFile = file
            downloadedFirst = true
            try open(file) {}
        }
        try checkComplete()
        try describe()
    }

    deinit {
        close()
        if let temporaryFile { unlink(temporaryFile) }
    }

    /// Turns FFmpeg's own log output off (unless ``showLibraryLog(level:)`` chose a level), so that errors reach
    /// users only as Lapse's one-line messages (FFmpeg otherwise prints lines such as "error reading header").
    public static func silenceLibraryLog() { FFmpegLog.quiet() }

    /// Shows FFmpeg's own messages from `level` on (`quiet`, `error`, `warning`, `info`, `verbose`, `debug`), to
    /// diagnose; false (and nothing changed) for another name. `lapse` calls it with `LAPSE_FFMPEG_LOG`.
    public static func showLibraryLog(level: String) -> Bool { FFmpegLog.level(named: level) }

    /// Asks every blocking call in progress or to come to stop: they throw `.cancelled`. Thread-safe.
    public func cancel() { interrupt.cancel() }

    /// Duration of the input in seconds (container duration, else the longest stream), when known.
    public var duration: Double? {
        guard let context else { return nil }
        if context.pointee.duration != lapse_nopts_value && context.pointee.duration > 0 {
            return Double(context.pointee.duration) / Double(AV_TIME_BASE)
        }
        let d = streams.compactMap(\.duration).max()
        return d
    }

    /// Start time of the input in seconds: the main video stream's first timestamp when there is a video
    /// stream, else the container's start (0 for most files; e.g. 1.467 for HLS cut from a transport stream,
    /// whose audio begins 1024 samples of AAC priming earlier). Times given to users are relative to it, so a
    /// time means the same frame in an MP4 and in its HLS copy.
    public var startTime: Double {
        guard let context else { return 0 }
        if let v = videoStreamIndex {
            let s = avStream(v)
            if s.pointee.start_time != lapse_nopts_value {
                return Double(s.pointee.start_time) * av_q2d(s.pointee.time_base)
            }
        }
        guard context.pointee.start_time != lapse_nopts_value else { return 0 }
        return Double(context.pointee.start_time) / Double(AV_TIME_BASE)
    }

    /// The main video stream; `nil` when there is none.
    public var videoStream: Stream? { videoStreamIndex.map { streams[$0] } }
    /// The main audio stream; `nil` when there is none.
    public var audioStream: Stream? { audioStreamIndex.map { streams[$0] } }

    /// Bytes read from the input so far (top-level I/O only; for HLS the playlist, not the segments).
    public var bytesRead: Int64 {
        guard let pb = context?.pointee.pb else { return 0 }
        return pb.pointee.bytes_read
    }

    /// The `AVStream` for `index`, for the input's own methods.
    private func avStream(_ index: Int) -> UnsafeMutablePointer<AVStream> {
        context!.pointee.streams[index]!
    }

    /// Calls `body` with the `AVStream` of stream `index` (0 ..< ``streams``.count; codec parameters, side data),
    /// valid for the call only: the stream belongs to the input, which frees it when closed.
    /// - Precondition: the input is open and `index` is one of its streams (it traps otherwise, as a bad index does);
    ///   ``timeBase(of:)`` likewise, while ``discardStreams(except:)`` does nothing on a closed input.
    func withStream<R>(_ index: Int, _ body: (UnsafeMutablePointer<AVStream>) throws -> R) rethrows -> R {
        try body(avStream(index))
    }

    /// Calls `body` with the input's `AVFormatContext`, valid for the call only.
    /// - Throws: ``LapseError`` `.invalidInput` when the input is closed; what `body` throws.
    func withFormatContext<R>(_ body: (UnsafeMutablePointer<AVFormatContext>) throws -> R) throws -> R {
        guard let context else { throw LapseError(.invalidInput, displayName, "input is closed") }
        return try body(context)
    }

    /// The time base of stream `index` (seconds a tick).
    func timeBase(of index: Int) -> AVRational { avStream(index).pointee.time_base }

    /// Packets of every stream but `kept` are dropped by the demuxer from now on (`AVDISCARD_ALL`), and so are not
    /// read from the file where the container's index allows.
    func discardStreams(except kept: Int) {
        guard let context else { return }
        for i in 0..<Int(context.pointee.nb_streams) where i != kept {
            context.pointee.streams[i]!.pointee.discard = AVDISCARD_ALL
        }
    }

    /// The container's metadata (`title`, `copyright`, `major_brand`…), key by key.
    var containerMetadata: [String: String] {
        var result: [String: String] = [:]
        var entry: UnsafeMutablePointer<AVDictionaryEntry>?
        while let e = av_dict_get(context?.pointee.metadata, "", entry, AV_DICT_IGNORE_SUFFIX) {
            entry = e
            result[String(cString: e.pointee.key)] = String(cString: e.pointee.value)
        }
        return result
    }

    /// Seeks so that the next packets read start at the keyframe at or before `seconds` (measured from
    /// ``startTime``) in `stream` (default: the video stream, else any stream). Uses the container's index
    /// (MP4/MOV, MKV cues) or the playlist; nothing is scanned.
    /// - Throws: ``LapseError`` `.invalidInput` when the input cannot seek there, `.network`, `.cancelled`.
    public func seek(to seconds: Double, stream: Int? = nil) throws {
        let index = stream ?? videoStreamIndex ?? -1
        try seekBackward(to: seconds, stream: index, naming: seconds)
        if seeksByTimestampSearch, index >= 0 { try settleOnKeyframe(before: seconds, stream: index) }
    }

    /// libavformat's seek to the keyframe it takes to be at or before `seconds` (from ``startTime``) of stream
    /// `index` (−1: any); an error names the time `naming` asked for.
    private func seekBackward(to seconds: Double, stream index: Int, naming: Double) throws {
        guard let context else { return }
        let target: Int64
        let base = startTime + seconds
        if index >= 0 {
            let tb = avStream(index).pointee.time_base
            target = Int64((base * Double(tb.den) / Double(tb.num)).rounded(.down))
        } else {
            target = Int64((base * Double(AV_TIME_BASE)).rounded(.down))
        }
        let started = Date()
        interrupt.progressed()
        let r = av_seek_frame(context, Int32(index), target, AVSEEK_FLAG_BACKWARD)
        if r < 0 { throw error(r, doing: "cannot seek to \(TimeValue.format(naming))", since: started) }
    }

    /// An MPEG transport or program stream (`.ts`, `.mts`, `.m2ts`, `.mpg`, `.vob`): no index, so libavformat seeks
    /// by a binary search over the timestamps of any packets (its `mpegts` demuxer takes every packet for a keyframe)
    /// and lands where a decoder cannot start, or, seeking to the start, after the first keyframe.
    private var seeksByTimestampSearch: Bool {
        formatName == "mpegts" || formatName == "mpeg" || formatName == "mpegvideo"
    }

    /// After a timestamp search (``seeksByTimestampSearch``): moves to the byte position of the last keyframe of
    /// `stream` at or before `seconds`, found by reading on from where the search landed (and from earlier when it
    /// landed after it: 2, 6, 14… s back, then the file's first byte).
    private func settleOnKeyframe(before seconds: Double, stream: Int) throws {
        guard let context else { return }
        let packet = try Packet()
        let tb = avStream(stream).pointee.time_base
        let origin = startTime
        var back = 0.0
        while true {
            var found: Int64?
            var reachedPast = false
            while try read(into: packet) {
                let p = packet.pointer.pointee
                guard Int(p.stream_index) == stream else { continue }
                if p.flags & AV_PKT_FLAG_KEY != 0, let shown = time(of: packet.pointer) {
                    if shown <= seconds + 1e-6, p.pos >= 0 { found = p.pos } else { reachedPast = true }
                }
                // Once decoding order passes `seconds`, no later keyframe is shown at or before it.
                let dts = p.dts != lapse_nopts_value ? p.dts : p.pts
                if found != nil || reachedPast, dts != lapse_nopts_value,
                    Double(dts) * av_q2d(tb) - origin > seconds + 1e-6
                {
                    break
                }
            }
            // None at or before `seconds` from here (or none to the end: the search may have landed in the last group
            // of pictures): from earlier, and from the first byte once earlier is the start.
            let from = found ?? (seconds - back <= 0 ? 0 : nil)
            if let from {
                av_packet_unref(packet.pointer)
                let r = av_seek_frame(context, -1, from, AVSEEK_FLAG_BYTE)
                if r < 0 { throw error(r, doing: "cannot seek to \(TimeValue.format(seconds))", since: Date()) }
                return
            }
            back = back * 2 + 2
            try seekBackward(to: max(0, seconds - back), stream: stream, naming: seconds)
        }
    }

    /// Reads the next packet (any stream) into `packet`.
    /// - Returns: false at the end of the input.
    /// - Throws: ``LapseError`` for read errors (`.network`, `.invalidInput` for a truncated file), `.cancelled`.
    func read(into packet: Packet) throws -> Bool {
        guard let context else { return false }
        av_packet_unref(packet.pointer)
        let started = Date()
        interrupt.progressed() // the time between calls is the caller's, not a stall
        let r = av_read_frame(context, packet.pointer)
        if r >= 0 { interrupt.progressed() }
        if r == lapse_averror_eof() {
            // A network EOF after a long wait is a stalled server, not the end of the media.
            if isNetwork, Date().timeIntervalSince(started) >= options.readTimeout * 0.9 {
                throw LapseError(.network, displayName, "timed out: no data for \(Self.seconds(options.readTimeout))")
            }
            return false
        }
        if r < 0 { throw error(r, doing: "cannot read", since: started) }
        return true
    }

    /// The presentation time of `packet` in seconds from ``startTime`` (its pts, else dts), or `nil`.
    func time(of packet: UnsafePointer<AVPacket>) -> Double? {
        let t = packet.pointee.pts != lapse_nopts_value ? packet.pointee.pts : packet.pointee.dts
        guard t != lapse_nopts_value else { return nil }
        let tb = avStream(Int(packet.pointee.stream_index)).pointee.time_base
        return Double(t) * Double(tb.num) / Double(tb.den) - startTime
    }

    // MARK: - Opening

    /// Opens `url`; `afterHeader` runs between reading the header and probing the streams.
    private func open(_ url: String, afterHeader: () -> Void) throws {
        var ctx: UnsafeMutablePointer<AVFormatContext>? = avformat_alloc_context()
        guard let allocated = ctx else { throw LapseError(.other, displayName, "out of memory") }
        allocated.pointee.interrupt_callback.callback = { opaque in
            guard let opaque else { return 0 }
            return Unmanaged<InterruptState>.fromOpaque(opaque).takeUnretainedValue().shouldStop ? 1 : 0
        }
        allocated.pointee.interrupt_callback.opaque = Unmanaged.passUnretained(interrupt).toOpaque()
        interrupt.observe(format: allocated)
        interrupt.progressed()
        var dict: OpaquePointer?
        defer { av_dict_free(&dict) }
        if url.contains("://") { setNetworkOptions(&dict) }
        let started = Date()
        let r = avformat_open_input(&ctx, url, nil, &dict)
        if r < 0 {
            interrupt.observe(format: nil) // freed by avformat_open_input
            throw error(r, doing: "cannot open", since: started)
        }
        context = ctx
        formatName = String(cString: ctx!.pointee.iformat.pointee.name)
        afterHeader()
        if needsDownloadFlag { return }
        let r2 = avformat_find_stream_info(ctx, nil)
        if r2 < 0 { throw error(r2, doing: "cannot read the stream information", since: started) }
    }

    /// Why the server of an `http(s)` URL cannot be reached at all — its host name does not resolve, or nothing
    /// listens on its port — or nil (reached, another scheme, or a proxy in the environment that libavformat will
    /// use). Asked before libavformat opens the URL, which would retry a refused connection with its reconnection
    /// delays (4 s) before it says so.
    static func unreachable(_ url: String, timeout: Double) -> String? {
        let environment = ProcessInfo.processInfo.environment
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = parts.host, !host.isEmpty,
            !["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"].contains(where: { environment[$0] != nil })
        else { return nil }
        let port = parts.port ?? (scheme == "https" ? 443 : 80)
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let name = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        guard getaddrinfo(name, String(port), &hints, &list) == 0, let first = list else {
            return "host not found (offline, or a wrong URL?)"
        }
        defer { freeaddrinfo(list) }
        var refused = 0
        var tried = 0
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            next = info.pointee.ai_next
            tried += 1
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            defer { Glibc.close(fd) }
            // Non-blocking, so a host that drops packets costs at most `timeout`, not the kernel's minutes.
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return nil }
            if errno == ECONNREFUSED {
                refused += 1
                continue
            }
            guard errno == EINPROGRESS else { continue }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&poller, 1, Int32(min(timeout, 30) * 1000)) == 1 else { return nil } // slow: libavformat's
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if error == 0 { return nil }
            if error == ECONNREFUSED { refused += 1 }
        }
        return refused > 0 && refused == tried ? "connection refused (is the server running and the URL right?)" : nil
    }

    /// libavformat's longest wait before a reconnection, in whole seconds.
    private var reconnectDelayMax: Int { Int(min(4, max(1, options.readTimeout))) }

    private func setNetworkOptions(_ dict: inout OpaquePointer?) {
        av_dict_set(&dict, "reconnect", "1", 0)
        av_dict_set(&dict, "reconnect_streamed", "1", 0)
        av_dict_set(&dict, "reconnect_on_network_error", "1", 0)
        av_dict_set(&dict, "reconnect_delay_max", String(reconnectDelayMax), 0)
        av_dict_set(&dict, "rw_timeout", String(Int64(options.readTimeout * 1_000_000)), 0)
        av_dict_set(&dict, "user_agent", options.userAgent, 0)
        // HLS: keep one connection for the segments; a live playlist that brings no new segment in 10 reloads has
        // ended (libavformat's default waits for 1000).
        av_dict_set(&dict, "http_persistent", "1", 0)
        av_dict_set(&dict, "m3u8_hold_counters", "10", 0)
    }

    private func close() {
        interrupt.observe(format: nil)
        if context != nil { avformat_close_input(&context) }
    }

    /// Set by ``needsDownload()``: skip probing, the input is reopened from a download.
    private var needsDownloadFlag = false

    /// An MP4/MOV whose samples come before `moov`, read from a server that cannot seek back to them.
    /// Call right after the header is read (the read position is then the end of `moov`).
    private func needsDownload() -> Bool {
        needsDownloadFlag = computeNeedsDownload()
        return needsDownloadFlag
    }

    private func computeNeedsDownload() -> Bool {
        guard let context, let pb = context.pointee.pb, pb.pointee.seekable & AVIO_SEEKABLE_NORMAL == 0,
            formatName.hasPrefix("mov")
        else { return false }
        let position = avio_tell(pb)
        for i in 0..<Int(context.pointee.nb_streams) {
            let s = avStream(i)
            if avformat_index_get_entries_count(s) > 0, let entry = avformat_index_get_entry(s, 0),
                entry.pointee.pos < position
            {
                return true
            }
        }
        return false
    }

    /// Throws when the container's index (MP4/MOV sample tables) refers to bytes beyond the end of the input.
    private func checkComplete() throws {
        guard let context, let pb = context.pointee.pb else { return }
        let size = avio_size(pb)
        guard size > 0 else { return }
        var end: Int64 = 0
        for i in 0..<Int(context.pointee.nb_streams) {
            let s = avStream(i)
            let n = avformat_index_get_entries_count(s)
            // Sample data is laid out in time order: the last entries reach furthest.
            for k in stride(from: n - 1, through: max(0, n - 64), by: -1) {
                if let e = avformat_index_get_entry(s, k) { end = max(end, e.pointee.pos + Int64(e.pointee.size)) }
            }
        }
        if end > size {
            throw LapseError(
                .invalidInput, displayName,
                "the file is truncated (\(size) bytes; its index refers to data up to byte \(end))")
        }
    }

    /// `url` opened for reading through libavformat's I/O layer, with the network options and the interrupt
    /// callback of the input (the caller closes it).
    private func openIO(_ url: String) throws -> UnsafeMutablePointer<AVIOContext>? {
        var io: UnsafeMutablePointer<AVIOContext>?
        var dict: OpaquePointer?
        defer { av_dict_free(&dict) }
        setNetworkOptions(&dict)
        var callback = AVIOInterruptCB()
        callback.callback = { opaque in
            guard let opaque else { return 0 }
            return Unmanaged<InterruptState>.fromOpaque(opaque).takeUnretainedValue().shouldStop ? 1 : 0
        }
        callback.opaque = Unmanaged.passUnretained(interrupt).toOpaque()
        let started = Date()
        let r = avio_open2(&io, url, AVIO_FLAG_READ, &callback, &dict)
        if r < 0 { throw error(r, doing: "cannot open", since: started) }
        interrupt.observe(io: io)
        return io
    }

    /// The first `limit` bytes of `url` at most (a playlist's text).
    private func readStart(of url: String, limit: Int) throws -> [UInt8] {
        var io = try openIO(url)
        defer {
            interrupt.observe(io: nil)
            avio_closep(&io)
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while bytes.count < limit {
            interrupt.progressed()
            let n = buffer.withUnsafeMutableBufferPointer { avio_read(io, $0.baseAddress, Int32($0.count)) }
            if n == lapse_averror_eof() || n == 0 { break }
            if n < 0 { throw error(n, doing: "cannot read", since: Date()) }
            bytes += buffer.prefix(Int(n))
        }
        return Array(bytes.prefix(limit))
    }

    /// An HLS master playlist (a `.m3u8` or `.m3u` URL) whose variants lead back to a master playlist — itself,
    /// or one of its variants being a master playlist again, which RFC 8216 §4.3.4.2 does not allow (a variant is
    /// a media playlist) — would have libavformat load it for ever (4085 times in one run): refused before it is
    /// opened. Each variant's playlist is read (its first 64 kB; 16 variants at most), as libavformat would.
    /// - Throws: ``LapseError`` `.invalidInput` naming the input.
    private func checkPlaylistLoops() throws {
        let url = location
        guard ["m3u8", "m3u"].contains(url.pathExtension.lowercased()) else { return }
        func variants(of text: [UInt8], at base: URL) -> [URL]? {
            let lines = String(decoding: text, as: UTF8.self).split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard lines.contains(where: { $0.hasPrefix("#EXT-X-STREAM-INF") }) else { return nil }
            var result: [URL] = []
            for (i, line) in lines.enumerated() where line.hasPrefix("#EXT-X-STREAM-INF") {
                if let uri = lines[(i + 1)...].first(where: { !$0.isEmpty && !$0.hasPrefix("#") }),
                    let variant = URL(string: uri, relativeTo: base)?.absoluteURL
                {
                    result.append(variant)
                }
            }
            return result
        }
        func same(_ a: URL, _ b: URL) -> Bool {
            a.absoluteString.split(separator: "#").first == b.absoluteString.split(separator: "#").first
        }
        guard let list = variants(of: try readStart(of: location.absoluteString, limit: 1 << 20), at: url) else {
            return
        }
        var distinct: [URL] = []
        for v in list where !distinct.contains(where: { same($0, v) }) { distinct.append(v) }
        for variant in distinct.prefix(16) where ["http", "https"].contains(variant.scheme?.lowercased() ?? "") {
            if same(variant, url) {
                throw LapseError(
                    .invalidInput, displayName, "the HLS master playlist names itself as a variant (it would loop)")
            }
            // A variant that cannot be read is left to libavformat, which reports it as it does.
            guard let text = try? readStart(of: variant.absoluteString, limit: 1 << 16) else { continue }
            if variants(of: text, at: variant) != nil {
                throw LapseError(
                    .invalidInput, displayName,
                    """
                    the HLS master playlist's variant \(Redaction.url(variant.absoluteString)) is a master playlist \
                    too (a variant must be a media playlist; it would loop)
                    """
                )
            }
        }
    }

    /// Copies the whole input to a temporary file through libavformat's I/O layer (same options).
    private func download() throws -> String {
        let dir = options.temporaryDirectory ?? URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
        let path = dir.appendingPathComponent("lapse-input-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).mp4").path
        var io = try openIO(location.absoluteString)
        defer {
            interrupt.observe(io: nil)
            avio_closep(&io)
        }
        guard let out = fopen(path, "wb") else {
            throw LapseError.posix(.output, path, "cannot create a temporary file")
        }
        var ok = false
        defer {
            fclose(out)
            if !ok { unlink(path) }
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let readStarted = Date()
            interrupt.progressed()
            let n = buffer.withUnsafeMutableBufferPointer { avio_read(io, $0.baseAddress, Int32($0.count)) }
            if n == lapse_averror_eof() || n == 0 {
                if Date().timeIntervalSince(readStarted) >= options.readTimeout * 0.9 {
                    throw LapseError(
                        .network, displayName, "timed out: no data for \(Self.seconds(options.readTimeout))")
                }
                break
            }
            if n < 0 { throw error(n, doing: "cannot download", since: readStarted) }
            let written = buffer.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, Int(n), out) }
            guard written == Int(n) else { throw LapseError(.output, path, "cannot write the temporary file") }
        }
        ok = true
        return path
    }

    private func describe() throws {
        guard let context else { return }
        var list: [Stream] = []
        for i in 0..<Int(context.pointee.nb_streams) {
            let s = avStream(i)
            let par = s.pointee.codecpar.pointee
            let kind: Stream.Kind
            switch par.codec_type {
            case AVMEDIA_TYPE_VIDEO: kind = .video
            case AVMEDIA_TYPE_AUDIO: kind = .audio
            case AVMEDIA_TYPE_SUBTITLE: kind = .subtitle
            case AVMEDIA_TYPE_DATA: kind = .data
            default: kind = .other
            }
            let tb = s.pointee.time_base
            let toSeconds = { (v: Int64) -> Double? in
                v == lapse_nopts_value ? nil : Double(v) * Double(tb.num) / Double(tb.den)
            }
            var rotation = 0.0
            var size: Int = 0
            if let matrix = av_stream_get_side_data(s, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36 {
                let r = matrix.withMemoryRebound(to: Int32.self, capacity: 9) { av_display_rotation_get($0) }
                if r.isFinite { rotation = r == 0 ? 0 : r }
            }
            let language = av_dict_get(s.pointee.metadata, "language", nil, 0).map { String(cString: $0.pointee.value) }
            let fr = s.pointee.avg_frame_rate
            list.append(
                Stream(
                    index: i, kind: kind,
                    codecName: avcodec_get_name(par.codec_id).map { String(cString: $0) } ?? "unknown",
                    timeBase: (Int(tb.num), Int(tb.den)),
                    startTime: toSeconds(s.pointee.start_time),
                    duration: s.pointee.duration > 0 ? toSeconds(s.pointee.duration) : nil,
                    width: kind == .video ? Int(par.width) : 0, height: kind == .video ? Int(par.height) : 0,
                    rotation: rotation,
                    frameRate: fr.num > 0 && fr.den > 0 ? Double(fr.num) / Double(fr.den) : nil,
                    sampleRate: kind == .audio ? Int(par.sample_rate) : 0,
                    channels: kind == .audio ? Int(par.ch_layout.nb_channels) : 0,
                    language: language.flatMap { $0.isEmpty || $0 == "und" ? nil : $0 },
                    isAttachedPicture: s.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0))
        }
        streams = list
        let v = av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        if v >= 0, !list[Int(v)].isAttachedPicture {
            videoStreamIndex = Int(v)
        } else {
            videoStreamIndex = list.first { $0.kind == .video && !$0.isAttachedPicture }?.index
        }
        let a = av_find_best_stream(context, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        audioStreamIndex = a >= 0 ? Int(a) : nil
        if options.requireVideo, videoStreamIndex == nil {
            let kinds = Set(list.map(\.kind.rawValue)).sorted().joined(separator: ", ")
            throw LapseError(.invalidInput, displayName, "no video stream" + (kinds.isEmpty ? "" : " (only \(kinds))"))
        }
    }

    /// Whether FFmpeg read the input with one of its still-image demuxers (`image2`, the `*_pipe` ones, GIF,
    /// APNG, ICO): a picture, or a sequence of them, rather than a video container.
    public var isStillImage: Bool { Self.isImageDemuxer(formatName) }

    /// Whether a demuxer name (`AVInputFormat.name`) is one of FFmpeg's image demuxers.
    static func isImageDemuxer(_ name: String) -> Bool {
        name == "image2" || name == "image2pipe" || name.hasSuffix("_pipe") || ["gif", "apng", "ico"].contains(name)
    }

    // MARK: - Errors

    /// A one-line error for FFmpeg code `code`, with the subject redacted and HTTP and network codes named; its
    /// cause the code itself (none when cancelled).
    private func error(_ code: Int32, doing: String, since started: Date) -> LapseError {
        var error = describe(code, doing: doing, since: started)
        if error.code != .cancelled { error.cause = .ffmpeg(code) }
        return error
    }

    private func describe(_ code: Int32, doing: String, since started: Date) -> LapseError {
        if interrupt.isCancelled { return LapseError(.cancelled, displayName, "cancelled") }
        if interrupt.deadlinePassed {
            return LapseError(.network, displayName, "timed out after \(Self.seconds(options.deadline ?? 0))")
        }
        if interrupt.stalled {
            return LapseError(.network, displayName, "timed out: no data for \(Self.seconds(options.readTimeout))")
        }
        switch code {
        case lapse_averror_http_not_found(): return LapseError(.notFound, displayName, "HTTP 404 not found")
        case lapse_averror_http_forbidden(): return LapseError(.denied, displayName, "HTTP 403 forbidden")
        case lapse_averror_http_unauthorized(): return LapseError(.denied, displayName, "HTTP 401 unauthorized")
        case lapse_averror_http_other_4xx(): return LapseError(.network, displayName, "HTTP client error (4xx)")
        case lapse_averror_http_server_error(): return LapseError(.network, displayName, "HTTP server error (5xx)")
        case lapse_averror(ECONNREFUSED):
            return LapseError(.network, displayName, "connection refused (is the server running and the URL right?)")
        case lapse_averror(ETIMEDOUT):
            return LapseError(.network, displayName, "timed out: no data for \(Self.seconds(options.readTimeout))")
        case lapse_averror(ENOENT) where !isNetwork: return LapseError(.invalidInput, displayName, "no such file")
        case lapse_averror(EACCES) where !isNetwork: return LapseError(.invalidInput, displayName, "permission denied")
        default: break
        }
        if isNetwork, Date().timeIntervalSince(started) >= options.readTimeout * 0.9 {
            return LapseError(.network, displayName, "timed out: no data for \(Self.seconds(options.readTimeout))")
        }
        if code == lapse_averror_invaliddata() || code == lapse_averror_eof() {
            if context == nil { return LapseError(.invalidInput, displayName, "not a media file (or a truncated one)") }
            return LapseError(.invalidInput, displayName, "\(doing): the file is truncated or corrupt")
        }
        let message = Redaction.message(ffmpegMessage(code), hiding: [location.openable])
        return LapseError(isNetwork ? .network : .invalidInput, displayName, "\(doing): \(message.lowercased())")
    }

    private static func seconds(_ s: Double) -> String {
        s == s.rounded() ? "\(Int(s)) s" : String(format: "%.1f s", s)
    }
}

/// State read by libavformat's interrupt callback: a cancel flag, a deadline and a stall limit (monotonic
/// nanoseconds).
///
/// A stall is ``stallBytes`` not read and no packet delivered within the limit during one call into libavformat (the
/// time between calls is the caller's), however the time passes: a server
/// that answers every reconnection with the same first bytes and then goes silent, one that trickles a byte at a
/// time, or an HLS playlist that names itself never advance, and are stopped there (libavformat's own `rw_timeout`
/// bounds one read only, and its reconnections start it again).
private final class InterruptState: Sendable {
    private let cancelled = Atomic<Bool>(false)
    private let deadline = Atomic<UInt64>(0)
    private let stallLimit = Atomic<UInt64>(0)
    private let lastProgress = Atomic<UInt64>(0)
    private let progressPosition = Atomic<Int64>(0)
    /// The `AVFormatContext` or `AVIOContext` whose read position shows progress.
    private let observed = Mutex(Observed())
    /// Sendable because only the reading thread dereferences them (``readPosition()``), while the context lives.
    private struct Observed: @unchecked Sendable {
        var format: UnsafeMutablePointer<AVFormatContext>?
        var io: UnsafeMutablePointer<AVIOContext>?
    }

    /// Bytes that count as progress.
    static let stallBytes: Int64 = 4096

    func cancel() { cancelled.store(true, ordering: .relaxed) }
    func arm(seconds: Double) {
        deadline.store(Self.now + UInt64(max(0, seconds) * 1e9), ordering: .relaxed)
    }
    /// Stops reading when no progress is made for `seconds`.
    func watchStalls(seconds: Double) {
        lastProgress.store(Self.now, ordering: .relaxed)
        stallLimit.store(UInt64(max(0.001, seconds) * 1e9), ordering: .relaxed)
    }
    /// Progress is read from this context's I/O position from now on.
    func observe(format: UnsafeMutablePointer<AVFormatContext>?) {
        observed.withLock { $0.format = format }
        progressPosition.store(0, ordering: .relaxed) // a new context reads from its own start
    }
    func observe(io: UnsafeMutablePointer<AVIOContext>?) {
        observed.withLock { $0.io = io }
        progressPosition.store(0, ordering: .relaxed)
    }
    /// A packet was delivered.
    func progressed() { lastProgress.store(Self.now, ordering: .relaxed) }

    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }
    var deadlinePassed: Bool {
        let d = deadline.load(ordering: .relaxed)
        return d != 0 && Self.now >= d
    }
    var stalled: Bool {
        let limit = stallLimit.load(ordering: .relaxed)
        return limit != 0 && Self.now >= lastProgress.load(ordering: .relaxed) + limit
    }
    /// Called by libavformat, on the thread that reads, from within its blocking calls.
    var shouldStop: Bool {
        if let position = readPosition(), position >= progressPosition.load(ordering: .relaxed) + Self.stallBytes {
            progressPosition.store(position, ordering: .relaxed)
            progressed()
        }
        return isCancelled || deadlinePassed || stalled
    }

    /// The observed context's read position (bytes), if any. Read on the reading thread only (the callback's).
    private func readPosition() -> Int64? {
        let now = observed.withLock { $0 }
        if let io = now.io { return io.pointee.pos }
        if let pb = now.format?.pointee.pb { return pb.pointee.pos }
        return nil
    }

    private static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }
}
