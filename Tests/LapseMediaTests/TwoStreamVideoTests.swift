// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import TestSupport
import Testing

@testable import LapseMedia

/// A GoPro MAX `.360`-shaped file (``GoProMAXFile``: the real cube-map frames of `pano360/gopro_max_eac` as two
/// HEVC streams with a `gpmd` track between them) is read as one video of both streams, the first above the second.
@Suite struct TwoStreamVideoTests {
    let dir = TestData.scratchDirectory("two-streams")

    func stream(_ track: String, _ frame: Int) throws -> PixelBuffer {
        try DecodedImage(
            url: URL(fileURLWithPath: TestData.path("pano360/gopro_max_eac/3k/\(track)/GS018423_\(frame).jpg"))
        ).pixels()
    }

    func half(_ p: PixelBuffer, bottom: Bool) -> PixelBuffer {
        var out = PixelBuffer(width: p.width, height: p.height / 2)
        let start = bottom ? out.bytes.count : 0
        out.bytes = Array(p.bytes[start..<(start + out.bytes.count)])
        return out
    }

    /// Every frame is both streams' pictures of one instant, stacked: each half ≥ 35 dB against the JPEG it was
    /// encoded from (HEVC at CRF 18), and the halves of frame k match frame k's JPEGs better than frame k+1's.
    @Test func bothStreamsComeTogetherInStep() throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try GoProMAXFile.make(in: dir)
        let reader = try VideoFrameReader(URL(fileURLWithPath: path))
        #expect(reader.streamCount == 2)
        #expect(reader.displayWidth == 2272 && reader.displayHeight == 1472)
        var k = 0
        while let (time, pixels) = try reader.nextFrame() {
            k += 1
            #expect(abs(time - Double(k - 1) / 4) < 1e-6)
            #expect(pixels.width == 2272 && pixels.height == 1472)
            let top = ImageMetrics.psnr(half(pixels, bottom: false), try stream("track0", k))
            let bottom = ImageMetrics.psnr(half(pixels, bottom: true), try stream("track5", k))
            #expect(top >= 35 && bottom >= 35, "frame \(k): \(top) dB, \(bottom) dB")
            if k < 4 {
                let next = ImageMetrics.psnr(half(pixels, bottom: true), try stream("track5", k + 1))
                #expect(bottom > next, "frame \(k): \(bottom) dB, the next frame's \(next) dB")
            }
        }
        #expect(k == 4)
        // Seeking back and reading a frame by time gives the same picture.
        try reader.seek(to: 0)
        let again = try reader.frame(at: 0.5)
        #expect(ImageMetrics.psnr(half(again, bottom: true), try stream("track5", 3)) >= 35)
        // A reader of one stream reads just it.
        let one = try VideoFrameReader(input: MediaInput(location: URL(fileURLWithPath: path)), stream: 2)
        #expect(one.streamCount == 1 && one.displayHeight == 736)
    }

    /// The two streams' Y′CbCr frames (of a file in limited range), stacked, written into the planes of the frame
    /// before (given back): the same memory, byte for byte the frames a reader into new memory gives; the first
    /// stream's above the second's.
    @Test func stackedFramesAreWrittenIntoSpares() throws {
        let folder = dir.appendingPathComponent("spares")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = URL(fileURLWithPath: try GoProMAXFile.make(in: folder, pixelFormat: "yuv420p"))
        func address(_ frame: YUVFrame) -> UInt { frame.y.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } }
        let fresh = try VideoFrameReader(url)
        let reusing = try VideoFrameReader(url)
        let one = try VideoFrameReader(input: MediaInput(location: url), stream: 0)
        try #require(fresh.yuvFramesAvailable && reusing.streamCount == 2)
        let spares = SpareFrames(limit: 1)
        var before: UInt?
        var (frames, same, inPlace, topOnTop) = (0, true, 0, true)
        while let (time, frame) = try fresh.nextYUVFrame() {
            let (otherTime, other) = try #require(try reusing.nextYUVFrame(spares: spares))
            let equal = time == otherTime && frame == other
            same = same && equal
            #expect(other.width == 2272 && other.height == 1472)
            if let (_, first) = try one.nextYUVFrame() {
                topOnTop =
                    topOnTop && Array(other.y.prefix(first.y.count)) == first.y
                    && Array(other.cb.prefix(first.cb.count)) == first.cb
            }
            if before == address(other) { inPlace += 1 }
            before = address(other)
            frames += 1
            spares.give(other)
        }
        #expect(frames == 4 && same && topOnTop)
        #expect(inPlace == frames - 1)
    }
}
