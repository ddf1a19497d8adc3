// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit
import Testing
import TestSupport

@Suite struct HyperlapseJobTests {
    let dir = TestData.scratchDirectory("hyperlapse")
    let overpass = TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")

    /// `video:` source: every output frame is the perspective view of the matching source frame, looking down the
    /// road (the video's centre column), as `Projector` renders it from the decoded frame.
    @Test func videoSourceFramesShowTheRoadAhead() async throws {
        var settings = HyperlapseSettings()
        settings.source = "video:" + overpass
        settings.frameStep = 20
        settings.size = "320x180"
        settings.crf = 12
        settings.output = dir.appendingPathComponent("v.mp4").path
        let job = try settings.makeJob(overwrite: false)
        let summary = try await job.run(feed: try await settings.makeFeed())
        #expect(summary.panoramas == 6)  // frames 0, 20, …, 100 of 120
        #expect(summary.frames == 6)
        let output = try FFmpegReference.frames(summary.output, filters: "scale=in_color_matrix=bt709:in_range=limited", size: (320, 180))
        #expect(output.count == 6)
        let reader = try VideoFrameReader(overpass)
        let projector = try Projector(width: 320, height: 180)
        var n = 0
        while let (_, pixels) = try reader.nextFrame() {
            defer { n += 1 }
            guard n % 20 == 0 else { continue }
            let expected = try projector.render(pixels, camera: CameraPose(heading: 0, fov: 90))
            #expect(ImageMetrics.psnr(output[n / 20], expected) >= 32, "frame \(n)")
            #expect(ImageMetrics.ssim(output[n / 20], expected) >= 0.9, "frame \(n)")
        }
        // Looking back instead gives a clearly different picture: the comparison can fail.
        let back = try projector.render(try VideoFrameReader(overpass).frame(at: 0), camera: CameraPose(heading: 180, fov: 90))
        #expect(ImageMetrics.psnr(output[0], back) < 25)
        // Credits sidecar and job file beside the output.
        let credits = try String(contentsOfFile: dir.appendingPathComponent("v.credits.txt").path, encoding: .utf8)
        #expect(credits.contains("overpass-clip.mp4"))
        let again = try HyperlapseSettings.read(path: dir.appendingPathComponent("v.job.json").path)
        #expect(again.source == settings.source && again.frameStep == 20 && again.size == "320x180")
    }

    /// The job file renders the same video again, bit for bit.
    @Test func jobFileRendersTheSameVideo() async throws {
        var settings = HyperlapseSettings()
        settings.source = "video:" + overpass
        settings.frameStep = 30
        settings.size = "256x144"
        settings.headingOffset = 30
        settings.output = dir.appendingPathComponent("a.mp4").path
        _ = try await settings.makeJob(overwrite: false).run(feed: try await settings.makeFeed())
        var again = try HyperlapseSettings.read(path: dir.appendingPathComponent("a.job.json").path)
        again.output = dir.appendingPathComponent("b.mp4").path
        _ = try await again.makeJob(overwrite: false).run(feed: try await again.makeFeed())
        let a = try Data(contentsOf: URL(fileURLWithPath: dir.appendingPathComponent("a.mp4").path))
        let b = try Data(contentsOf: URL(fileURLWithPath: dir.appendingPathComponent("b.mp4").path))
        #expect(a == b)
    }

    @Test func gifAndCrossfade() async throws {
        var settings = HyperlapseSettings()
        settings.source = "video:" + overpass
        settings.frameStep = 40
        settings.size = "320x160"
        settings.crossfade = true
        settings.output = dir.appendingPathComponent("c.mp4").path
        settings.gif = dir.appendingPathComponent("c.gif").path
        let summary = try await settings.makeJob(overwrite: false).run(feed: try await settings.makeFeed())
        // 3 panoramas, 2 blended frames between them.
        #expect(summary.panoramas == 3)
        #expect(summary.frames == 5)
        let gif = try GIFFile(path: dir.appendingPathComponent("c.gif").path)
        #expect(gif.width == 106)
        #expect(gif.images.count >= 2)
    }

    @Test func settingsErrors() async throws {
        var s = HyperlapseSettings()
        s.source = "video:x.mp4"
        #expect(throws: LapseError.self) { try s.makeJob(overwrite: false) }  // no output
        s.output = "x.mp4"
        s.lookAt = "1,2"
        s.headingOffset = 10
        #expect(throws: LapseError.self) { try s.makeJob(overwrite: false) }  // two camera modes
        s.headingOffset = nil
        s.source = "flickr"
        await #expect(throws: LapseError.self) { try await s.makeFeed() }
        let bad = dir.appendingPathComponent("bad.json")
        try Data(#"{"sauce": "google"}"#.utf8).write(to: bad)
        #expect { try HyperlapseSettings.read(path: bad.path) } throws: { error in
            (error as? LapseError)?.description == "\(bad.path): unknown key 'sauce'"
        }
    }

    @Test func jobFilePathsAreMadeAbsolute() {
        var s = HyperlapseSettings()
        s.source = "video:clips/a.mp4"
        s.route = "/abs/route.gpx"
        s.keyframes = "cam/../cam.json"
        s.output = "out.mp4"
        s.gif = "https://example.com/not-a-path.gif"
        let a = s.withAbsolutePaths(relativeTo: "/work/jobs")
        #expect(a.source == "video:/work/jobs/clips/a.mp4")
        #expect(a.route == "/abs/route.gpx")
        #expect(a.keyframes == "/work/jobs/cam.json")
        #expect(a.output == "/work/jobs/out.mp4")
        #expect(a.gif == "https://example.com/not-a-path.gif")
        var local = HyperlapseSettings()
        local.source = "local:pics"
        #expect(local.withAbsolutePaths(relativeTo: "/w").source == "local:/w/pics")
        local.source = "google"
        #expect(local.withAbsolutePaths(relativeTo: "/w").source == "google")
    }
}
