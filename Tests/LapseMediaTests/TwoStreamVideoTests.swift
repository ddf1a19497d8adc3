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
}
