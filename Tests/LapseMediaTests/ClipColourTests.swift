// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia
import TestSupport
import Testing

/// `--accurate` passes decoded pixels through unconverted, so the output must describe them as the source does
/// (a BT.2020 HDR10 video's were tagged BT.601), and says when it reduces a deeper video to 8 bits.
@Suite struct ClipColourTests {
    @Test(arguments: [
        ("video/synthetic/gop4s_bframes_av_10s.mp4", "smpte170m"), ("video/iphone_rotated.mov", "bt709"),
        ("video/synthetic/hdr10_pq_hevc10_320x180.mp4", "bt2020nc")
    ])
    func accurateCutKeepsTheSourceColourDescription(file: String, matrix: String) throws {
        let dir = TestData.scratchDirectory("clipcolour")
        let out = dir.appendingPathComponent("c.mp4").path
        var options = ClipOptions(start: 0.4, end: 1.0) // a frame's time in each (30, 29.97 and 25 fps)
        options.accurate = true
        let result = try Clipper.clip(
            URL(fileURLWithPath: TestData.path(file)), to: URL(fileURLWithPath: out), options: options)
        let said = result.warnings.contains { $0.contains("10-bit HDR") && $0.contains("8-bit") }
        #expect(said == file.contains("hdr10"), "\(result.warnings)")
        let stream = try #require(
            (try FFmpegReference.probeJSON(out, extra: ["-select_streams", "v"])["streams"] as? [[String: Any]])?.first)
        #expect(stream["color_space"] as? String == matrix)
        // The colours survive: the first frame of the cut against the source frame at 0.4 s, both decoded by ffmpeg
        // honouring the tags.
        let cut = try #require(try FFmpegReference.frames(out).first)
        let source = try FFmpegReference.frames(
            TestData.path(file), filters: "trim=start=0.4,setpts=PTS-STARTPTS", size: (cut.width, cut.height)
        ).first
        let reference = try #require(source)
        #expect(ImageMetrics.ssim(cut, reference) >= 0.9)
        // Colour, block by block: 16×16 block means per channel (compression keeps them; a BT.601/BT.709 mix-up
        // moves testsrc's bars by about 40 levels; a correct cut stays under 7).
        var worst = 0.0
        for by in stride(from: 0, to: cut.height - 15, by: 16) {
            for bx in stride(from: 0, to: cut.width - 15, by: 16) {
                for c in 0..<3 {
                    var a = 0.0
                    var b = 0.0
                    for y in by..<by + 16 {
                        for x in bx..<bx + 16 {
                            a += Double(cut.bytes[(y * cut.width + x) * 4 + c])
                            b += Double(reference.bytes[(y * cut.width + x) * 4 + c])
                        }
                    }
                    worst = max(worst, abs(a - b) / 256)
                }
            }
        }
        #expect(worst <= 12, "largest block colour difference \(worst)")
    }
}
