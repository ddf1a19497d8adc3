// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

@Suite struct ClipMatroskaCLITests {
    /// Matroska (FFmpeg 5.1) cannot hold a display matrix: the user is told, and MP4 keeps it.
    @Test func rotationLostInMatroskaIsReported() throws {
        let dir = TestData.scratchDirectory("clipmkv")
        let input = TestData.path("video/iphone_rotated.mov")
        let mkv = try Shell.lapse([
            "clip", input, "-o", dir.appendingPathComponent("a.mkv").path, "--start", "0", "--end", "1"
        ])
        #expect(mkv.status == 0)
        #expect(mkv.stderr.contains("warning: the input is rotated -90° but Matroska cannot store that"))
        let mp4 = try Shell.lapse([
            "clip", input, "-o", dir.appendingPathComponent("a.mp4").path, "--start", "0", "--end", "1"
        ])
        #expect(mp4.status == 0)
        #expect(!mp4.stderr.contains("warning"))
        let rotation = try FFmpegReference.probe(
            dir.appendingPathComponent("a.mp4").path,
            ["-select_streams", "v", "-show_entries", "stream_side_data=rotation", "-of", "csv=p=0"])
        #expect(rotation.trimmingCharacters(in: .whitespacesAndNewlines) == "-90")
    }
}
