// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg
import LapseCore
import Synchronization

/// FFmpeg's message for an error code, e.g. "Invalid data found when processing input".
func ffmpegMessage(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    lapse_av_strerror(code, &buffer, buffer.count)
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}

/// Throws a ``LapseError`` when an FFmpeg call returned a negative code; returns the code otherwise.
/// - Parameters:
///   - code: the call's return value.
///   - subject: what the call was about (a path, a redacted URL).
///   - doing: what was being done, e.g. "cannot open the encoder".
///   - errorCode: the error's kind (default `.codec`).
/// - Returns: `code`, when it is not negative.
/// - Throws: ``LapseError`` of `errorCode` naming `subject` (`.cancelled` for `AVERROR_EXIT`).
@discardableResult
func ffCheck(_ code: Int32, _ subject: String?, _ doing: String, as errorCode: LapseError.Code = .codec) throws -> Int32
{
    if code < 0 {
        if code == lapse_averror_exit() { throw LapseError(.cancelled, subject, "cancelled") }
        throw LapseError(errorCode, subject, "\(doing): \(ffmpegMessage(code))", cause: .ffmpeg(code))
    }
    return code
}

/// Silences FFmpeg's own logging, once per process, unless a level was chosen first (``level(named:)``, which
/// `lapse` calls with `LAPSE_FFMPEG_LOG`): Lapse reports failures itself, as one line each.
enum FFmpegLog {
    static let levels = [
        "quiet": AV_LOG_QUIET, "error": AV_LOG_ERROR, "warning": AV_LOG_WARNING,
        "info": AV_LOG_INFO, "verbose": AV_LOG_VERBOSE, "debug": AV_LOG_DEBUG
    ]
    private static let chosen = Mutex<Int32?>(nil)
    private static let once: Void = { av_log_set_level(chosen.withLock { $0 } ?? AV_LOG_QUIET) }()
    static func quiet() { _ = once }
    /// Chooses the level by name (`quiet`, `error`, `warning`, `info`, `verbose`, `debug`); false for another.
    static func level(named name: String) -> Bool {
        guard let level = levels[name] else { return false }
        chosen.withLock { $0 = level }
        av_log_set_level(level)
        return true
    }
    /// Sets FFmpeg's log level (`AV_LOG_QUIET`, `AV_LOG_ERROR`, `AV_LOG_WARNING`, …).
    static func setLevel(_ level: Int32) { av_log_set_level(level) }
}

/// Owns an `AVFrame`.
final class Frame: @unchecked Sendable {
    // @unchecked: a frame is handed from one thread to the next, never used by two at once.
    let pointer: UnsafeMutablePointer<AVFrame>
    /// - Throws: ``LapseError`` `.codec` when there is no memory for it.
    init() throws {
        guard let f = av_frame_alloc() else { throw LapseError(.codec, nil, "av_frame_alloc: out of memory") }
        pointer = f
    }
    deinit {
        var p: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&p)
    }
    /// Allocates buffers for `width × height` in `format` (32-byte aligned).
    func allocate(width: Int, height: Int, format: AVPixelFormat) throws {
        av_frame_unref(pointer)
        pointer.pointee.width = Int32(width)
        pointer.pointee.height = Int32(height)
        pointer.pointee.format = format.rawValue
        try ffCheck(av_frame_get_buffer(pointer, 0), nil, "cannot allocate a \(width)x\(height) frame")
    }
    var width: Int { Int(pointer.pointee.width) }
    var height: Int { Int(pointer.pointee.height) }
    var format: AVPixelFormat { AVPixelFormat(rawValue: pointer.pointee.format) }

    /// Plane pointers and line sizes as arrays (AVFrame keeps them in 8-element tuples).
    var planes: [UnsafeMutablePointer<UInt8>?] {
        withUnsafeBytes(of: pointer.pointee.data) { Array($0.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)) }
    }
    var lineSizes: [Int32] {
        withUnsafeBytes(of: pointer.pointee.linesize) { Array($0.bindMemory(to: Int32.self)) }
    }
}

/// Owns an `AVPacket`.
final class Packet: @unchecked Sendable {
    // @unchecked: used by one thread at a time.
    let pointer: UnsafeMutablePointer<AVPacket>
    /// - Throws: ``LapseError`` `.codec` when there is no memory for it.
    init() throws {
        guard let p = av_packet_alloc() else { throw LapseError(.codec, nil, "av_packet_alloc: out of memory") }
        pointer = p
    }
    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&p)
    }
}

/// Owns an `SwsContext` (cached: reused while the conversion stays the same).
final class Scaler: @unchecked Sendable {
    // @unchecked: used by one thread at a time.
    private var context: OpaquePointer?
    private var key: [Int32] = []
    init() {}
    deinit { sws_freeContext(context) }

    /// Scales and converts `src` (its own format and colour space) into `dst`.
    /// - Parameters:
    ///   - src: the source's planes.
    ///   - srcStrides: their strides in bytes.
    ///   - srcWidth: the source's width in pixels.
    ///   - srcHeight: its height in pixels.
    ///   - srcFormat: its pixel format.
    ///   - srcMatrix: the source's YUV matrix (`SWS_CS_ITU709`, `SWS_CS_ITU601`…); ignored for RGB sources.
    ///   - srcFullRange: whether the source is full range; ignored for RGB sources.
    ///   - dst: the destination's planes.
    ///   - dstStrides: their strides in bytes.
    ///   - dstWidth: the destination's width in pixels.
    ///   - dstHeight: its height in pixels.
    ///   - dstFormat: its pixel format.
    ///   - dstMatrix: the destination's YUV matrix.
    ///   - dstFullRange: whether the destination is full range.
    ///   - flags: `SWS_BICUBIC` by default.
    ///   - accurate: add `SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP` (exact rounding, chroma
    ///     interpolated at full resolution). Off, swscale may use its fast special-case converters (several times
    ///     faster for YUV → RGBA at the same size, chroma slightly softer).
    /// - Throws: ``LapseError`` `.codec` when swscale has no converter for the formats or fails.
    func scale(
        src: UnsafePointer<UnsafePointer<UInt8>?>, srcStrides: UnsafePointer<Int32>, srcWidth: Int, srcHeight: Int,
        srcFormat: AVPixelFormat, srcMatrix: Int32 = SWS_CS_ITU709, srcFullRange: Bool = true,
        dst: UnsafePointer<UnsafeMutablePointer<UInt8>?>, dstStrides: UnsafePointer<Int32>, dstWidth: Int,
        dstHeight: Int,
        dstFormat: AVPixelFormat, dstMatrix: Int32 = SWS_CS_ITU709, dstFullRange: Bool = false,
        flags: Int32 = SWS_BICUBIC, accurate: Bool = true
    ) throws {
        let k: [Int32] = [
            Int32(srcWidth), Int32(srcHeight), srcFormat.rawValue, srcMatrix, srcFullRange ? 1 : 0,
            Int32(dstWidth), Int32(dstHeight), dstFormat.rawValue, dstMatrix, dstFullRange ? 1 : 0, flags,
            accurate ? 1 : 0
        ]
        if k != key || context == nil {
            sws_freeContext(context)
            context = sws_getContext(
                Int32(srcWidth), Int32(srcHeight), srcFormat, Int32(dstWidth), Int32(dstHeight),
                dstFormat, accurate ? flags | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP : flags,
                nil, nil, nil)
            guard let context else {
                throw LapseError(
                    .codec, nil,
                    """
                    cannot convert \(Self.name(srcFormat)) \(srcWidth)x\(srcHeight) to \(Self.name(dstFormat)) \
                    \(dstWidth)x\(dstHeight)
                    """
                )
            }
            // sws_setColorspaceDetails: table for the YUV side(s), range flags, brightness/contrast/saturation.
            let srcTable = sws_getCoefficients(srcMatrix)
            let dstTable = sws_getCoefficients(dstMatrix)
            sws_setColorspaceDetails(
                context, srcTable, srcFullRange ? 1 : 0, dstTable, dstFullRange ? 1 : 0,
                0, 1 << 16, 1 << 16)
            key = k
        }
        let h = sws_scale(context, src, srcStrides, 0, Int32(srcHeight), dst, dstStrides)
        if h < 0 { try ffCheck(h, nil, "cannot convert the picture") }
    }

    static func name(_ format: AVPixelFormat) -> String {
        av_get_pix_fmt_name(format).map { String(cString: $0) } ?? "format \(format.rawValue)"
    }
}
