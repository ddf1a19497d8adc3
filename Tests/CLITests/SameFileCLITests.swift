// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Writing the output over an input would destroy the input: refused even with --overwrite.
@Suite struct SameFileCLITests {
    @Test(arguments: ["clip", "gif", "view", "video"])
    func outputOverTheInputIsRefused(command: String) throws {
        let dir = TestData.scratchDirectory("samefile")
        let isVideo = command == "clip" || command == "video" // lapse video: the protected input is the --audio file
        let name = command == "gif" ? "in.gif" : isVideo ? "in.mp4" : "in.png" // gif: an image input named .gif
        let source =
            isVideo
            ? TestData.path("video/synthetic/gop4s_bframes_av_10s.mp4") : TestData.path("images/pillow/hopper.png")
        let input = dir.appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: source, toPath: input)
        let before = try Data(contentsOf: URL(fileURLWithPath: input))
        var args = [command, input, "-o", input, "--overwrite"]
        if command == "clip" { args += ["--start", "0", "--end", "1"] }
        if command == "video" {
            args = [command, TestData.path("images/pillow/hopper.png"), "-o", input, "--overwrite", "--audio", input]
        }
        // Through another name for the same file too: a symbolic link.
        let link = dir.appendingPathComponent("link-" + name).path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: input)
        for output in [input, link] {
            var a = args
            a[a.firstIndex(of: "-o")! + 1] = output
            let r = try Shell.lapse(a)
            #expect(r.status == 64, "\(command): \(r.stderr)")
            #expect(r.stderr.contains("the output is the same file as the input"), "\(r.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == before)
        }
    }
}
