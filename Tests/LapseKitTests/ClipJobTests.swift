// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit
import TestSupport
import Testing

/// ``ClipJob``, the library's `lapse clip`, run in-process: a cut of 2–5 s of the synthetic 10 s GOP-4 s video with
/// B-frames (30 fps) copies from the keyframe at 0 s, hides the 60 frames before the start and the one after the end
/// (a B-frame's forward reference) by the edit list: 90 frames shown, as ffprobe counts them; an existing output is
/// not replaced without `overwrite`, and a bad extension is refused before anything is read.
@Suite struct ClipJobTests {
    @Test func aCutOfARealVideo() async throws {
        let dir = TestData.scratchDirectory("clip-job")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let output = dir.appendingPathComponent("cut.mp4").path
        var job = ClipJob(
            input: URL(fileURLWithPath: TestData.path("video/synthetic/gop4s_bframes_av_10s.mp4")),
            output: URL(fileURLWithPath: output),
            options: ClipOptions(start: 2, end: 5))
        let result = try await job.run()
        #expect(result.keyframeTime == 0 && result.usesEditList && result.hasAudio)
        #expect(result.hiddenFrames == 60 && result.framesPastEnd == 1 && result.shownFrames == 90, "\(result)")
        #expect(try FFmpegReference.frameTimes(output).count == 90)
        await #expect(throws: LapseError.self) { try await job.run() }
        job.overwrite = true
        #expect(try await job.run().videoFrames == result.videoFrames)
        job.output = dir.appendingPathComponent("cut.txt")
        await #expect(throws: LapseError.self) { try await job.run() }
        #expect(!FileManager.default.fileExists(atPath: job.output.path))
    }
}
