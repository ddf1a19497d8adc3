// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// `lapse concat` end to end: online inputs as files, every path named as it was typed.
@Suite struct ConcatCLITests {
    /// An online video and a local one are joined; the output, given relative to the working folder, is named so
    /// in the summary and the JSON, the online input with its query hidden nowhere it is the user's own.
    @Test func anOnlineAndALocalVideoAreJoined() throws {
        let server = try LocalServer(
            script: "http_file_server.py", arguments: ["--root", TestData.path("video/synthetic")])
        let online = "\(server.baseURL)/gop4s_bframes_av_10s.mp4"
        let local = TestData.path("video/synthetic/gop4s_bframes_av_10s.mp4")
        let dir = TestData.scratchDirectory("concat-cli")
        let text = try Shell.lapse(["concat", online, local, "-o", "joined.mp4", "--overwrite"], directory: dir)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("wrote joined.mp4: 2 videos joined, 600 frames"), "\(text.stdout)")
        let json = try Shell.lapse(
            ["concat", online, local, "-o", "joined.mp4", "--overwrite", "--json"], directory: dir)
        let summary = try #require(try JSONSummary.parse(json.stdoutData))
        #expect(summary["output"] as? String == "joined.mp4")
        #expect(summary["inputs"] as? [String] == [online, local])
        #expect(try FFmpegReference.frameTimes(dir.appendingPathComponent("joined.mp4").path).count == 600)
    }
}
