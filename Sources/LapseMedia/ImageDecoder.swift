// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg
import Foundation
import LapseCore

/// A still image decoded by FFmpeg (JPEG incl. progressive and CMYK, PNG of every bit depth and colour type,
/// WebP, BMP, TIFF…), kept in its decoded pixel format until it is converted to the size it is needed at.
///
/// EXIF orientation is read from the file (JPEG APP1, and what FFmpeg exports as frame metadata) and applied
/// when pixels are produced, so ``displayWidth`` × ``displayHeight`` is the upright size.
public final class DecodedImage: @unchecked Sendable {
    // @unchecked: immutable after init; the frame is only read.
    private let frame: Frame
    /// What the image is called in errors: the file's path as given, or the name given with its data.
    public let name: String
    /// When the file's name says another kind of image than its content (`"WebP data named as JPEG"`), for the
    /// caller to warn: the picture is decoded as what it is.
    public let misnamed: String?
    /// The EXIF orientation found in the file (`.up` when there is none).
    public let orientation: ImageOrientation
    /// Size as stored in the file, in pixels.
    public var storedWidth: Int { frame.width }
    /// Height as stored in the file, in pixels.
    public var storedHeight: Int { frame.height }
    /// Size when displayed upright (orientation applied), in pixels.
    public var displayWidth: Int { orientation.swapsAxes ? frame.height : frame.width }
    /// Height displayed upright (orientation applied), in pixels.
    public var displayHeight: Int { orientation.swapsAxes ? frame.width : frame.height }
    /// The stored size before a reduced decode (``init(url:reduction:pixelLimit:)``), nil when decoded whole.
    private let fullSize: (width: Int, height: Int)?
    /// Size when displayed upright at full resolution, whatever the size decoded: what an image is fitted by,
    /// so a reduced decode (rounded up to whole pixels) fits exactly as the full one would.
    public var fullDisplayWidth: Int {
        guard let fullSize else { return displayWidth }
        return orientation.swapsAxes ? fullSize.height : fullSize.width
    }
    /// The full image's displayed height, pixels (even when it was decoded at a reduced size).
    public var fullDisplayHeight: Int {
        guard let fullSize else { return displayHeight }
        return orientation.swapsAxes ? fullSize.width : fullSize.height
    }
    /// Whether the pixel format carries alpha (or palette transparency).
    public let hasAlpha: Bool

    /// The most pixels a decoded image may have unless a caller allows more: 16384 × 8192 (134 megapixels,
    /// Street View's largest panorama; 0.5–1 GB decoded). FFmpeg itself refuses pictures of more than about
    /// 268 megapixels (`av_image_check_size2`).
    public static let defaultPixelLimit = 16384 * 8192

    /// Decodes the first picture in the file at `url`, at reduced size where the decoder can (JPEG: libavcodec's
    /// `lowres`, the picture ½, ¼ or ⅛ as wide for `reduction` 1, 2 or 3, far faster than decoding it whole);
    /// other formats decode at full size. ``storedWidth`` and ``storedHeight`` are the sizes decoded.
    /// - Parameters:
    ///   - url: the image file.
    ///   - reduction: 0…3 (default 0: full size).
    ///   - pixelLimit: the most pixels the decoded picture may have (default ``defaultPixelLimit``); the size is
    ///     read from the file's header first (JPEG, PNG, GIF, WebP, BMP, TIFF), so a larger image is refused before any
    ///     pixel memory is allocated.
    /// - Throws: ``LapseError`` `.invalidInput` naming the path: missing file, unreadable file, not an image,
    ///   corrupt or truncated data, more pixels than `pixelLimit`.
    public convenience init(url: URL, reduction: Int = 0, pixelLimit: Int = DecodedImage.defaultPixelLimit) throws {
        let path = url.filePath
        try Self.checkReadable(path)
        let content = try Self.checkSignature(path)
        try self.init(
            name: path, data: nil, header: ImageHeader.read(path: path), reduction: reduction, pixelLimit: pixelLimit,
            content: content)
    }

    /// Decodes the picture in the file at `url` for showing at a smaller size: a JPEG is decoded at the smallest
    /// of ½, ¼ and ⅛ size that is still at least as large as `target` says the picture will be shown (so an image
    /// much larger than the output costs a fraction of its full decode in time and memory); other formats decode
    /// whole.
    /// - Parameters:
    ///   - url: the image file.
    ///   - pixelLimit: as for ``init(url:reduction:pixelLimit:)``, on the pixels decoded.
    ///   - target: the size the picture will be scaled to, given its displayed (upright) size at full resolution.
    /// - Throws: as ``init(url:reduction:pixelLimit:)``.
    public convenience init(
        url: URL, pixelLimit: Int = DecodedImage.defaultPixelLimit,
        shownAt target: (_ displayWidth: Int, _ displayHeight: Int) -> (width: Int, height: Int)
    ) throws {
        let path = url.filePath
        try Self.checkReadable(path)
        let content = try Self.checkSignature(path)
        let header = ImageHeader.read(path: path)
        var reduction = 0
        if let header, header.reducible {
            let swaps = Self.jpegOrientation(path: path)?.swapsAxes ?? false
            let (w, h) = swaps ? (header.height, header.width) : (header.width, header.height)
            let (tw, th) = target(w, h)
            reduction = Self.reduction(width: w, height: h, atLeast: tw, th)
        }
        try self.init(
            name: path, data: nil, header: header, reduction: reduction, pixelLimit: pixelLimit, content: content)
    }

    /// The largest reduction (0…3) that keeps a `width × height` picture at least `targetWidth × targetHeight`
    /// (libavcodec rounds a reduced size up: ⌈size / 2ⁿ⌉).
    static func reduction(width: Int, height: Int, atLeast targetWidth: Int, _ targetHeight: Int) -> Int {
        var n = 0
        while n < 3, (width + (2 << n) - 1) >> (n + 1) >= targetWidth,
            (height + (2 << n) - 1) >> (n + 1) >= targetHeight
        { n += 1 }
        return n
    }

    /// Decodes the first picture in `data` (an encoded JPEG, PNG, WebP… held in memory, e.g. a downloaded tile).
    /// - Parameters:
    ///   - data: the encoded image.
    ///   - name: what to call it in error messages (a URL without its query, a tile name).
    ///   - reduction: decode at ½ⁿ of the size where the decoder can (see ``init(url:reduction:pixelLimit:)``),
    ///     default 0.
    ///   - pixelLimit: the most pixels the decoded picture may have (default ``defaultPixelLimit``).
    /// - Throws: ``LapseError`` `.invalidInput` naming `name` when the data is not a decodable image or is too large.
    public convenience init(
        data: [UInt8], name: String, reduction: Int = 0, pixelLimit: Int = DecodedImage.defaultPixelLimit
    ) throws {
        guard !data.isEmpty else { throw LapseError(.invalidInput, name, "empty image data") }
        try self.init(
            name: name, data: data, header: ImageHeader.read(data: data), reduction: reduction, pixelLimit: pixelLimit)
    }

    /// A WebP file with the animation flag of its VP8X header set (WebP container spec: "RIFF", size, "WEBP",
    /// "VP8X", size, then a flags byte whose bit 1 is animation).
    static func isAnimatedWebP(path: String, data: [UInt8]?) -> Bool {
        var head = data.map { Array($0.prefix(21)) } ?? []
        if data == nil, let handle = FileHandle(forReadingAtPath: path) {
            head = [UInt8]((try? handle.read(upToCount: 21)) ?? Data())
            try? handle.close()
        }
        guard head.count == 21 else { return false }
        return head[0..<4] == [0x52, 0x49, 0x46, 0x46] && head[8..<12] == [0x57, 0x45, 0x42, 0x50]
            && head[12..<16] == [0x56, 0x50, 0x38, 0x58] && head[20] & 0x02 != 0
    }

    private init(
        name path: String, data: [UInt8]?, header: ImageHeader?, reduction: Int, pixelLimit: Int,
        content: (kind: String, demuxer: String, named: String?)? = nil
    ) throws {
        FFmpegLog.quiet()
        self.name = path
        misnamed = content?.named.map { "\(content!.kind) data named as \($0)" }
        // The size the decoder will give (libavcodec's mjpeg decoder reduces by up to ⅛), checked before decoding.
        let reduced = header?.reducible == true ? max(0, min(reduction, 3)) : 0
        /// `width × height` as decoded is more than the limit (a product that overflows is more than any).
        func isTooLarge(_ width: Int, _ height: Int) -> Bool {
            let (product, overflow) = width.multipliedReportingOverflow(by: height)
            return overflow || product > pixelLimit
        }
        func tooLarge(_ width: Int, _ height: Int, decoded: (Int, Int)) -> LapseError {
            let (product, overflow) = decoded.0.multipliedReportingOverflow(by: decoded.1)
            return LapseError(
                .invalidInput, path,
                "\(width)x\(height) is " + (overflow ? "more pixels than can be counted" : Self.pixels(product))
                    + (reduced > 0 ? " at 1/\(1 << reduced) size" : "")
                    + ", more than the limit of \(Self.pixels(pixelLimit)) for a decoded image")
        }
        if let header {
            let w = (header.width + (1 << reduced) - 1) >> reduced
            let h = (header.height + (1 << reduced) - 1) >> reduced
            if isTooLarge(w, h) { throw tooLarge(header.width, header.height, decoded: (w, h)) }
        }
        // The size shown before any reduction: the header's when the decode is reduced, else the decoded one.
        fullSize = reduced > 0 ? header.map { ($0.width, $0.height) } : nil
        var format: UnsafeMutablePointer<AVFormatContext>? = avformat_alloc_context()
        let memory = data.map { MemoryReader($0) }
        if let memory {
            format?.pointee.pb = memory.context
            format?.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        }
        // In memory there is no file name to guess from, and probing runs every demuxer over the bytes (the
        // larger part of decoding a 512x512 tile): name the demuxer when the signature is a JPEG's or a PNG's.
        // A file's demuxer is chosen by its content too: libavformat goes by the extension first (a WebP named .jpg
        // would be read as JPEG and refused).
        var demuxer: UnsafePointer<AVInputFormat>? = content.flatMap { av_find_input_format($0.demuxer) }
        if let data {
            if data.starts(with: [0xFF, 0xD8, 0xFF]) {
                demuxer = av_find_input_format("jpeg_pipe")
            } else if data.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
                demuxer = av_find_input_format("png_pipe")
            }
        }
        let openCode = avformat_open_input(&format, data == nil ? path : "", demuxer, nil)
        guard openCode >= 0, let format else {
            throw LapseError(
                .invalidInput, path, "not an image FFmpeg can read (\(ffmpegMessage(openCode)))",
                cause: .ffmpeg(openCode))
        }
        defer {
            var f: UnsafeMutablePointer<AVFormatContext>? = format
            avformat_close_input(&f)
            withExtendedLifetime(memory) {}
        }
        // Text FFmpeg renders as a terminal would (a .txt file through the tty demuxer and the ANSI decoder; BIN,
        // XBIN, ADF, IDF art): a picture of the text, which no one means by an image.
        let demuxerName = String(cString: format.pointee.iformat.pointee.name)
        if ["tty", "bin", "xbin", "adf", "idf"].contains(demuxerName) {
            throw LapseError(.invalidInput, path, "text (\(demuxerName)), not an image")
        }
        // A video read as an image would give its first frame, silently: refuse one of more than a frame.
        if !MediaInput.isImageDemuxer(demuxerName) {
            let frames =
                (0..<Int(format.pointee.nb_streams)).map { format.pointee.streams[$0]!.pointee.nb_frames }.max() ?? 0
            if frames > 1 || format.pointee.duration > Int64(AV_TIME_BASE) / 10 {
                let seconds =
                    format.pointee.duration > 0
                    ? String(format: ", %.2f s", Double(format.pointee.duration) / Double(AV_TIME_BASE)) : ""
                throw LapseError(.invalidInput, path, "a video (\(demuxerName)\(seconds)), not a still image")
            }
        }
        // Image demuxers (image2, *_pipe) know the codec from the header: skip the probing decode that
        // avformat_find_stream_info would do (it decodes the picture once more just to learn its pixel format).
        let known =
            format.pointee.nb_streams == 1
            && format.pointee.streams[0]!.pointee.codecpar.pointee.codec_id != AV_CODEC_ID_NONE
        if !known {
            try ffCheck(avformat_find_stream_info(format, nil), path, "not a readable image", as: .invalidInput)
        }
        let streamIndex = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard streamIndex >= 0, let stream = format.pointee.streams[Int(streamIndex)] else {
            throw LapseError(.invalidInput, path, "no picture in the file")
        }
        let decoder = try PacketDecoder(parameters: stream.pointee.codecpar, name: path, what: "image") {
            context, codec in
            context.pointee.err_recognition = AV_EF_EXPLODE | AV_EF_BITSTREAM | AV_EF_BUFFER
            context.pointee.flags2 |= AV_CODEC_FLAG2_SHOW_ALL
            context.pointee.lowres = Int32(max(0, min(reduction, Int(codec.pointee.max_lowres))))
            // A JPEG's planes come from memory kept between pictures (a 360° photo's are tens of megabytes).
            if codec.pointee.id == AV_CODEC_ID_MJPEG { PictureMemory.install(on: context) }
            // For a format whose header was not read: libavcodec refuses a picture of more than max_pixels before
            // allocating it, counting its full size (before lowres) with its buffers' padding, so twice the
            // limit; the decoded size is checked exactly below.
            let lowres = Int(context.pointee.lowres)
            let shift = 2 * lowres + 1
            context.pointee.max_pixels = Int64(pixelLimit) > Int64.max >> shift ? Int64.max : Int64(pixelLimit) << shift
        }
        // The first picture; a refused packet or frame ends the decode (the image is corrupt).
        func undecodable(_ code: Int32) -> LapseError {
            if Self.isAnimatedWebP(path: path, data: data) {
                return LapseError(
                    .invalidInput, path,
                    "animated WebP, which FFmpeg 5.1 cannot decode (convert it to a video or to PNGs first)")
            }
            var why = code < 0 ? ffmpegMessage(code) : "no picture could be decoded"
            // What libavcodec answers for a picture of more than max_pixels is one of these (the size unknown here).
            if header == nil, code == lapse_averror(EINVAL) || code == lapse_averror_invaliddata() {
                why += ", or more than \(Self.pixels(2 * pixelLimit))"
            }
            return LapseError(
                .invalidInput, path, "corrupt or truncated image (\(why))", cause: code < 0 ? .ffmpeg(code) : nil)
        }
        let frame = try Frame()
        var lastError: Int32 = 0
        let got = try decoder.receive(
            into: frame,
            read: { packet in
                while true {
                    let r = av_read_frame(format, packet.pointer)
                    if r < 0 {
                        if r != lapse_averror_eof() { lastError = r }
                        return false
                    }
                    if packet.pointer.pointee.stream_index == streamIndex { return true }
                    av_packet_unref(packet.pointer)
                }
            }, failed: { throw undecodable($0.code) })
        guard got, frame.width > 0, frame.height > 0 else { throw undecodable(lastError) }
        if isTooLarge(frame.width, frame.height) {
            throw tooLarge(frame.width, frame.height, decoded: (frame.width, frame.height))
        }
        if (frame.pointer.pointee.decode_error_flags != 0) || (frame.pointer.pointee.flags & AV_FRAME_FLAG_CORRUPT) != 0
        {
            throw LapseError(.invalidInput, path, "corrupt or truncated image")
        }
        self.frame = frame
        let descriptor = av_pix_fmt_desc_get(frame.format)
        let formatHasAlpha = descriptor.map { ($0.pointee.flags & UInt64(AV_PIX_FMT_FLAG_ALPHA)) != 0 } ?? false
        hasAlpha = formatHasAlpha || frame.format == AV_PIX_FMT_PAL8
        orientation =
            Self.orientation(of: frame.pointer)
            ?? (data.map { ExifTags(head: Array($0.prefix(65536)))?.orientation }
                ?? Self.jpegOrientation(path: path))
            ?? .up
    }

    /// The decoder's pixel format, as FFmpeg names it (`yuvj420p`), for tests.
    var decodedFormatName: String { av_get_pix_fmt_name(frame.format).map { String(cString: $0) } ?? "?" }

    /// The decoded planes as the decoder gave them (stored orientation, its pixel format), each row by row without
    /// the line padding: for tests that compare the decode itself with another decoder's.
    func decodedPlanes() -> [[UInt8]] {
        guard let descriptor = av_pix_fmt_desc_get(frame.format) else { return [] }
        var lineBytes = [Int32](repeating: 0, count: 4)
        _ = lineBytes.withUnsafeMutableBufferPointer {
            av_image_fill_linesizes($0.baseAddress, frame.format, Int32(frame.width))
        }
        let chromaHeight =
            (frame.height + (1 << descriptor.pointee.log2_chroma_h) - 1) >> descriptor.pointee.log2_chroma_h
        return zip(frame.planes.prefix(4), frame.lineSizes.prefix(4)).enumerated().compactMap { i, plane in
            guard let data = plane.0, lineBytes[i] > 0 else { return nil }
            let rows = i == 1 || i == 2 ? chromaHeight : frame.height
            return (0..<rows).flatMap { y in
                Array(UnsafeBufferPointer(start: data + y * Int(plane.1), count: Int(lineBytes[i])))
            }
        }
    }

    /// The picture at `width × height` (display orientation), as RGBA.
    /// Scaling is done before turning, so only the pixels needed are turned.
    /// - Parameters:
    ///   - width: display width wanted, ≥ 1 (default: ``displayWidth``).
    ///   - height: display height wanted, ≥ 1 (default: ``displayHeight``).
    ///   - accurate: exact rounding and full-resolution chroma interpolation (default); `false` lets swscale use
    ///     its fast converters — for bulk work such as panorama tiles, where speed matters more than the last
    ///     level of chroma detail.
    /// - Returns: the picture, RGBA, upright.
    /// - Throws: ``LapseError`` `.codec` when the conversion fails.
    public func pixels(width: Int? = nil, height: Int? = nil, accurate: Bool = true) throws -> PixelBuffer {
        let dw = width ?? displayWidth
        let dh = height ?? displayHeight
        let sw = orientation.swapsAxes ? dh : dw
        let sh = orientation.swapsAxes ? dw : dh
        var out = PixelBuffer(width: sw, height: sh, fill: RGBA(0, 0, 0, 0))
        try convert(into: &out, accurate: accurate)
        return out.applying(orientation)
    }

    /// The picture at `width × height` as the encoder's Y′CbCr (BT.709 limited range 4:2:0), in one swscale pass
    /// from the decoded planes (scaling, chroma resampling), the range mapped and a 3 × 3 matrix on the result for a
    /// source of another matrix (JPEG's BT.601: luma takes its block's chroma; ITU-T H.273's derivation of E′Y, E′Pb,
    /// E′Pr from each matrix's Kr and Kb). Nil for what needs the RGBA path: alpha, an EXIF orientation other than
    /// upright, RGB or palette sources, BT.2020. A picture of that size kept in `spares` is written over rather than
    /// new memory mapped.
    /// - Throws: ``LapseError`` `.codec` when swscale cannot convert.
    public func yuv(width: Int, height: Int, spares: SpareFrames? = nil) throws -> YUVFrame? {
        guard !hasAlpha, orientation == .up, let descriptor = av_pix_fmt_desc_get(frame.format),
            descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL) == 0,
            descriptor.pointee.nb_components == 3, descriptor.pointee.comp.0.depth == 8
        else { return nil }
        let (matrix, full) = colourSpace()
        guard matrix == SWS_CS_ITU601 || matrix == SWS_CS_ITU709 else { return nil }
        let format = Self.plainFormat(frame.format)
        let planes = frame.planes.map { UnsafePointer($0) }
        let strides = frame.lineSizes
        let (kr, kb) = matrix == SWS_CS_ITU709 ? (0.2126, 0.0722) : (0.299, 0.114)
        if format == AV_PIX_FMT_YUV420P, width == frame.width, height == frame.height {
            // 4:2:0 at its own size (a JPEG tile): no scaling, the range and matrix in one pass.
            return YUVFrame(
                planes: planes, lineSizes: strides.map { $0 }, width: width, height: height, kr: kr, kb: kb,
                fullRange: full, reusing: spares?.take(width: width, height: height))
        }
        // Scaled (and chroma resampled) to 4:2:0 in its own range and matrix by swscale, then as above: swscale
        // copies a picture of its own format and size without converting it, whatever the range flags say.
        var scaled =
            spares?.take(width: width, height: height) ?? YUVFrame(uninitializedWidth: width, height: height)
        let cw = scaled.chromaWidth
        try scaled.y.withUnsafeMutableBufferPointer { y in
            try scaled.cb.withUnsafeMutableBufferPointer { cb in
                try scaled.cr.withUnsafeMutableBufferPointer { cr in
                    var dst: [UnsafeMutablePointer<UInt8>?] = [y.baseAddress, cb.baseAddress, cr.baseAddress, nil]
                    var dstStrides: [Int32] = [Int32(width), Int32(cw), Int32(cw), 0]
                    try Scaler().scale(
                        src: planes, srcStrides: strides, srcWidth: frame.width, srcHeight: frame.height,
                        srcFormat: format, srcMatrix: matrix, srcFullRange: full,
                        dst: &dst, dstStrides: &dstStrides, dstWidth: width, dstHeight: height,
                        dstFormat: AV_PIX_FMT_YUV420P, dstMatrix: matrix, dstFullRange: full,
                        flags: (width < frame.width || height < frame.height) ? SWS_AREA : SWS_BICUBIC)
                }
            }
        }
        // Made BT.709 limited range where swscale wrote it (no second frame of this size to fault in).
        scaled.convertInPlace(kr: kr, kb: kb, fullRange: full)
        return scaled
    }

    private func convert(into out: inout PixelBuffer, accurate: Bool) throws {
        let (matrix, full) = colourSpace()
        let scaler = Scaler()
        let planes = frame.planes.map { UnsafePointer($0) }
        let strides = frame.lineSizes
        let format = Self.plainFormat(frame.format)
        let w = out.width
        let h = out.height
        try out.bytes.withUnsafeMutableBytes { raw in
            var dst: [UnsafeMutablePointer<UInt8>?] = [
                raw.baseAddress!.assumingMemoryBound(to: UInt8.self), nil, nil, nil
            ]
            var dstStrides: [Int32] = [Int32(w * 4), 0, 0, 0]
            try scaler.scale(
                src: planes, srcStrides: strides, srcWidth: frame.width, srcHeight: frame.height,
                srcFormat: format, srcMatrix: matrix, srcFullRange: full,
                dst: &dst, dstStrides: &dstStrides, dstWidth: w, dstHeight: h,
                dstFormat: AV_PIX_FMT_RGBA, dstMatrix: matrix, dstFullRange: true,
                flags: (w < frame.width || h < frame.height) ? SWS_AREA : (accurate ? SWS_BICUBIC : SWS_BILINEAR),
                accurate: accurate)
        }
        if !hasAlpha {
            // swscale leaves alpha at 255 for formats without it, but be certain.
            out.bytes.withUnsafeMutableBytes { raw in
                var i = 3
                while i < raw.count {
                    raw[i] = 255
                    i += 4
                }
            }
        }
    }

    /// The plain format of a deprecated full-range "J" format (swscale wants it with the range flag).
    private static func plainFormat(_ format: AVPixelFormat) -> AVPixelFormat {
        switch format {
        case AV_PIX_FMT_YUVJ420P: return AV_PIX_FMT_YUV420P
        case AV_PIX_FMT_YUVJ422P: return AV_PIX_FMT_YUV422P
        case AV_PIX_FMT_YUVJ444P: return AV_PIX_FMT_YUV444P
        case AV_PIX_FMT_YUVJ440P: return AV_PIX_FMT_YUV440P
        default: return format
        }
    }

    /// The YUV matrix and range to decode with: the file's tags, else JPEG's BT.601 full range (JFIF),
    /// else BT.601 limited (WebP/VP8 is BT.601).
    private func colourSpace() -> (Int32, Bool) {
        let f = frame.pointer.pointee
        let full =
            f.color_range == AVCOL_RANGE_JPEG
            || [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUVJ440P].contains(
                frame.format)
        let matrix: Int32
        switch f.colorspace {
        case AVCOL_SPC_BT709: matrix = SWS_CS_ITU709
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: matrix = SWS_CS_BT2020
        default: matrix = SWS_CS_ITU601
        }
        return (matrix, full)
    }

    private static func orientation(of frame: UnsafeMutablePointer<AVFrame>) -> ImageOrientation? {
        guard let entry = av_dict_get(frame.pointee.metadata, "Orientation", nil, 0),
            let value = entry.pointee.value
        else { return nil }
        let text = String(cString: value).trimmingCharacters(in: .whitespaces)
        guard let v = Int(text) else { return nil }
        return ImageOrientation(rawValue: v)
    }

    /// "134.2 megapixels" for 134 217 728 pixels, "4096 pixels" below a tenth of a megapixel.
    private static func pixels(_ count: Int) -> String {
        count >= 100_000 ? String(format: "%.1f megapixels", Double(count) / 1e6) : "\(count) pixels"
    }

    /// Reads the orientation from a JPEG's APP1 Exif segment when FFmpeg did not export it (``ExifTags``).
    private static func jpegOrientation(path: String) -> ImageOrientation? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 65536) else { return nil }
        return ExifTags(head: [UInt8](head))?.orientation
    }

    /// For the common image extensions, checks the file starts as such a file does, so a text file named
    /// `.jpg` is reported as "not an image" rather than as a corrupt one.
    /// The image kinds told by their first bytes: (kind as said in messages, libavformat demuxer, file extensions).
    static let contentKinds:
        [(name: String, demuxer: String, extensions: [String], test: @Sendable ([UInt8]) -> Bool)] = [
            ("JPEG", "jpeg_pipe", ["jpg", "jpeg"], { $0.starts(with: [0xFF, 0xD8, 0xFF]) }),
            ("PNG", "png_pipe", ["png"], { $0.starts(with: [0x89, 0x50, 0x4E, 0x47]) }),
            (
                "WebP", "webp_pipe", ["webp"],
                {
                    $0.count >= 12 && $0.starts(with: [0x52, 0x49, 0x46, 0x46])
                        && Array($0[8..<12]) == [0x57, 0x45, 0x42, 0x50]
                }
            ),
            ("GIF", "gif", ["gif"], { $0.starts(with: [0x47, 0x49, 0x46, 0x38]) }),
            ("BMP", "bmp_pipe", ["bmp"], { $0.starts(with: [0x42, 0x4D]) }),
            (
                "TIFF", "tiff_pipe", ["tif", "tiff"],
                {
                    $0.starts(with: [0x49, 0x49, 0x2A, 0x00]) || $0.starts(with: [0x4D, 0x4D, 0x00, 0x2A])
                }
            )
        ]

    /// What the file at `path` holds by its first bytes, so that it is decoded as what it is whatever its name
    /// says (a WebP named `.jpg` decodes as WebP): the kind, and the extension's own kind when that differs.
    /// Nil when the content is none of ``contentKinds`` and the extension names none either (FFmpeg probes it).
    /// - Throws: ``LapseError`` `.invalidInput` for an empty file, or one named as an image that holds none.
    static func checkSignature(_ path: String) throws -> (kind: String, demuxer: String, named: String?)? {
        let ext = (path as NSString).pathExtension.lowercased()
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 12)) ?? Data())
        let named = contentKinds.first { $0.extensions.contains(ext) }
        if head.isEmpty, named != nil { throw LapseError(.invalidInput, path, "not an image (the file is empty)") }
        guard let found = contentKinds.first(where: { $0.test(head) }) else {
            if named != nil {
                throw LapseError(.invalidInput, path, "not an image (the content is not \(ext.uppercased()) data)")
            }
            return nil
        }
        return (found.name, found.demuxer, named.flatMap { $0.name == found.name ? nil : $0.name })
    }

    static func checkReadable(_ path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw LapseError(.invalidInput, path, "no such file")
        }
        if isDirectory.boolValue { throw LapseError(.invalidInput, path, "is a directory") }
        guard access(path, R_OK) == 0 else { throw LapseError(.invalidInput, path, "permission denied") }
    }
}

/// Feeds encoded bytes held in memory to libavformat through a custom AVIOContext.
private final class MemoryReader {
    let bytes: [UInt8]
    var position = 0
    private(set) var context: UnsafeMutablePointer<AVIOContext>?

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        let size: Int32 = 32768
        let buffer = av_malloc(Int(size))!.assumingMemoryBound(to: UInt8.self)
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        context = avio_alloc_context(
            buffer, size, 0, opaque,
            { opaque, buf, size in
                let reader = Unmanaged<MemoryReader>.fromOpaque(opaque!).takeUnretainedValue()
                let n = min(Int(size), reader.bytes.count - reader.position)
                if n <= 0 { return lapse_averror_eof() }
                reader.bytes.withUnsafeBufferPointer { src in
                    buf!.update(from: src.baseAddress! + reader.position, count: n)
                }
                reader.position += n
                return Int32(n)
            }, nil,
            { opaque, offset, whence in
                let reader = Unmanaged<MemoryReader>.fromOpaque(opaque!).takeUnretainedValue()
                if whence & AVSEEK_SIZE != 0 { return Int64(reader.bytes.count) }
                let base: Int
                switch whence & ~AVSEEK_FORCE {
                case SEEK_SET: base = 0
                case SEEK_CUR: base = reader.position
                case SEEK_END: base = reader.bytes.count
                default: return -1
                }
                let target = base + Int(offset)
                guard target >= 0, target <= reader.bytes.count else { return -1 }
                reader.position = target
                return Int64(target)
            })
    }

    deinit {
        if context != nil {
            av_freep(&context!.pointee.buffer)
            avio_context_free(&context)
        }
    }
}
