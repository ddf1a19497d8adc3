// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// A job file's outputs are its folder's: resolved against it, never outside it, unless `-o` says so (issue #42).
@Suite struct JobFileCLITests {
    static let clip = TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")

    /// Writes a job file into `dir` whose output is `output` (and GIF `gif`).
    func job(in dir: URL, output: String, gif: String? = nil) throws -> String {
        var object: [String: Any] = [
            "source": "video:" + Self.clip, "frameStep": 500, "size": "160x90", "output": output
        ]
        if let gif { object["gif"] = gif }
        let path = dir.appendingPathComponent("job.json").path
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func outputsAreRelativeToTheJobFile() throws {
        let dir = TestData.scratchDirectory("jobfile-relative")
        let path = try job(in: dir, output: "out.mp4", gif: "out.gif")
        // Run from another folder: the outputs land beside the job file, not in the current folder.
        let elsewhere = TestData.scratchDirectory("jobfile-cwd")
        let r = try Shell.lapse(["hyperlapse", "--config", path, "--quiet"], directory: elsewhere)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.mp4").path))
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.gif").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty)
    }

    /// The job file a run writes names its outputs relative to itself: a copy of the folder renders into the
    /// copy (a second newcomer copied a run's folder and its job file was refused: its paths were the old folder's).
    @Test func aCopiedRunsJobFileRendersIntoTheCopy() throws {
        let first = TestData.scratchDirectory("jobfile-first")
        let copy = TestData.scratchDirectory("jobfile-copy")
        defer { for d in [first, copy] { try? FileManager.default.removeItem(at: d) } }
        let made = try Shell.lapse([
            "hyperlapse", "--source", "video:" + Self.clip, "--frame-step", "500", "--size", "160x90",
            "-o", first.appendingPathComponent("a.mp4").path, "--gif", first.appendingPathComponent("a.gif").path,
            "--quiet"
        ])
        #expect(made.status == 0, "\(made.stderr)")
        let written = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: first.appendingPathComponent("a.job.json")))
                as? [String: Any])
        #expect(written["output"] as? String == "a.mp4" && written["gif"] as? String == "a.gif", "\(written)")
        try FileManager.default.removeItem(at: copy)
        try FileManager.default.copyItem(at: first, to: copy)
        for name in ["a.mp4", "a.gif"] { try FileManager.default.removeItem(at: copy.appendingPathComponent(name)) }
        let rerun = try Shell.lapse(["hyperlapse", "--config", copy.appendingPathComponent("a.job.json").path, "-y"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(FileManager.default.fileExists(atPath: copy.appendingPathComponent("a.mp4").path))
        #expect(FileManager.default.fileExists(atPath: copy.appendingPathComponent("a.gif").path))
    }

    @Test(arguments: [
        ("../escape.mp4", nil, "'output' (../escape.mp4) is outside the job file's folder"),
        ("/tmp/lapse-jobfile-escape.mp4", nil, "'output' (/tmp/lapse-jobfile-escape.mp4) is outside"),
        ("~/lapse-jobfile-escape.mp4", nil, "'output' (~/lapse-jobfile-escape.mp4) is outside"),
        ("inside.mp4", "../../escape.gif", "'gif' (../../escape.gif) is outside the job file's folder")
    ])
    func outputsMayNotLeaveTheFolder(output: String, gif: String?, message: String) throws {
        let dir = TestData.scratchDirectory("jobfile-escape")
        let path = try job(in: dir, output: output, gif: gif)
        let r = try Shell.lapse(["hyperlapse", "--config", path, "--overwrite", "--quiet"])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains(message) && r.stderr.contains("to write elsewhere"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/lapse-jobfile-escape.mp4"))
        #expect(
            !FileManager.default.fileExists(
                atPath: dir.deletingLastPathComponent().appendingPathComponent("escape.mp4").path))
    }

    /// `-o` on the command line wins, wherever it points.
    @Test func theCommandLineWins() throws {
        let dir = TestData.scratchDirectory("jobfile-flag")
        let path = try job(in: dir, output: "../escape.mp4")
        let other = TestData.scratchDirectory("jobfile-flag-out").appendingPathComponent("chosen.mp4").path
        let r = try Shell.lapse(["hyperlapse", "--config", path, "-o", other, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: other))
    }
}
