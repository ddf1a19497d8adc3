// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg
import LapseCore
import Synchronization

/// Picture buffers for the JPEG decoder (its `get_buffer2`), kept for the next picture that needs one of the same
/// size.
///
/// Every image is decoded by a decoder of its own, and FFmpeg's default allocator (`avcodec_default_get_buffer2`)
/// pools buffers per decoder: each picture's planes were new memory, zeroed by FFmpeg (`av_buffer_allocz`),
/// faulted in page by page by the kernel and given back to it when the picture was freed (blocks of a megabyte or
/// more are mapped whole: the `lapse` executable's mmap threshold). At a 360° camera's 5760 × 2880 that is 25 MB a
/// photo, about as much of a stabilised hyperlapse's CPU time as its motion analysis (perf). Here a plane freed waits
/// for the next picture, of any image, that needs a plane of its size.
///
/// Planes are laid out as the default allocator lays them out (FFmpeg 5.1, `libavcodec/get_buffer.c`): the picture's
/// dimensions aligned by `avcodec_align_dimensions2`, line sizes from `av_image_fill_linesizes` with the width
/// widened until each is a multiple of the decoder's alignment, each plane in a buffer of its own with 16 + 63 bytes
/// to spare past its end, 64-byte aligned. FFmpeg's `get_buffer2` contract (`avcodec.h`): data, line sizes and buffers
/// filled, `extended_data` pointing at `data`; called from one thread at a time per decoder, from any thread.
///
/// Every plane is zeroed before it is handed out, as FFmpeg's own allocator zeroes it, so a decoder that leaves part
/// of a picture unwritten gives the same picture either way. Memory: at most ``keptBytes`` wait between pictures
/// (the oldest freed first), taken by the next pictures; a picture larger than that is not kept.
enum PictureMemory {
    /// Bytes of planes kept waiting at most: a few pictures' worth at 5760 × 2880 (25 MB each).
    static let keptBytes = 96 << 20

    /// The planes waiting.
    private static let blocks = BlockPool(maxBytes: keptBytes)
    /// The size of each block handed out, by its address (FFmpeg's free callback gives the address only).
    private static let lent = Mutex<[UInt: Int]>([:])

    /// Makes `context` (a decoder not yet opened) take its pictures' planes from here.
    static func install(on context: UnsafeMutablePointer<AVCodecContext>) {
        context.pointee.get_buffer2 = getBuffer
    }

    /// Planes waiting, for tests: their count and bytes.
    static var waiting: (blocks: Int, bytes: Int) { blocks.waiting }

    private static func take(bytes: Int) -> UnsafeMutableRawPointer {
        let base = blocks.take(bytes: bytes).base
        // Zeroed, as FFmpeg's av_buffer_allocz gives it: a damaged JPEG whose decoder leaves a plane unwritten (a
        // missing scan) then holds zeros there, as with FFmpeg's allocator, not the last photo (the memory is already
        // faulted in: no cost from the kernel, a few milliseconds for a 360° photo's planes).
        base.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        let address = UInt(bitPattern: base)
        lent.withLock { $0[address] = bytes }
        return base
    }

    fileprivate static func give(_ base: UnsafeMutableRawPointer) {
        let address = UInt(bitPattern: base)
        guard let bytes = lent.withLock({ $0.removeValue(forKey: address) }) else { return }
        blocks.give(BlockPool.Block(base: base, bytes: bytes))
    }

    /// The `get_buffer2` callback (see the type's description); FFmpeg's own allocator for what this does not lay
    /// out (hardware frames, palettes, bitstream formats, audio).
    private static let getBuffer:
        @convention(c) (UnsafeMutablePointer<AVCodecContext>?, UnsafeMutablePointer<AVFrame>?, Int32) -> Int32 = {
            context, frame, flags in
            guard let context, let frame else { return lapse_averror(EINVAL) }
            let format = AVPixelFormat(rawValue: frame.pointee.format)
            guard context.pointee.codec_type == AVMEDIA_TYPE_VIDEO, frame.pointee.width > 0, frame.pointee.height > 0,
                let descriptor = av_pix_fmt_desc_get(format),
                descriptor.pointee.flags
                    & UInt64(AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM) == 0
            else { return avcodec_default_get_buffer2(context, frame, flags) }
            return PictureMemory.fill(frame, format: format, context: context)
        }

    /// Lays out and attaches `frame`'s planes.
    private static func fill(
        _ frame: UnsafeMutablePointer<AVFrame>, format: AVPixelFormat, context: UnsafeMutablePointer<AVCodecContext>
    ) -> Int32 {
        var w = frame.pointee.width
        var h = frame.pointee.height
        var align = [Int32](repeating: 0, count: Int(AV_NUM_DATA_POINTERS))
        var lineSizes = [Int32](repeating: 0, count: 4)
        align.withUnsafeMutableBufferPointer { avcodec_align_dimensions2(context, &w, &h, $0.baseAddress) }
        // The width widened (by its lowest set bit) until every line size is a multiple of its alignment.
        while true {
            let r = lineSizes.withUnsafeMutableBufferPointer { av_image_fill_linesizes($0.baseAddress, format, w) }
            guard r >= 0 else { return r }
            w += w & ~(w - 1)
            if (0..<4).allSatisfy({ align[$0] <= 0 || lineSizes[$0] % align[$0] == 0 }) { break }
        }
        var sizes = [Int](repeating: 0, count: 4)
        let strides = lineSizes.map { Int($0) }
        let r = sizes.withUnsafeMutableBufferPointer { s in
            strides.withUnsafeBufferPointer { av_image_fill_plane_sizes(s.baseAddress, format, h, $0.baseAddress) }
        }
        guard r >= 0 else { return r }
        var planes: [(UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<AVBufferRef>)] = []
        for i in 0..<4 where sizes[i] > 0 {
            guard sizes[i] <= Int(Int32.max) - 79 else { return failed(planes) }
            let bytes = sizes[i] + 16 + 63
            let base = take(bytes: bytes)
            guard
                let buffer = av_buffer_create(
                    base.assumingMemoryBound(to: UInt8.self), bytes,
                    { opaque, _ in
                        if let opaque { PictureMemory.give(opaque) }
                    }, base, 0)
            else {
                give(base)
                return failed(planes)
            }
            planes.append((base.assumingMemoryBound(to: UInt8.self), buffer))
        }
        withUnsafeMutableBytes(of: &frame.pointee.data) { raw in
            let data = raw.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)
            for i in data.indices { data[i] = i < planes.count ? planes[i].0 : nil }
        }
        withUnsafeMutableBytes(of: &frame.pointee.linesize) { raw in
            let l = raw.bindMemory(to: Int32.self)
            for i in l.indices { l[i] = i < planes.count ? lineSizes[i] : 0 }
        }
        withUnsafeMutableBytes(of: &frame.pointee.buf) { raw in
            let b = raw.bindMemory(to: UnsafeMutablePointer<AVBufferRef>?.self)
            for i in b.indices { b[i] = i < planes.count ? planes[i].1 : nil }
        }
        let dataOffset = MemoryLayout<AVFrame>.offset(of: \AVFrame.data)!
        frame.pointee.extended_data = (UnsafeMutableRawPointer(frame) + dataOffset)
            .assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
        return 0
    }

    /// Releases the planes attached so far and answers "out of memory".
    private static func failed(_ planes: [(UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<AVBufferRef>)]) -> Int32 {
        for (_, buffer) in planes {
            var b: UnsafeMutablePointer<AVBufferRef>? = buffer
            av_buffer_unref(&b)
        }
        return lapse_averror(ENOMEM)
    }
}
