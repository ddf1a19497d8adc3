// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

@Suite struct GIFInputsCLITests {
    @Test(arguments: [
        (["video/iphone_rotated.mov"], "x.mp4", "must end in .gif"),
        (
            ["video/iphone_rotated.mov", "images/pillow/hopper.png"], "x.gif",
            "is a video: give one video, or only images"
        ),
        (["video/iphone_rotated.mov", "video/iphone_rotated.mov"], "x.gif", "is a video")
    ])
    func mixedInputsAndWrongExtensionsAreUsageErrors(inputs: [String], output: String, message: String) throws {
        let dir = TestData.scratchDirectory("gifinputs")
        let out = dir.appendingPathComponent(output).path
        let r = try Shell.lapse(["gif"] + inputs.map(TestData.path) + ["-o", out])
        #expect(r.status == 64)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// A frame the same as the one before (or shown under 2 cs) is not written but lengthens the one before's
    /// delay; the summary says so, so that "3 images read" beside "2 frames" written is not a riddle (images are
    /// read, a video's frames sampled).
    @Test func repeatedFramesAreCountedInTheSummary() throws {
        let dir = TestData.scratchDirectory("gifinputs")
        let out = dir.appendingPathComponent("repeat.gif").path
        let hopper = TestData.path("images/pillow/hopper.png")
        let red = TestData.path("images/generated/red_100x100.png")
        let r = try Shell.lapse(["gif", hopper, hopper, red, "-o", out, "-y"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains(", 2 frames, "), "\(r.stdout)")
        #expect(r.stdout.contains("3 images read in "), "\(r.stdout)")
        #expect(r.stdout.contains("; 1 merged into the one before (unchanged or too short)"), "\(r.stdout)")
    }

    /// A list's own seconds and `--delay` together: each line's seconds where it has them, `--delay` for the rest,
    /// and a warning that says so (the list won without a word).
    @Test func aListsSecondsWinOverDelayAndItIsSaid() throws {
        let dir = TestData.scratchDirectory("gifinputs")
        let list = dir.appendingPathComponent("list.txt")
        let lines = [
            "\(TestData.path("images/pillow/hopper.png"))\t0.5", TestData.path("images/generated/red_100x100.png")
        ]
        try (lines.joined(separator: "\n") + "\n").write(to: list, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("list.gif").path
        let r = try Shell.lapse(["gif", "@" + list.path, "--delay", "0.3", "-o", out, "-y", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("1 of 2 images have their own seconds in the list, which win over --delay (0.3 s"))
        let json = try #require(try JSONSummary.parse(r.stdoutData))
        #expect(json["delays"] as? [Int] == [50, 30], "\(json)")
    }

    /// A GIF upscaled past what memory holds is refused before anything is decoded: 65535 wide from a 320×240
    /// video is 65535×49151, 12.9 GB a frame (the allocation failed: signal 6).
    @Test func aGIFTooLargeForMemoryIsAUsageError() throws {
        let dir = TestData.scratchDirectory("gifinputs")
        let out = dir.appendingPathComponent("huge.gif").path
        let video = TestData.path("video/synthetic/gop4s_bframes_av_10s.mp4")
        let r = try Shell.lapse(["gif", video, "--duration", "0.3", "--width", "65535", "-o", out, "-y"])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("error: a GIF of 65535x49151 is 3221 megapixels a frame: at most 134"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
