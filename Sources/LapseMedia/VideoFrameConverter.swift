// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg
import LapseCore

/// Turns decoded video frames into upright RGBA ``PixelBuffer``s of one size with a libavfilter graph:
/// `scale` (the frame's own YUV matrix and range; the size already accounts for the sample aspect ratio),
/// then for PQ/HLG input a tone map to BT.709 SDR (`zscale` → linear light, `tonemap=hable`, `zscale` → BT.709,
/// the common FFmpeg recipe, ending in RGB so no chroma is lost), then the display-matrix rotation (`transpose`,
/// `hflip`/`vflip`), then `format=rgba` (alpha kept when the decoder gives it).
///
/// The graph is built for the first frame and rebuilt whenever the decoded size or pixel format changes.
final class VideoFrameConverter {
    /// Output size (upright), in pixels.
    let width: Int
    let height: Int
    /// Filters for the rotation, e.g. `["transpose=clock"]`.
    let rotationFilters: [String]
    /// Whether the width and height swap with the rotation.
    let swapsAxes: Bool
    let toneMap: Bool

    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private var source: UnsafeMutablePointer<AVFilterContext>?
    private var sink: UnsafeMutablePointer<AVFilterContext>?
    private var key: [Int32] = []
    private let output: Frame

    init(width: Int, height: Int, rotationFilters: [String], swapsAxes: Bool, toneMap: Bool) throws {
        output = try Frame()
        self.width = width
        self.height = height
        self.rotationFilters = rotationFilters
        self.swapsAxes = swapsAxes
        self.toneMap = toneMap
    }

    deinit { avfilter_graph_free(&graph) }

    /// Whether a frame's transfer characteristic is HDR: SMPTE ST 2084 (PQ, HDR10) or ARIB STD-B67 (HLG).
    static func isHDR(_ transfer: AVColorTransferCharacteristic) -> Bool {
        transfer == AVCOL_TRC_SMPTE2084 || transfer == AVCOL_TRC_ARIB_STD_B67
    }

    /// Whether a frame size is HD (at least 1280 wide or more than 576 tall), where untagged Y′CbCr is BT.709,
    /// as players take it (mpv's rule), not swscale's BT.601 default.
    static func isHD(_ width: Int, _ height: Int) -> Bool { width >= 1280 || height > 576 }

    /// The filter chain for a frame of the given properties (also used by tests as documentation).
    func chain(hdr: Bool, untaggedHD: Bool = false) -> String {
        let sw = swapsAxes ? height : width
        let sh = swapsAxes ? width : height
        let matrix = untaggedHD ? ":in_color_matrix=bt709" : ""
        var filters = ["scale=\(sw):\(sh):flags=bicubic+accurate_rnd+full_chroma_int\(matrix)", "setsar=1"]
        if hdr && toneMap {
            filters += [
                "zscale=t=linear:npl=100", "format=gbrpf32le", "zscale=p=bt709",
                "tonemap=tonemap=hable:desat=0", "zscale=t=bt709:m=bt709:r=pc", "format=gbrp"
            ]
        }
        filters += rotationFilters
        filters.append("format=rgba")
        return filters.joined(separator: ",")
    }

    /// Converts one decoded frame.
    func convert(_ frame: Frame) throws -> PixelBuffer {
        let f = frame.pointer.pointee
        let k: [Int32] = [
            f.width, f.height, f.format, f.sample_aspect_ratio.num, f.sample_aspect_ratio.den,
            Int32(f.color_trc.rawValue), Int32(f.colorspace.rawValue)
        ]
        if k != key || graph == nil {
            try build(frame)
            key = k
        }
        try ffCheck(
            av_buffersrc_add_frame_flags(source, frame.pointer, Int32(AV_BUFFERSRC_FLAG_KEEP_REF)), nil,
            "cannot filter a video frame")
        av_frame_unref(output.pointer)
        try ffCheck(av_buffersink_get_frame(sink, output.pointer), nil, "cannot filter a video frame")
        defer { av_frame_unref(output.pointer) }
        guard output.width == width, output.height == height, output.format == AV_PIX_FMT_RGBA else {
            throw LapseError(
                .codec, nil,
                "the filter graph gave \(output.width)x\(output.height) "
                    + "\(Scaler.name(output.format)), not \(width)x\(height) rgba")
        }
        var pixels = PixelBuffer(width: width, height: height, fill: RGBA(0, 0, 0, 0))
        let src = output.planes[0]!
        let stride = Int(output.lineSizes[0])
        let row = width * 4
        pixels.bytes.withUnsafeMutableBytes { raw in
            let dst = raw.baseAddress!
            for y in 0..<height { (dst + y * row).copyMemory(from: src + y * stride, byteCount: row) }
        }
        return pixels
    }

    /// A new graph for `frame`'s properties. On failure there is none (and no filters of the one freed are kept:
    /// the next frame builds again).
    private func build(_ frame: Frame) throws {
        avfilter_graph_free(&graph)
        source = nil
        sink = nil
        var built = false
        defer { if !built { avfilter_graph_free(&graph) } }
        guard let g = avfilter_graph_alloc() else { throw LapseError(.codec, nil, "out of memory") }
        graph = g
        let f = frame.pointer.pointee
        let sar = f.sample_aspect_ratio.num > 0 ? f.sample_aspect_ratio : AVRational(num: 1, den: 1)
        let args =
            "video_size=\(f.width)x\(f.height):pix_fmt=\(f.format):time_base=1/1:pixel_aspect=\(sar.num)/\(sar.den)"
        var src: UnsafeMutablePointer<AVFilterContext>?
        var snk: UnsafeMutablePointer<AVFilterContext>?
        try ffCheck(
            avfilter_graph_create_filter(&src, avfilter_get_by_name("buffer"), "in", args, nil, g), nil,
            "cannot set up the video filters")
        try ffCheck(
            avfilter_graph_create_filter(&snk, avfilter_get_by_name("buffersink"), "out", nil, nil, g), nil,
            "cannot set up the video filters")
        var outputs = avfilter_inout_alloc()
        var inputs = avfilter_inout_alloc()
        defer {
            avfilter_inout_free(&outputs)
            avfilter_inout_free(&inputs)
        }
        outputs!.pointee.name = av_strdup("in")
        outputs!.pointee.filter_ctx = src
        outputs!.pointee.pad_idx = 0
        outputs!.pointee.next = nil
        inputs!.pointee.name = av_strdup("out")
        inputs!.pointee.filter_ctx = snk
        inputs!.pointee.pad_idx = 0
        inputs!.pointee.next = nil
        let untagged = f.colorspace == AVCOL_SPC_UNSPECIFIED && Self.isHD(Int(f.width), Int(f.height))
        let description = chain(hdr: Self.isHDR(f.color_trc), untaggedHD: untagged)
        try ffCheck(
            avfilter_graph_parse_ptr(g, description, &inputs, &outputs, nil), nil,
            "cannot set up the video filters '\(description)'")
        try ffCheck(avfilter_graph_config(g, nil), nil, "cannot set up the video filters '\(description)'")
        source = src
        sink = snk
        built = true
    }
}
