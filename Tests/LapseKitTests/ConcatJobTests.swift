// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit
import TestSupport
import Testing

@Suite struct ConcatJobTests {
    /// Videos online are joined as files are (read through the stand-in file server); they have no credits sidecars,
    /// so none is merged or looked for beside them.
    @Test func onlineVideosAreJoined() async throws {
        let server = try LocalServer(
            script: "http_file_server.py", arguments: ["--root", TestData.path("video/synthetic")])
        let online = URL(location: "\(server.baseURL)/gop4s_bframes_av_10s.mp4")
        let local = URL(fileURLWithPath: TestData.path("video/synthetic/gop4s_bframes_av_10s.mp4"))
        let output = TestData.scratchDirectory("concat-online").appendingPathComponent("joined.mp4")
        var job = ConcatJob(inputs: [online, local], output: output)
        job.overwrite = true
        let summary = try await job.run()
        #expect(summary.frames == 600)
        #expect(abs(summary.duration - 20) < 0.05)
        #expect(summary.inputs.map(\.shown) == [online.absoluteString, local.path])
        #expect(summary.credits == nil)
        let probe = try VideoFrameReader(output)
        #expect(abs((probe.duration ?? 0) - 20) < 0.05)
    }
}
