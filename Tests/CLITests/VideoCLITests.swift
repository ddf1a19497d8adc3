// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

@Suite struct VideoCLITests {
    let dir = TestData.scratchDirectory("videocli")

    func good(_ name: String) throws -> String {
        try GeneratedMedia.image("color=c=orange:s=64x48", to: dir.appendingPathComponent(name).path)
    }

    func leftovers() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".partial") }
    }

    @Test func helpAndVersion() throws {
        let help = try Shell.lapse(["--help"])
        #expect(help.status == 0)
        for command in ["hyperlapse", "route", "panoramas", "view", "video", "clip", "gif"] {
            #expect(help.stdout.contains(command))
        }
        let version = try Shell.lapse(["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("lapse "))
        let videoHelp = try Shell.lapse(["video", "--help"])
        #expect(videoHelp.status == 0 && videoHelp.stdout.contains("--image-duration"))
    }

    @Test(arguments: [
        (["video"], "no output (-o OUT.mp4)"),
        (["video", "-o", "x.avi", "a.png"], "must end in .mp4"),
        (["video", "-o", "x.gif", "a.png"], "must end in .mp4, .m4v or .mov (an animated GIF: lapse gif)"),
        (["video", "--fps", "0", "-o", "x.mp4", "a.png"], "--fps takes"),
        (["video", "--bogus", "-o", "x.mp4", "a.png"], "unknown option --bogus"),
        (["video", "--size", "12", "-o", "x.mp4", "a.png"], "--size takes"),
        (
            ["video", "--duration", "3", "--image-duration", "2", "-o", "x.mp4", "a.png"],
            "give --duration (one image) or --image-duration (each image), not both"
        ),
        (["nonsense"], "unknown command")
    ])
    func usageErrorsExit64(arguments: [String], message: String) throws {
        let r = try Shell.lapse(arguments)
        #expect(r.status == 64)
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    @Test(arguments: ["missing.jpg", "text.jpg", "truncated.jpg"])
    func badImageFailsWithOneLineAndNoOutput(bad: String) throws {
        try Data("not an image".utf8).write(to: dir.appendingPathComponent("text.jpg"))
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: TestData.path("images/pillow/hopper.jpg")))
        try jpeg.prefix(jpeg.count / 2).write(to: dir.appendingPathComponent("truncated.jpg"))
        let out = dir.appendingPathComponent("out-\(bad).mp4").path
        let badPath = dir.appendingPathComponent(bad).path
        let r = try Shell.lapse(["video", "--quiet", try good("a.png"), badPath, try good("b.png"), "-o", out])
        #expect(r.status == 1)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("error: \(badPath): ") == true, "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try leftovers().isEmpty)

        // --skip-invalid: a warning, and the video is made from the good images.
        let skipped = try Shell.lapse([
            "video", "--skip-invalid", "--image-duration", "0.5", "--json",
            try good("a.png"), badPath, try good("b.png"), "-o", out
        ])
        #expect(skipped.status == 0, "\(skipped.stderr)")
        #expect(skipped.stderr.contains("warning: skipped \(badPath)"))
        let summary = try #require(try JSONSummary.parse(skipped.stdoutData))
        #expect(summary["images"] as? Int == 2)
        #expect(summary["skipped"] as? Int == 1)
        // A skipped image takes no time: 2 × 0.5 s.
        #expect(summary["frames"] as? Int == 30)
    }

    @Test func noValidImageIsAnError() throws {
        try Data("x".utf8).write(to: dir.appendingPathComponent("t1.png"))
        let out = dir.appendingPathComponent("none.mp4").path
        let r = try Shell.lapse([
            "video", "--skip-invalid", "--quiet", dir.appendingPathComponent("t1.png").path, "-o", out
        ])
        #expect(r.status == 1)
        #expect(r.stderr.contains("no valid image"))
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func existingOutputIsKeptWithoutOverwrite() throws {
        let out = dir.appendingPathComponent("keep.mp4").path
        try Data("precious".utf8).write(to: URL(fileURLWithPath: out))
        let r = try Shell.lapse(["video", "--quiet", try good("a.png"), "-o", out])
        #expect(r.status == 1)
        #expect(r.stderr.contains("exists"))
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "precious")
        let o = try Shell.lapse(["video", "--quiet", "--overwrite", try good("a.png"), "-o", out])
        #expect(o.status == 0)
        #expect(try FFmpegReference.frameTimes(out).count == 30)
    }

    @Test func singleImageWithDurationAndDirectoryOrder() throws {
        let out = dir.appendingPathComponent("single.mp4").path
        let r = try Shell.lapse(["video", "--quiet", try good("one.png"), "--duration", "2.5", "--fps", "24", "-o", out]
        )
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try FFmpegReference.frameTimes(out).count == 60)

        // A directory is read in natural order: img2 before img10.
        let folder = dir.appendingPathComponent("seq")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try GeneratedMedia.image("color=c=red:s=32x32", to: folder.appendingPathComponent("img10.png").path)
        try GeneratedMedia.image("color=c=blue:s=32x32", to: folder.appendingPathComponent("img2.png").path)
        let seq = dir.appendingPathComponent("seq.mp4").path
        #expect(
            try Shell.lapse(["video", "--quiet", folder.path, "--image-duration", "0.1", "--fps", "10", "-o", seq])
                .status == 0)
        let frames = try FFmpegReference.frames(seq)
        #expect(frames.count == 2)
        #expect(frames[0][16, 16].b > 200 && frames[1][16, 16].r > 200)
    }

    @Test func progressLinesWhenNotATerminal() throws {
        let out = dir.appendingPathComponent("prog.mp4").path
        let r = try Shell.lapse(["video", try good("p.png"), "--duration", "1", "-o", out])
        #expect(r.status == 0)
        #expect(r.stderr.contains("encode: 30/30 frames (100%)"))
        #expect(r.stdout.contains("wrote \(out)"))
        #expect(r.stdout.contains("\n1 image in "), "\(r.stdout)") // one image, not "1 images"
        let quiet = try Shell.lapse(["video", "--quiet", "--overwrite", try good("p.png"), "-o", out])
        #expect(quiet.stderr.isEmpty && quiet.stdout.isEmpty)
        // A progress count of one agrees with its noun.
        let gif = try Shell.lapse([
            "gif", try good("p.png"), "-o", dir.appendingPathComponent("prog.gif").path, "--overwrite"
        ])
        #expect(gif.stderr.contains("gif: 1/1 image (100%)"), "\(gif.stderr)")
        #expect(!gif.stderr.contains("1 frames"), "\(gif.stderr)")
    }
}

/// `--fps` takes the NTSC rates exactly: 29.97 is 30000/1001 in the stream, and the frames' timestamps step by
/// 1001/30000 s; a rate out of range or not a number is a usage error.
@Suite struct FrameRateCLITests {
    @Test func ntscRatesAreExact() throws {
        let dir = TestData.scratchDirectory("fps-cli")
        let out = dir.appendingPathComponent("ntsc.mp4").path
        let r = try Shell.lapse([
            "video", TestData.path("images/pillow/hopper.png"), "--duration", "2", "--fps", "29.97", "-o", out, "--json"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSONSummary.parse(r.stdoutData)
        #expect(json?["frame_rate"] as? String == "30000/1001")
        #expect(json?["frames"] as? Int == 60)
        let rate = try FFmpegReference.probe(
            out, ["-select_streams", "v:0", "-show_entries", "stream=r_frame_rate,avg_frame_rate", "-of", "csv=p=0"])
        #expect(rate.trimmingCharacters(in: .whitespacesAndNewlines) == "30000/1001,30000/1001", "\(rate)")
        let times = try FFmpegReference.frameTimes(out)
        #expect(times.count == 60)
        #expect(times.enumerated().allSatisfy { abs($0.element - Double($0.offset) * 1001 / 30000) < 1e-4 })
        for bad in ["0", "241", "fast", "30/0"] {
            let u = try Shell.lapse(["video", TestData.path("images/pillow/hopper.png"), "--fps", bad, "-o", out, "-y"])
            #expect(
                u.status == 64 && u.stderr.contains("--fps takes frames per second from 1 to 240"),
                "\(bad): \(u.stderr)")
        }
    }
}

@Suite struct VersionCLITests {
    @Test(arguments: [["--version"], ["clip", "--version"], ["gif", "--version"]])
    func versionAnywhere(arguments: [String]) throws {
        let r = try Shell.lapse(arguments)
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("lapse "))
    }

    /// --quiet and --json may come before the command as after it: the same output either way.
    @Test func globalOptionsBeforeTheCommand() throws {
        let dir = TestData.scratchDirectory("global-options")
        let image = TestData.path("images/pillow/hopper.png")
        let before = try Shell.lapse([
            "--quiet", "--json", "video", image, "-o", dir.appendingPathComponent("a.mp4").path
        ])
        let after = try Shell.lapse([
            "video", image, "-o", dir.appendingPathComponent("b.mp4").path, "--quiet", "--json"
        ])
        #expect(before.status == 0 && after.status == 0, "\(before.stderr) \(after.stderr)")
        #expect(before.stderr.isEmpty && after.stderr.isEmpty)
        let a = try JSONSummary.parse(before.stdoutData)
        let b = try JSONSummary.parse(after.stdoutData)
        #expect(a?["frames"] as? Int == 30 && b?["frames"] as? Int == 30, "\(before.stdout)")
        let alone = try Shell.lapse(["--quiet"])
        #expect(alone.status == 64 && alone.stderr.hasPrefix("error: no command after --quiet"))
    }
}
