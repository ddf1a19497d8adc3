// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg
import LapseCore

/// An opened libavcodec decoder and its send/receive loop — the one loop every decoder of Lapse runs (video
/// frames, audio, still images, the accurate clip's re-encode), so that EAGAIN, draining and errors are handled
/// alike everywhere.
///
/// The loop is libavcodec's documented one ("send/receive encoding and decoding API overview", FFmpeg's
/// `avcodec.h`): receive a frame; on EAGAIN send the next packet (on EAGAIN from the send, receive first and send
/// the same packet again: with frame threads this depends on timing, and dropping the packet would lose a frame);
/// at the end of the input send a null packet to drain; EOF from the receive ends the stream.
///
/// The codec context is owned here and never handed out.
final class PacketDecoder {
    private let context: UnsafeMutablePointer<AVCodecContext>
    /// The packet being sent (the caller's `read` fills it); kept while the decoder refuses it with EAGAIN.
    private let packet: Packet
    private var packetPending = false
    private var inputEnded = false
    /// Whether the decoder has given its last frame (EOF after the input's end).
    private(set) var drained = false

    /// A packet or a frame the decoder refused (codes other than EAGAIN and EOF).
    enum Failure {
        /// `avcodec_send_packet` failed; `pts` is the packet's (in the stream's time base).
        case send(code: Int32, pts: Int64)
        /// `avcodec_receive_frame` failed.
        case receive(code: Int32)

        var code: Int32 {
            switch self {
            case .send(let code, _), .receive(let code): return code
            }
        }
    }

    /// Opens a decoder for a stream.
    /// - Parameters:
    ///   - parameters: the stream's codec parameters.
    ///   - codec: the decoder to use (default: FFmpeg's for the parameters' codec id).
    ///   - name: what the errors name (a path, a redacted URL).
    ///   - what: what is decoded, for the errors ("video", "audio", "image").
    ///   - errorCode: the kind of error thrown when no decoder opens (`.invalidInput` for a file's stream).
    ///   - configure: sets fields of the context before it is opened (threads, `lowres`, `max_pixels`,
    ///     error recognition); it is given the codec too.
    /// - Throws: ``LapseError`` of `errorCode` naming `name` when there is no decoder or it cannot be opened.
    init(
        parameters: UnsafePointer<AVCodecParameters>, codec: UnsafePointer<AVCodec>? = nil, name: String,
        what: String, errorCode: LapseError.Code = .invalidInput,
        configure: (UnsafeMutablePointer<AVCodecContext>, UnsafePointer<AVCodec>) -> Void = { _, _ in }
    ) throws {
        packet = try Packet()
        guard let codec = codec ?? avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw LapseError(errorCode, name, "no decoder for this \(what) format")
        }
        guard let context = avcodec_alloc_context3(codec) else { throw LapseError(.codec, name, "out of memory") }
        self.context = context
        // From here deinit frees the context on any throw.
        try ffCheck(
            avcodec_parameters_to_context(context, parameters), name, "cannot set up the \(what) decoder", as: errorCode
        )
        configure(context, codec)
        try ffCheck(avcodec_open2(context, codec, nil), name, "cannot open the \(what) decoder", as: errorCode)
    }

    deinit {
        var c: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&c)
    }

    /// Decodes the next frame into `frame`.
    /// - Parameters:
    ///   - frame: receives the frame (its previous content is released by libavcodec).
    ///   - read: fills the packet it is given with the stream's next packet; false at the end of the input.
    ///   - failed: called for each refused packet or frame; it throws to stop, or returns and the loop goes on
    ///     (the refused packet is dropped).
    /// - Returns: false once the decoder is drained (every frame given).
    /// - Throws: what `read` or `failed` throw.
    func receive(into frame: Frame, read: (Packet) throws -> Bool, failed: (Failure) throws -> Void) throws -> Bool {
        while !drained {
            let r = avcodec_receive_frame(context, frame.pointer)
            if r >= 0 { return true }
            if r == lapse_averror_eof() {
                drained = true
                break
            }
            if r != lapse_averror_eagain() {
                try failed(.receive(code: r))
                continue
            }
            if inputEnded {
                drained = true
                break
            } // a decoder that wants input after the flush: nothing more
            if !packetPending {
                guard try read(packet) else {
                    inputEnded = true
                    avcodec_send_packet(context, nil)
                    continue
                }
            }
            let s = avcodec_send_packet(context, packet.pointer)
            packetPending = s == lapse_averror_eagain()
            if packetPending { continue }
            let pts = packet.pointer.pointee.pts
            av_packet_unref(packet.pointer)
            if s < 0 { try failed(.send(code: s, pts: pts)) }
        }
        return false
    }

    /// Forgets every frame and packet in flight (after a seek): the next ``receive(into:read:failed:)`` starts
    /// from the packets read next.
    func flush() {
        avcodec_flush_buffers(context)
        if packetPending { av_packet_unref(packet.pointer) }
        packetPending = false
        inputEnded = false
        drained = false
    }

    /// Whether the decoder skips frames no other frame is predicted from (`AVDISCARD_NONREF`).
    var skipsNonReferenceFrames: Bool {
        get { context.pointee.skip_frame == AVDISCARD_NONREF }
        set { context.pointee.skip_frame = newValue ? AVDISCARD_NONREF : AVDISCARD_DEFAULT }
    }

    /// Whether the decoder leaves out the in-loop deblocking filter of every frame (`skip_loop_filter =
    /// AVDISCARD_ALL`): faster (H.264: about a fifth of the decode), and the pictures differ from the stream's by
    /// block-edge errors that accumulate to the next keyframe. For pictures that are only analysed.
    var skipsLoopFilter: Bool {
        get { context.pointee.skip_loop_filter == AVDISCARD_ALL }
        set { context.pointee.skip_loop_filter = newValue ? AVDISCARD_ALL : AVDISCARD_DEFAULT }
    }

    /// The pixel format the decoder announces before decoding (`AV_PIX_FMT_NONE` when it does not know yet).
    var pixelFormat: AVPixelFormat { context.pointee.pix_fmt }

    /// Audio: samples per second, sample format and channel layout as decoded.
    var sampleRate: Int32 { context.pointee.sample_rate }
    var sampleFormat: AVSampleFormat { context.pointee.sample_fmt }
    var channelLayout: AVChannelLayout { context.pointee.ch_layout }
}
