// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg
import Foundation
import LapseCore

/// A still-image file format that ``ImageWriter`` writes.
public enum ImageFileFormat: Sendable, Equatable {
    /// PNG, lossless (libavcodec's `png` encoder). Opaque images are written as 8-bit RGB, others as RGBA.
    case png
    /// Baseline JPEG/JFIF (libavcodec's `mjpeg` encoder), 4:2:0, BT.601 full range. `quality` is 1…100 (higher
    /// is better; mapped linearly onto the encoder's quantiser scale 31…2). Alpha is dropped.
    case jpeg(quality: Int)

    /// The default JPEG quality (maps to quantiser scale 3).
    public static let defaultJPEGQuality = 95

    /// The format for a file name's extension: `.png` → PNG; `.jpg`/`.jpeg` → JPEG at `jpegQuality`.
    /// `nil` for any other extension.
    public static func forFile(_ url: URL, jpegQuality: Int = defaultJPEGQuality) -> ImageFileFormat? {
        switch url.pathExtension.lowercased() {
        case "png": return .png
        case "jpg", "jpeg": return .jpeg(quality: jpegQuality)
        default: return nil
        }
    }
}

/// Writes ``PixelBuffer``s as PNG or JPEG files with libavcodec's encoders. The project's one image writer.
public enum ImageWriter {
    /// Throws unless the encoder of `format` takes a picture of `width`×`height` (it is opened at that size, with
    /// no picture: libavcodec refuses sizes whose rows' bytes times the rows reach 2³¹, 16384×16384 among them).
    /// Ask before rendering one, so a size the encoder refuses costs no memory.
    /// - Throws: ``LapseError`` `.usage` naming the size.
    public static func checkSize(width: Int, height: Int, format: ImageFileFormat) throws {
        guard width > 0, height > 0, width < 1 << 20, height < 1 << 20,
            (try? Encoder(width: width, height: height, format: format, opaque: true)) != nil
        else {
            throw LapseError.usage("`size` \(width)x\(height) is more than the image encoder takes")
        }
    }

    /// Encodes `image` and writes it to `url` through ``AtomicOutput`` (a temporary file renamed into place,
    /// so a failure never leaves a partial file at `url`).
    /// - Parameters:
    ///   - image: the pixels (RGBA, straight alpha).
    ///   - url: the target file.
    ///   - format: the file format; `nil` picks it from the extension (see
    /// ``ImageFileFormat/forFile(_:jpegQuality:)``).
    ///   - overwrite: replace an existing file; otherwise an existing file is an error.
    /// - Throws: ``LapseError`` `.usage` for an extension that is neither PNG nor JPEG (when `format` is nil)
    ///   or a quality outside 1…100; `.output` when the file exists (without `overwrite`), the directory is
    ///   missing or not writable; `.codec` when the encoder fails.
    public static func write(
        _ image: PixelBuffer, to url: URL, format: ImageFileFormat? = nil,
        overwrite: Bool
    ) throws {
        guard let format = format ?? ImageFileFormat.forFile(url) else {
            throw LapseError.usage("\(url.shown): the image file name must end in .png, .jpg or .jpeg")
        }
        let output = try AtomicOutput(url: url, overwrite: overwrite)
        do {
            let bytes = try encode(image, as: format)
            try output.write(Data(bytes))
            try output.commit()
        } catch {
            output.discard()
            throw error
        }
    }

    /// Encodes `image` as a complete PNG or JPEG file in memory.
    /// - Throws: ``LapseError`` `.usage` for a JPEG quality outside 1…100, `.codec` when the encoder fails.
    public static func encode(_ image: PixelBuffer, as format: ImageFileFormat) throws -> [UInt8] {
        let encoder = try Encoder(width: image.width, height: image.height, format: format, opaque: image.isOpaque)
        defer { withExtendedLifetime(encoder) {} } // its deinit frees the context used below
        let context = encoder.context
        let codecID = encoder.codecID
        let pixelFormat = encoder.pixelFormat
        let frame = try Frame()
        try frame.allocate(
            width: image.width, height: image.height,
            format: codecID == AV_CODEC_ID_MJPEG ? AV_PIX_FMT_YUV420P : pixelFormat)
        try fill(frame, from: image, format: pixelFormat)
        if codecID == AV_CODEC_ID_MJPEG {
            frame.pointer.pointee.format = AV_PIX_FMT_YUVJ420P.rawValue
            frame.pointer.pointee.color_range = AVCOL_RANGE_JPEG
            frame.pointer.pointee.quality = context.pointee.global_quality
        }
        frame.pointer.pointee.pts = 0

        var out: [UInt8] = []
        let packet = try Packet()
        func drain() throws {
            while true {
                let r = avcodec_receive_packet(context, packet.pointer)
                if r == lapse_averror_eagain() || r == lapse_averror_eof() { return }
                try ffCheck(r, nil, "image encoding failed")
                let p = packet.pointer.pointee
                out += UnsafeBufferPointer(start: p.data, count: Int(p.size))
                av_packet_unref(packet.pointer)
            }
        }
        try ffCheck(avcodec_send_frame(context, frame.pointer), nil, "image encoding failed")
        try drain()
        try ffCheck(avcodec_send_frame(context, nil), nil, "image encoding failed")
        try drain()
        guard !out.isEmpty else { throw LapseError(.codec, nil, "the image encoder produced nothing") }
        return out
    }

    /// Copies (PNG) or converts (JPEG: swscale, BT.601 full range as JFIF wants) the pixels into the frame.
    private static func fill(_ frame: Frame, from image: PixelBuffer, format: AVPixelFormat) throws {
        let w = image.width
        let h = image.height
        let planes = frame.planes
        let strides = frame.lineSizes
        switch format {
        case AV_PIX_FMT_RGBA, AV_PIX_FMT_RGB24:
            let rgb = format == AV_PIX_FMT_RGB24
            guard let dst = planes[0] else { throw LapseError(.codec, nil, "frame without data") }
            let stride = Int(strides[0])
            image.bytes.withUnsafeBufferPointer { src in
                for y in 0..<h {
                    let row = dst + y * stride
                    let s = src.baseAddress! + y * w * 4
                    if rgb {
                        for x in 0..<w {
                            row[x * 3] = s[x * 4]
                            row[x * 3 + 1] = s[x * 4 + 1]
                            row[x * 3 + 2] = s[x * 4 + 2]
                        }
                    } else {
                        row.update(from: s, count: w * 4)
                    }
                }
            }
        default:
            let scaler = Scaler()
            try image.bytes.withUnsafeBufferPointer { src in
                var srcPlanes: [UnsafePointer<UInt8>?] = [src.baseAddress!, nil, nil, nil]
                var srcStrides: [Int32] = [Int32(w * 4), 0, 0, 0]
                var dstPlanes = Array(planes.prefix(4))
                var dstStrides = Array(strides.prefix(4))
                try scaler.scale(
                    src: &srcPlanes, srcStrides: &srcStrides, srcWidth: w, srcHeight: h,
                    srcFormat: AV_PIX_FMT_RGBA,
                    dst: &dstPlanes, dstStrides: &dstStrides, dstWidth: w, dstHeight: h,
                    dstFormat: AV_PIX_FMT_YUV420P, dstMatrix: SWS_CS_ITU601, dstFullRange: true)
            }
        }
    }

    /// An opened PNG or JPEG encoder of one size.
    private final class Encoder {
        let context: UnsafeMutablePointer<AVCodecContext>
        let codecID: AVCodecID
        let pixelFormat: AVPixelFormat

        init(width: Int, height: Int, format: ImageFileFormat, opaque: Bool) throws {
            FFmpegLog.quiet()
            var qscale: Int32 = 0
            switch format {
            case .png:
                codecID = AV_CODEC_ID_PNG
                pixelFormat = opaque ? AV_PIX_FMT_RGB24 : AV_PIX_FMT_RGBA
            case .jpeg(let quality):
                guard (1...100).contains(quality) else {
                    throw LapseError.usage("JPEG quality must be 1…100, not \(quality)")
                }
                codecID = AV_CODEC_ID_MJPEG
                pixelFormat = AV_PIX_FMT_YUVJ420P
                qscale = Int32((2 + Double(100 - quality) * 29 / 99).rounded())
            }
            guard let codec = avcodec_find_encoder(codecID) else {
                throw LapseError(
                    .codec, nil, "the \(codecID == AV_CODEC_ID_PNG ? "png" : "mjpeg") encoder is not available")
            }
            guard let context = avcodec_alloc_context3(codec) else { throw LapseError(.codec, nil, "out of memory") }
            self.context = context
            context.pointee.width = Int32(width)
            context.pointee.height = Int32(height)
            context.pointee.pix_fmt = pixelFormat
            context.pointee.time_base = AVRational(num: 1, den: 25)
            context.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
            if codecID == AV_CODEC_ID_MJPEG {
                context.pointee.color_range = AVCOL_RANGE_JPEG
                context.pointee.colorspace = AVCOL_SPC_BT470BG
                context.pointee.flags |= AV_CODEC_FLAG_QSCALE
                context.pointee.global_quality = FF_QP2LAMBDA * qscale
            }
            try ffCheck(avcodec_open2(context, codec, nil), nil, "cannot open the image encoder")
        }

        deinit {
            var c: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&c)
        }
    }
}
