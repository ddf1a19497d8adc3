// SPDX-License-Identifier: GPL-3.0-or-later

/// The images a JPEG file carries after its own, as its Multi-Picture Format index lists them (CIPA DC-007-2009
/// "Multi-Picture Format", 5.2: the APP2 segment `MPF\0`): what a camera stores there is a reduced copy of the photo
/// (a GoPro MAX photo of 5760 × 2880 carries one of 1440 × 720, about 190 kB of its 3 MB), which is all a
/// picture the size of a motion analysis's needs, from a twentieth of the bytes (decoding it takes about a seventh of
/// the time the photo takes at ¼ size, whose Huffman decoding is the photo's whole).
///
/// Layout read (5.2.2–5.2.3): after `MPF\0`, the MP header — a TIFF byte order mark (`II*\0` or `MM\0*`) and the
/// offset of the MP Index IFD from it —, the IFD's count of 12-byte entries, and the entry MPEntry (tag 0xB002,
/// type UNDEFINED, 16 bytes an image) pointing at the list of images. Each image: its attribute (bits 26–24 the
/// data format, 0 for JPEG; bits 23–0 the type: 0x010001 and 0x010002 a Large Thumbnail of VGA and full HD size,
/// 0x030000 the primary image), its size in bytes, and its offset from the byte order mark (0 for the first
/// image, the file itself).
package enum MultiPicture {
    /// Where the first Large Thumbnail (type 0x010001 or 0x010002, JPEG) listed by the MPF segment of a JPEG lies in
    /// the file: a byte range, to be read from the file and checked as any outside data is (nothing here says the
    /// bytes there are a JPEG); nil when `head` (the file's start, through its headers) has no such segment, lists
    /// none, or the index is broken (reaches past the segment, an offset of 0, a size of 0).
    package static func largeThumbnail(in head: [UInt8]) -> Range<Int>? {
        var found: Range<Int>?
        JPEGSegments.walk(head) { segment in
            guard segment.marker == 0xE2, segment.payload.upperBound <= head.count,
                head[segment.payload].starts(with: [0x4D, 0x50, 0x46, 0x00])
            else { return true }
            found = thumbnail(Array(head[segment.payload].dropFirst(4)), at: segment.payload.lowerBound + 4)
            return false // one MPF segment a file (5.2.1)
        }
        return found
    }

    /// The Large Thumbnail of an MP header and index (`bytes`, from the byte order mark, which is at `base` in the
    /// file), as a range of the file.
    static func thumbnail(_ bytes: [UInt8], at base: Int) -> Range<Int>? {
        guard let order = TIFFByteOrder(mark: bytes) else { return nil }
        func u16(_ i: Int) -> Int? { order.number(bytes, at: i, count: 2) }
        func u32(_ i: Int) -> Int? { order.number(bytes, at: i, count: 4) }
        guard let ifd = u32(4), let count = u16(ifd) else { return nil }
        for k in 0..<count {
            let entry = ifd + 2 + 12 * k
            guard let tag = u16(entry), let type = u16(entry + 2), let length = u32(entry + 4),
                let offset = u32(entry + 8)
            else { return nil }
            guard tag == 0xB002 else { continue }
            guard type == 7, length % 16 == 0 else { return nil }
            for image in stride(from: offset, to: offset + length, by: 16) {
                guard let attribute = u32(image), let size = u32(image + 4), let start = u32(image + 8) else {
                    return nil
                }
                let isJPEG = attribute >> 24 & 0x7 == 0
                let kind = attribute & 0xFF_FFFF
                if isJPEG, kind == 0x01_0001 || kind == 0x01_0002, size > 0, start > 0 {
                    return (base + start)..<(base + start + size)
                }
            }
            return nil
        }
        return nil
    }
}
