// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// A run killed outright (SIGKILL, a crash) cannot delete its temporary files; every command deletes those of
/// its own outputs when it runs again, and those of other outputs in the folder left unchanged for ten minutes
/// (and leaves running processes' alone), and Foundation's own atomic-write
/// temporaries (`.dat.nosync…`) are never made.
@Suite struct StaleTemporaryCLITests {
    static let commands: [(name: String, output: String, arguments: [String])] = [
        ("video", "out.mp4", ["video", TestData.path("images/pillow/hopper.png"), "--duration", "1"]),
        (
            "gif", "out.gif",
            ["gif", TestData.path("video/synthetic/gop4s_bframes_av_10s.mp4"), "--start", "0", "--duration", "1"]
        ),
        (
            "clip", "out.mp4",
            ["clip", TestData.path("video/synthetic/gop4s_bframes_av_10s.mp4"), "--start", "0", "--end", "1"]
        ),
        ("view", "out.png", ["view", TestData.path("pano360/trekview_360/R0014760.JPG"), "--size", "160x90"]),
        ("route", "out.geojson", ["route", "--input", TestData.path("geo/sf_30km_h.gpx")])
    ]

    @Test(arguments: commands.map(\.name))
    func staleTemporaryFilesOfTheOutputAreRemoved(command: String) throws {
        let c = try #require(Self.commands.first { $0.name == command })
        let dir = TestData.scratchDirectory("stale-" + command)
        // A pid that is not running: a child that has exited and been reaped.
        let child = try Shell.run("/bin/sh", ["-c", "echo $$"])
        let deadPID = try #require(Int32(child.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let ext = (c.output as NSString).pathExtension
        let stale = ".\(c.output).\(deadPID)-1f.partial.\(ext)"
        let running = ".\(c.output).1-2e.partial.\(ext)" // pid 1 always runs
        // Another output's, killed long ago (80 MB once, from a `lapse video` never run again with its output),
        // and one killed a minute ago, which may be another machine's writing into a shared folder.
        let otherOld = ".other.mp4.\(deadPID)-3d.partial.mp4"
        let otherRecent = ".recent.gif.\(deadPID)-4c.partial.gif"
        for name in [stale, running, otherOld, otherRecent] {
            try Data("x".utf8).write(to: dir.appendingPathComponent(name))
        }
        let old = Date().addingTimeInterval(-3600)
        try FileManager.default.setAttributes(
            [.modificationDate: old], ofItemAtPath: dir.appendingPathComponent(otherOld).path)
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-60)],
            ofItemAtPath: dir.appendingPathComponent(otherRecent).path)
        let r = try Shell.lapse(c.arguments + ["-o", dir.appendingPathComponent(c.output).path])
        #expect(r.status == 0, "\(r.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(left == [running, otherRecent, c.output].sorted(), "\(left)")
    }
}
