// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Foundation
import TestSupport
import Testing

@testable import LapseMedia

/// JPEGs decoded into planes kept between pictures (``PictureMemory``) are the pictures FFmpeg's own allocator gives:
/// real photos of several sizes and layouts (a GoPro MAX 360° photo, 5760 × 2880 4:2:2, whole and at ¼; a 1800 × 1200
/// and a 128 × 128 4:2:0 photo; a CMYK JPEG), decoded four at a time, twice over, each plane byte for byte the
/// ffmpeg command line's decode of the same file (`-lowres` for the reduced one). The planes freed wait for the
/// next pictures, within the limit.
@Suite struct PictureMemoryTests {
    static let cases: [(path: String, reduction: Int)] = [
        ("pano360/geovisio_gopromax_walk/1.jpg", 0), ("pano360/geovisio_gopromax_walk/2.jpg", 2),
        ("images/exif-orientation-examples/Landscape_1.jpg", 0), ("images/pillow/hopper.jpg", 0),
        ("images/pillow/pil_sample_cmyk.jpg", 0), ("images/exif-orientation-examples/Landscape_1.jpg", 1)
    ]

    /// The ffmpeg command line's decode of `path`: its planes, tightly packed, in the decoder's own format.
    static func reference(_ path: String, reduction: Int, format: String) throws -> [UInt8] {
        let out = TestData.scratchDirectory("picture-memory").appendingPathComponent(UUID().uuidString + ".raw")
        try FileManager.default.createDirectory(
            at: out.deletingLastPathComponent(), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try Shell.run(
            "ffmpeg",
            ["-v", "error", "-lowres", "\(reduction)", "-i", path, "-f", "rawvideo", "-pix_fmt", format, out.path])
        try #require(r.status == 0, "\(r.stderr)")
        return Array(try Data(contentsOf: out))
    }

    @Test func keptPlanesGiveTheDecodersOwnPictures() async throws {
        let decodes = try await withThrowingTaskGroup(of: (Int, [UInt8], String).self) { group in
            var next = 0
            let work = Array(Self.cases.indices) + Array(Self.cases.indices)
            var results: [(Int, [UInt8], String)] = []
            func start() {
                guard next < work.count else { return }
                let k = work[next]
                next += 1
                group.addTask {
                    let c = Self.cases[k]
                    let image = try DecodedImage(
                        url: URL(fileURLWithPath: TestData.path(c.path)), reduction: c.reduction)
                    return (k, image.decodedPlanes().flatMap { $0 }, image.decodedFormatName)
                }
            }
            for _ in 0..<4 { start() }
            while let r = try await group.next() {
                results.append(r)
                start()
            }
            return results
        }
        #expect(decodes.count == 2 * Self.cases.count)
        for (k, c) in Self.cases.enumerated() {
            let mine = decodes.filter { $0.0 == k }
            let expected = try Self.reference(TestData.path(c.path), reduction: c.reduction, format: mine[0].2)
            for d in mine {
                #expect(d.1.count == expected.count, "\(c.path) at 1/\(1 << c.reduction): \(d.1.count) bytes")
                #expect(d.1 == expected, "\(c.path) at 1/\(1 << c.reduction) (\(d.2)) differs from ffmpeg's decode")
            }
        }
        let waiting = PictureMemory.waiting
        #expect(waiting.bytes <= PictureMemory.keptBytes, "\(waiting)")
    }

    /// A plane handed out is zeroed, as FFmpeg's allocator zeroes it, even when it is the memory of the picture
    /// decoded just before (a damaged JPEG whose decoder leaves a plane unwritten holds zeros there, not the last
    /// photo): the real GoPro MAX photo decoded and let go, then a picture of its size and format asked of the JPEG
    /// decoder's get_buffer2, several times over.
    @Test func planesHandedOutAreZeroed() throws {
        let path = TestData.path("pano360/geovisio_gopromax_walk/3.jpg")
        for _ in 0..<3 {
            let image = try DecodedImage(url: URL(fileURLWithPath: path))
            let (width, height) = (image.displayWidth, image.displayHeight)
            let format = av_get_pix_fmt(image.decodedFormatName)
            #expect(image.decodedPlanes().contains { plane in plane.contains { $0 != 0 } })
            _ = consume image // its planes go back
            let codec = try #require(avcodec_find_decoder(AV_CODEC_ID_MJPEG))
            var context = avcodec_alloc_context3(codec)
            defer { avcodec_free_context(&context) }
            let c = try #require(context)
            PictureMemory.install(on: c)
            c.pointee.width = Int32(width)
            c.pointee.height = Int32(height)
            c.pointee.pix_fmt = format
            var frame = av_frame_alloc()
            defer { av_frame_free(&frame) }
            let f = try #require(frame)
            f.pointee.width = Int32(width)
            f.pointee.height = Int32(height)
            f.pointee.format = format.rawValue
            try #require(c.pointee.get_buffer2!(c, f, 0) == 0)
            let descriptor = try #require(av_pix_fmt_desc_get(format))
            let planes = withUnsafeBytes(of: f.pointee.data) {
                Array($0.bindMemory(to: UnsafeMutablePointer<UInt8>?.self))
            }
            let lines = withUnsafeBytes(of: f.pointee.linesize) { Array($0.bindMemory(to: Int32.self)) }
            var nonZero = 0
            for i in 0..<4 {
                guard let p = planes[i] else { continue }
                let rows =
                    i == 1 || i == 2
                    ? (height + (1 << descriptor.pointee.log2_chroma_h) - 1)
                        >> descriptor.pointee.log2_chroma_h : height
                for k in 0..<(rows * Int(lines[i])) where p[k] != 0 { nonZero += 1 }
            }
            #expect(planes[0] != nil && planes[1] != nil && planes[2] != nil)
            #expect(nonZero == 0, "\(nonZero) bytes of a new picture were not zero")
        }
    }
}
