// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The pixel size an image declares in its header, read without decoding: enough to refuse an image too large to
/// decode and to choose a reduced-size JPEG decode before any pixel memory is allocated.
///
/// Formats and where the size is (each format's specification): JPEG — the first SOFn segment (ITU-T T.81 B.2.2:
/// precision, height, width, after walking the marker segments by their lengths); PNG — IHDR, the first chunk
/// (width and height, 4 bytes big-endian); GIF — the logical screen descriptor (2 bytes little-endian each); WebP —
/// VP8X's canvas size (24-bit, minus one), VP8L's 14-bit sizes minus one, or VP8's key frame header (14 bits each);
/// BMP — BITMAPINFOHEADER's width and height (32-bit little-endian, height negative for top-down); TIFF — the first
/// IFD's ImageWidth (256) and ImageLength (257) entries (TIFF 6.0 §2, SHORT or LONG, in the file's byte order).
/// Other formats give nil (the decoder's own `max_pixels` check then applies).
package struct ImageHeader: Equatable, Sendable {
    /// Size as stored (before any EXIF orientation), pixels.
    package let width: Int
    package let height: Int
    /// Whether libavcodec can decode the picture at ½, ¼ or ⅛ size (`lowres`): a JPEG that is not lossless
    /// (SOF3, 7, 11 and 15 are lossless, which the mjpeg decoder refuses to reduce).
    package let reducible: Bool

    /// Reads the header of the file at `path`; nil when it cannot be read or the format is not one of the above.
    static func read(path: String) -> ImageHeader? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return read { offset, count in
            guard (try? handle.seek(toOffset: UInt64(offset))) != nil, let data = try? handle.read(upToCount: count),
                data.count == count
            else { return nil }
            return [UInt8](data)
        }
    }

    /// Reads the header of an image held in memory.
    package static func read(data: [UInt8]) -> ImageHeader? {
        read { offset, count in
            guard offset >= 0, count >= 0, offset + count <= data.count else { return nil }
            return Array(data[offset..<offset + count])
        }
    }

    /// `bytes(offset, count)` gives exactly `count` bytes at `offset`, or nil past the end.
    private static func read(_ bytes: (Int, Int) -> [UInt8]?) -> ImageHeader? {
        guard let head = bytes(0, 30) ?? bytes(0, 12) else { return nil }
        // Within `head` (30 bytes) everywhere they are read.
        func be(_ b: [UInt8], _ i: Int, _ n: Int) -> Int { TIFFByteOrder.bigEndian.number(b, at: i, count: n) ?? 0 }
        func le(_ b: [UInt8], _ i: Int, _ n: Int) -> Int { TIFFByteOrder.littleEndian.number(b, at: i, count: n) ?? 0 }
        func sized(_ w: Int, _ h: Int, jpeg: Bool = false) -> ImageHeader? {
            w > 0 && h > 0 ? ImageHeader(width: w, height: h, reducible: jpeg) : nil
        }
        if head.starts(with: [0xFF, 0xD8]) { return jpeg(bytes) }
        guard head.count >= 30 else { return nil }
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
            head[12..<16] == [0x49, 0x48, 0x44, 0x52]
        {
            return sized(be(head, 16, 4), be(head, 20, 4))
        }
        if head.starts(with: Array("GIF8".utf8)) { return sized(le(head, 6, 2), le(head, 8, 2)) }
        if head.starts(with: Array("RIFF".utf8)), head[8..<12] == ArraySlice("WEBP".utf8) {
            switch String(decoding: head[12..<16], as: UTF8.self) {
            case "VP8X": return sized(le(head, 24, 3) + 1, le(head, 27, 3) + 1)
            case "VP8L":
                guard head[20] == 0x2F else { return nil }
                let bits = le(head, 21, 4)
                return sized((bits & 0x3FFF) + 1, (bits >> 14 & 0x3FFF) + 1)
            case "VP8 ":
                guard head[23..<26] == [0x9D, 0x01, 0x2A] else { return nil }
                return sized(le(head, 26, 2) & 0x3FFF, le(head, 28, 2) & 0x3FFF)
            default: return nil
            }
        }
        if let order = TIFFByteOrder(mark: head), let ifd = order.number(head, at: 4, count: 4) {
            return tiff(bytes, order: order, ifd: ifd)
        }
        if head.starts(with: Array("BM".utf8)), le(head, 14, 4) >= 40 {
            let h = Int32(truncatingIfNeeded: le(head, 22, 4))
            return sized(Int(Int32(truncatingIfNeeded: le(head, 18, 4))), Int(h.magnitude))
        }
        return nil
    }

    /// ImageWidth and ImageLength from the IFD at `ifd`.
    private static func tiff(_ bytes: (Int, Int) -> [UInt8]?, order: TIFFByteOrder, ifd: Int) -> ImageHeader? {
        // Read within the bytes read for it (the entries are read whole).
        func number(_ b: [UInt8], _ i: Int, _ n: Int) -> Int { order.number(b, at: i, count: n) ?? 0 }
        guard let countBytes = bytes(ifd, 2) else { return nil }
        let count = number(countBytes, 0, 2)
        guard count > 0, count < 4096, let entries = bytes(ifd + 2, 12 * count) else { return nil }
        var width = 0
        var height = 0
        for e in 0..<count {
            let at = 12 * e
            let tag = number(entries, at, 2)
            let type = number(entries, at + 2, 2)
            guard tag == 256 || tag == 257, type == 3 || type == 4 else { continue }
            let value = type == 3 ? number(entries, at + 8, 2) : number(entries, at + 8, 4)
            if tag == 256 { width = value } else { height = value }
        }
        return width > 0 && height > 0 ? ImageHeader(width: width, height: height, reducible: false) : nil
    }

    /// The first SOFn segment's size (``JPEGSegments``: the walk stops at the start of scan, an end of image or a
    /// broken segment).
    private static func jpeg(_ bytes: (Int, Int) -> [UInt8]?) -> ImageHeader? {
        let frames: Set<UInt8> = [0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF]
        let lossless: Set<UInt8> = [0xC3, 0xC7, 0xCB, 0xCF]
        var header: ImageHeader?
        JPEGSegments.walk(bytes) { segment in
            guard frames.contains(segment.marker) else { return true }
            if segment.payload.count >= 5, let sof = bytes(segment.payload.lowerBound, 5) {
                let h = Int(sof[1]) << 8 | Int(sof[2])
                let w = Int(sof[3]) << 8 | Int(sof[4])
                if w > 0, h > 0 {
                    header = ImageHeader(width: w, height: h, reducible: !lossless.contains(segment.marker))
                }
            }
            return false
        }
        return header
    }
}
