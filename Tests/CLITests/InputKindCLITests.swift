// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Wrong kinds of input get an error about the input (#18 item 9), and `-y` replaces an output on every command
/// that writes one (#18 item 2).
@Suite struct InputKindCLITests {
    static let dir = TestData.scratchDirectory("input-kinds")

    /// A video given to `lapse video` (which made a silent 1-second still of its first frame), a still image given
    /// to `lapse clip` (which said "no video keyframe found"), a JPEG named `.mp4` given to clip.
    @Test func wrongKindsOfInputAreNamed() throws {
        let video = TestData.path("video/synthetic/quadrants_320x180.mp4")
        let still = TestData.path("images/pillow/hopper.jpg")
        let misnamed = Self.dir.appendingPathComponent("photo.mp4").path
        try? FileManager.default.removeItem(atPath: misnamed)
        try FileManager.default.copyItem(atPath: still, toPath: misnamed)
        let cases: [([String], String)] = [
            (
                ["video", video, "-o", Self.dir.appendingPathComponent("v.mp4").path],
                "error: \(video): a video (mov,mp4,m4a,3gp,3g2,mj2, 2.00 s), not a still image"
            ),
            (
                ["clip", still, "--start", "0", "--duration", "1", "-o", Self.dir.appendingPathComponent("c.mp4").path],
                "error: \(still): a still image (image2), not a video to cut"
            ),
            (
                [
                    "clip", misnamed, "--start", "0", "--duration", "1", "-o",
                    Self.dir.appendingPathComponent("c2.mp4").path
                ], "error: \(misnamed): a still image (jpeg_pipe), not a video to cut"
            )
        ]
        for (arguments, message) in cases {
            let r = try Shell.lapse(arguments)
            #expect(r.status == 1, "\(arguments): \(r.stderr)")
            #expect(r.stderr == message + "\n", "\(arguments)")
            #expect(!FileManager.default.fileExists(atPath: arguments[arguments.firstIndex(of: "-o")! + 1]))
        }
    }

    /// `-y` replaces an existing output on every command that writes one, as `--overwrite` does; without it the
    /// file is kept.
    @Test(arguments: ["video", "gif", "clip", "view", "route"])
    func dashYOverwritesEverywhere(command: String) throws {
        let image = TestData.path("images/pillow/hopper.png")
        let video = TestData.path("video/synthetic/quadrants_320x180.mp4")
        let ext = ["video": "mp4", "gif": "gif", "clip": "mp4", "view": "jpg", "route": "gpx"][command]!
        let out = Self.dir.appendingPathComponent("y-\(command).\(ext)").path
        let arguments: [String] =
            switch command {
            case "video": ["video", image, "-o", out]
            case "gif": ["gif", image, "-o", out]
            case "clip": ["clip", video, "--start", "0", "--duration", "1", "-o", out]
            case "view": ["view", TestData.path("pano360/trekview_360/GSAG2002.JPG"), "--size", "64x48", "-o", out]
            default: ["route", "--input", TestData.path("geo/sf_30km_h.gpx"), "-o", out]
            }
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: out))
        let refused = try Shell.lapse(arguments)
        #expect(refused.status == 1 && refused.stderr.contains("exists"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "someone else's")
        let replaced = try Shell.lapse(arguments + ["-y"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect((try? String(contentsOfFile: out, encoding: .utf8)) != "someone else's")
    }
}
