// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Errors met while writing name the file the user asked for, never the temporary file it was written as.
@Suite struct OutputErrorCLITests {
    /// `/proc` passes the folder checks (it exists and root may write to it) but no file can be created there.
    @Test(arguments: [
        ["video", TestData.path("images/pillow/hopper.png"), "-o", "/proc/lapse-x.mp4"],
        ["gif", TestData.path("images/pillow/hopper.png"), "-o", "/proc/lapse-x.gif"]
    ])
    func writeErrorsNameTheOutput(arguments: [String]) throws {
        let r = try Shell.lapse(arguments)
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("error: " + arguments.last! + ": "), "\(r.stderr)")
        #expect(!r.stderr.contains("partial"), "\(r.stderr)")
    }

    /// A video without a track has no positions to aim from.
    @Test func lookAtOnAVideoWithoutTrackIsAUsageError() throws {
        let r = try Shell.lapse([
            "hyperlapse", "--source", "video:" + TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"),
            "--look-at", "48.85,2.29", "-o",
            TestData.scratchDirectory("lookatvideo").appendingPathComponent("x.mp4").path
        ])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--look-at needs positions"), "\(r.stderr)")
    }
}
