// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
import TestSupport
import Testing

/// The reduced copy a camera stores after its photo (CIPA DC-007 Multi-Picture Format), found in real GoPro MAX
/// photos and in none of the photos without one; a broken index gives none and never reads past its segment.
@Suite struct MultiPictureTests {
    static let walk = (1...5).map { TestData.path("pano360/geovisio_gopromax_walk/\($0).jpg") }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// Each of the five real GoPro MAX photos lists a 1440 × 720 Large Thumbnail (the first, at byte 3 103 231,
    /// 192 884 bytes, as `exiftool -PreviewImage` finds it), a whole JPEG that ends the file.
    @Test func realGoProPhotosListTheirReducedCopy() throws {
        for path in Self.walk {
            let file = try Self.bytes(path)
            let range = try #require(MultiPicture.largeThumbnail(in: file), "\(path)")
            if path.hasSuffix("/1.jpg") { #expect(range == 3_103_231..<(3_103_231 + 192_884)) }
            #expect(range.upperBound == file.count)
            let copy = Array(file[range])
            #expect(copy.starts(with: [0xFF, 0xD8]) && copy.suffix(2) == [0xFF, 0xD9])
            let decoded = try DecodedImage(data: copy, name: path)
            #expect(decoded.storedWidth == 1440 && decoded.storedHeight == 720)
        }
    }

    @Test func photosWithoutOneHaveNone() throws {
        let bike = TestData.path("pano360/trekview_worldlock_bike/GS010013-worldlock_000001.jpg")
        #expect(MultiPicture.largeThumbnail(in: try Self.bytes(bike)) == nil)
        #expect(MultiPicture.largeThumbnail(in: Array("not a JPEG".utf8)) == nil)
        #expect(MultiPicture.largeThumbnail(in: []) == nil)
    }

    /// The real photo's MPF segment, changed the ways a broken or hostile file would be: each gives none.
    @Test func aBrokenIndexGivesNone() throws {
        let file = try Self.bytes(Self.walk[0])
        let head = Array(file[0..<70_000])
        #expect(MultiPicture.largeThumbnail(in: head) == 3_103_231..<(3_103_231 + 192_884)) // only the headers read
        let mark = try #require(GeotaggedPhoto.multiPictureMark(in: head)) // the IFD at mark + 8, big-endian here
        func changed(_ edit: (inout [UInt8]) -> Void) -> Range<Int>? {
            var h = head
            edit(&h)
            return MultiPicture.largeThumbnail(in: h)
        }
        #expect(changed { $0[mark] = 0x58 } == nil) // not a byte order mark
        #expect(changed { $0.replaceSubrange(mark + 4..<mark + 8, with: [0x00, 0x01, 0x00, 0x00]) } == nil) // IFD far
        #expect(Array(head[mark + 8..<mark + 10]) == [0x00, 0x05]) // five entries; MPEntry the third
        let mpEntry = mark + 10 + 2 * 12
        #expect(Array(head[mpEntry..<mpEntry + 2]) == [0xB0, 0x02])
        #expect(changed { $0[mpEntry + 3] = 4 } == nil) // LONG, not UNDEFINED
        // The second image's entry: offset 0 (the file itself), size 0, a type that is not a thumbnail.
        let list = mark + (Int(head[mpEntry + 10]) << 8 | Int(head[mpEntry + 11]))
        let second = list + 16
        #expect(changed { $0.replaceSubrange(second + 8..<second + 12, with: [0, 0, 0, 0]) } == nil)
        #expect(changed { $0.replaceSubrange(second + 4..<second + 8, with: [0, 0, 0, 0]) } == nil)
        #expect(changed { $0.replaceSubrange(second + 1..<second + 4, with: [0x02, 0x00, 0x02]) } == nil) // disparity
        // A list said to be far longer than the segment: its entries are read up to the segment's end, none past.
        #expect(
            changed {
                $0.replaceSubrange(mpEntry + 4..<mpEntry + 8, with: [0x7F, 0xFF, 0xFF, 0xF0])
                $0[second + 3] = 0x00
            } == nil)
        #expect(changed { $0[second] |= 0x01 } == nil) // not JPEG data (format bits 26–24)
        // Cut in the middle of the segment: nothing past the bytes there are is read.
        #expect(MultiPicture.largeThumbnail(in: Array(head[0..<(second + 6)])) == nil)
    }

    /// The index written by the tests' photo writer (as a GoPro MAX lays it out) points at the copy it stored.
    @Test func theWrittenIndexPointsAtTheCopy() throws {
        let picture = try DecodedImage(url: URL(fileURLWithPath: Self.walk[0]), reduction: 2).pixels()
        let copy = try picture.resized(width: 512, height: 256)
        let path = TestData.scratchDirectory("multi-picture").appendingPathComponent("written.jpg").path
        try GeotaggedPhoto.write(
            picture, to: path, latitude: 52, longitude: 6, dateTime: "2026:12:07 10:00:00", preview: copy)
        let file = try Self.bytes(path)
        let range = try #require(MultiPicture.largeThumbnail(in: file))
        let decoded = try DecodedImage(data: Array(file[range]), name: path).pixels()
        #expect(decoded.width == 512 && decoded.height == 256)
        #expect(ImageMetrics.psnr(decoded, copy) > 28) // quality 80 (31.3 dB)
    }
}
