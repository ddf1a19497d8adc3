// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit
import TestSupport
import Testing

/// The stabiliser's analysis on a real 360° video, whose pictures (``SphereImage``) and pair motions
/// (``PairMotion``) come back from tasks of their own (`StopPlanner`). Swift 6.3 laid out a 32-byte vector kept in
/// such a task's async frame at the wrong size, and the frame overwrote the heap block after it (an 8-byte write
/// past a task allocator slab, every run; in release builds an abort in glibc later, wherever the heap was next
/// checked) — see `LapseCore/StoredAsDoubles.swift`. `make leakcheck` runs this suite under AddressSanitizer, which
/// reported that write at once; here it also checks what the analysis found.
@Suite struct AsyncFramesTests {
    let dir = TestData.scratchDirectory("async-frames")

    /// Every sixth frame of the overpass clip (its 123 packets decode to 120 frames, as ffprobe -count_frames says):
    /// 20 stops, each analysed and rendered, the mount found down the road the clip drives along (the centre column
    /// faces back: 180°).
    @Test func theAnalysisTasksOfARealVideo() async throws {
        var s = HyperlapseSettings()
        s.source = .video(file: URL(fileURLWithPath: TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")))
        s.frameStep = 6
        s.size = FrameSize(width: 320, height: 180)
        s.output = dir.appendingPathComponent("overpass-\(UUID().uuidString).mp4")
        let summary = try await s.makeJob(overwrite: false).run(feed: try await s.makeFeed())
        let report = try #require(summary.stabilization)
        #expect(summary.routePoints == 20)
        #expect(summary.frames == 20)
        #expect(report.pairsMeasured >= 18, "\(report)")
        let mount = try #require(report.mountLongitude)
        #expect(abs(angleDifference(from: 180, to: mount)) < 15, "\(report)")
    }
}
