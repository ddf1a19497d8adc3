// SPDX-License-Identifier: GPL-3.0-or-later
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
        #expect(waiting.blocks > 0 && waiting.bytes <= PictureMemory.keptBytes, "\(waiting)")
    }
}
