// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit
import TestSupport
import Testing

@Suite struct HyperlapseJobTests {
    let dir = TestData.scratchDirectory("hyperlapse")
    let overpass = TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")

    /// `video:` source without stabilisation: every output frame is the perspective view of the matching source
    /// frame at the video's centre column, as `Projector` renders it from the decoded frame.
    @Test func videoSourceFramesAreTheProjectorsViews() async throws {
        var settings = HyperlapseSettings()
        settings.source = .video(file: URL(fileURLWithPath: overpass))
        settings.stabilize = false
        settings.frameStep = 20
        settings.size = FrameSize(width: 320, height: 180)
        settings.crf = 12
        settings.output = dir.appendingPathComponent("v.mp4")
        let job = try settings.makeJob(overwrite: false)
        let summary = try await job.run(feed: try await settings.makeFeed())
        #expect(summary.panoramas == 6) // frames 0, 20, …, 100 of 120
        #expect(summary.frames == 6)
        let output = try FFmpegReference.frames(
            summary.output.path, filters: "scale=in_color_matrix=bt709:in_range=limited", size: (320, 180))
        #expect(output.count == 6)
        let reader = try VideoFrameReader(URL(fileURLWithPath: overpass))
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
        let back = try projector.render(
            try VideoFrameReader(URL(fileURLWithPath: overpass)).frame(at: 0), camera: CameraPose(heading: 180, fov: 90)
        )
        #expect(ImageMetrics.psnr(output[0], back) < 25)
        // Credits sidecar and job file beside the output.
        let credits = try String(contentsOfFile: dir.appendingPathComponent("v.credits.txt").path, encoding: .utf8)
        #expect(credits.contains("overpass-clip.mp4"))
        let again = try HyperlapseSettings.read(dir.appendingPathComponent("v.job.json"))
        #expect(
            again.source == settings.source && again.frameStep == 20 && again.size == FrameSize(width: 320, height: 180)
        )
    }

    /// `video:` source, stabilised: the direction of travel is measured from the pictures, 180° from the video's
    /// centre column (the camera sits on the car's bonnet facing back at the driver: the view over the bonnet
    /// shows the overpasses coming closer), and every frame looks down the road that way, not at the occupants.
    @Test func videoSourceStabilisedLooksDownTheDirectionOfTravel() async throws {
        var settings = HyperlapseSettings()
        settings.source = .video(file: URL(fileURLWithPath: overpass))
        settings.frameStep = 4
        settings.size = FrameSize(width: 320, height: 180)
        settings.output = dir.appendingPathComponent("travel.mp4")
        let summary = try await settings.makeJob(overwrite: false).run(feed: try await settings.makeFeed())
        #expect(summary.frames == 30)
        let report = try #require(summary.stabilization)
        let mount = try #require(report.mountLongitude)
        #expect(abs(angleDifference(from: 180, to: mount)) < 10, "travel \(mount)° right of the centre column")
        #expect(report.pairsMeasured >= 27)
        #expect(summary.orientations.count == 30)
        let output = try FFmpegReference.frames(
            summary.output.path, filters: "scale=in_color_matrix=bt709:in_range=limited", size: (320, 180))
        let reader = try VideoFrameReader(URL(fileURLWithPath: overpass))
        let projector = try Projector(width: 320, height: 180)
        var n = 0
        // Which way each frame looks in the raw frame: the heading (every 10°) whose level view is most like it,
        // compared at 40 x 22 (the stabilised pose differs from the raw frame's by a few degrees of turn and tilt).
        func small(_ p: PixelBuffer) throws -> PixelBuffer { try p.resized(width: 40, height: 22) }
        while let (_, pixels) = try reader.nextFrame() {
            defer { n += 1 }
            guard n % 4 == 0, n / 4 < output.count else { continue }
            let frame = try small(output[n / 4])
            var best = (heading: 0.0, psnr: -Double.infinity)
            for heading in stride(from: 0.0, to: 360, by: 10) {
                let psnr = ImageMetrics.psnr(
                    frame, try small(projector.render(pixels, camera: CameraPose(heading: heading, fov: 90))))
                if psnr > best.psnr { best = (heading, psnr) }
            }
            #expect(
                abs(angleDifference(from: 180, to: best.heading)) <= 20,
                "frame \(n) looks \(best.heading)° from the centre column")
        }
    }

    /// The job file renders the same video again, bit for bit.
    @Test func jobFileRendersTheSameVideo() async throws {
        var settings = HyperlapseSettings()
        settings.source = .video(file: URL(fileURLWithPath: overpass))
        settings.frameStep = 30
        settings.size = FrameSize(width: 256, height: 144)
        settings.headingOffset = 30
        settings.output = dir.appendingPathComponent("a.mp4")
        _ = try await settings.makeJob(overwrite: false).run(feed: try await settings.makeFeed())
        var again = try HyperlapseSettings.read(dir.appendingPathComponent("a.job.json"))
        again.output = dir.appendingPathComponent("b.mp4")
        _ = try await again.makeJob(overwrite: false).run(feed: try await again.makeFeed())
        let a = try Data(contentsOf: dir.appendingPathComponent("a.mp4"))
        let b = try Data(contentsOf: dir.appendingPathComponent("b.mp4"))
        #expect(a == b)
    }

    /// The video's frames rendered as Y′CbCr straight into the encoder (the default for a BT.709 video) give
    /// the MP4 the RGBA path gives (`rgbaOnly`): the same frame count and timestamps, every frame SSIM ≥ 0.98 and
    /// its mean colour within 1.5 code values per channel (both encoded at CRF 12); and the GIF made beside it
    /// (its frames scaled and converted from the Y′CbCr view) the GIF of the RGBA path: as many frames, each
    /// SSIM ≥ 0.95 and its mean colour within 2 code values (two palettes' dithering apart).
    @Test func yuvPathGivesTheRGBAPathsVideo() async throws {
        func run(_ name: String, rgbaOnly: Bool) async throws -> String {
            var settings = HyperlapseSettings()
            settings.source = .video(file: URL(fileURLWithPath: overpass))
            settings.frameStep = 6
            settings.size = FrameSize(width: 320, height: 180)
            settings.crf = 12
            settings.stabilize = false
            settings.output = dir.appendingPathComponent(name + ".mp4")
            settings.gif = dir.appendingPathComponent(name + ".gif")
            let feed = try await settings.makeFeed()
            #expect(feed.yuvImages)
            var job = try settings.makeJob(overwrite: false)
            job.rgbaOnly = rgbaOnly
            _ = try await job.run(feed: feed)
            return settings.output!.path
        }
        let yuv = try await run("yuv-path", rgbaOnly: false)
        let rgba = try await run("rgba-path", rgbaOnly: true)
        #expect(try FFmpegReference.frameTimes(yuv) == FFmpegReference.frameTimes(rgba))
        let a = try FFmpegReference.frames(
            yuv, filters: "scale=in_color_matrix=bt709:in_range=limited", size: (320, 180))
        let b = try FFmpegReference.frames(
            rgba, filters: "scale=in_color_matrix=bt709:in_range=limited", size: (320, 180))
        #expect(a.count == 20 && b.count == 20)
        for (x, y) in zip(a, b) {
            let ssim = ImageMetrics.ssim(x, y)
            let d = ImageMetrics.meanColour(x) - ImageMetrics.meanColour(y)
            #expect(ssim >= 0.98, "SSIM \(ssim)")
            #expect(abs(d.x) <= 1.5 && abs(d.y) <= 1.5 && abs(d.z) <= 1.5, "\(d)")
        }
        let gifs = try ["yuv-path", "rgba-path"].map { name in
            try FFmpegReference.frames(
                dir.appendingPathComponent(name + ".gif").path, filters: "format=rgba", size: (106, 60))
        }
        #expect(gifs[0].count == 20 && gifs[1].count == 20)
        for (x, y) in zip(gifs[0], gifs[1]) {
            let ssim = ImageMetrics.ssim(x, y)
            let d = ImageMetrics.meanColour(x) - ImageMetrics.meanColour(y)
            #expect(ssim >= 0.95, "GIF SSIM \(ssim)")
            #expect(abs(d.x) <= 2 && abs(d.y) <= 2 && abs(d.z) <= 2, "GIF \(d)")
        }
    }

    @Test func gifAndCrossfade() async throws {
        var settings = HyperlapseSettings()
        settings.source = .video(file: URL(fileURLWithPath: overpass))
        settings.frameStep = 40
        settings.size = FrameSize(width: 320, height: 160)
        settings.crossfade = true
        settings.output = dir.appendingPathComponent("c.mp4")
        settings.gif = dir.appendingPathComponent("c.gif")
        let summary = try await settings.makeJob(overwrite: false).run(feed: try await settings.makeFeed())
        // 3 panoramas, 2 blended frames between them.
        #expect(summary.panoramas == 3)
        #expect(summary.frames == 5)
        let gif = try GIFFile(url: dir.appendingPathComponent("c.gif"))
        #expect(gif.width == 106)
        #expect(gif.images.count >= 2)
    }

    @Test func settingsErrors() async throws {
        var s = HyperlapseSettings()
        s.source = .video(file: URL(fileURLWithPath: "x.mp4"))
        #expect(throws: LapseError.self) { try s.makeJob(overwrite: false) } // no output
        s.output = URL(fileURLWithPath: "x.mp4")
        s.lookAt = "1,2"
        s.headingOffset = 10
        #expect(throws: LapseError.self) { try s.makeJob(overwrite: false) } // two camera modes
        s.headingOffset = nil
        // An unknown source is refused where it is parsed, naming what `source` takes; in a job file, naming the key.
        #expect { try PanoramaSourceSetting(parsing: "flickr") } throws: { error in
            (error as? LapseError)
                == .usage("`source` takes google, panoramax, mapillary, local:DIR or video:FILE, not 'flickr'")
        }
        let flickr = dir.appendingPathComponent("flickr.json")
        try Data(#"{"source": "flickr"}"#.utf8).write(to: flickr)
        #expect { try HyperlapseSettings.read(flickr) } throws: { error in
            (error as? LapseError)?.description
                == "\(flickr.path): 'source': takes google, panoramax, mapillary, local:DIR or video:FILE, not 'flickr'"
        }
        let bad = dir.appendingPathComponent("bad.json")
        try Data(#"{"sauce": "google"}"#.utf8).write(to: bad)
        #expect { try HyperlapseSettings.read(bad) } throws: { error in
            (error as? LapseError)?.description == "\(bad.path): unknown key 'sauce'"
        }
    }

    /// `--config old.job.json -o new.mp4`: a GIF named after the old output follows the new one; a GIF named
    /// otherwise, or given with the new output, stays as given.
    @Test func gifFollowsANewOutput() {
        var file = HyperlapseSettings()
        file.output = URL(fileURLWithPath: "/w/old.mp4")
        file.gif = URL(fileURLWithPath: "/w/old.gif")
        var flags = HyperlapseSettings()
        flags.output = URL(fileURLWithPath: "/w/new.mp4")
        #expect(file.overridden(by: flags).gif?.shown == "/w/new.gif")
        flags.gif = URL(fileURLWithPath: "/w/mine.gif")
        #expect(file.overridden(by: flags).gif?.shown == "/w/mine.gif")
        flags.gif = nil
        file.gif = URL(fileURLWithPath: "/w/anim/other.gif")
        #expect(file.overridden(by: flags).gif?.shown == "/w/anim/other.gif")
        #expect(file.overridden(by: HyperlapseSettings()).gif?.shown == "/w/anim/other.gif")
    }

    /// Flags over a job file without a list of keys to keep in step: every key a job file can hold (all of them set
    /// here, each to a value unlike its default) is taken from the flags when they give it and kept otherwise,
    /// numbers exactly.
    @Test func everySettingIsOverridden() throws {
        let json = """
            {"from": "1,2", "to": "3,4", "via": ["5,6"], "provider": "osrm", "route": "/r.gpx", "source": "google",
             "track": "/t.gpx", "spacing": 7.25, "size": "640x360", "fov": 75.5, "fps": "30000/1001", "lookAt": "1,1",
             "headingOffset": 12.5, "keyframes": "/k.json", "zoom": "3", "crossfade": true, "output": "/o.mp4",
             "gif": "/g.gif", "gifWidth": 320, "cacheDir": "/c", "radius": 33.3, "crf": 18.5, "preset": "slow",
             "panoHeading": 123.456789012345, "frameStep": 3, "keyFile": "/key", "osrmURL": "http://x", "timeout": 2.5,
             "stabilize": false, "forward": -33.3, "toneMatch": false, "creditPosition": "top-left",
             "includeIndoor": true, "sharedCache": true, "copyright": "© 2026 A", "report": "/r.html"}
            """
        let all = try JSONDecoder().decode(HyperlapseSettings.self, from: Data(json.utf8))
        let keys = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(all)) as? [String: Any])
            .keys
        #expect(keys.count == 36) // every key (HyperlapseSettings.CodingKeys) but `frames`, which a run writes
        #expect(HyperlapseSettings().overridden(by: all) == all)
        #expect(all.overridden(by: HyperlapseSettings()) == all)
        var one = HyperlapseSettings()
        one.panoHeading = 0.1 + 0.2
        one.via = []
        var expected = all
        expected.panoHeading = 0.1 + 0.2
        expected.via = []
        #expect(all.overridden(by: one) == expected)
    }

    /// Values the flags could not give (a NaN, a zoom of 9, a size of 0x0) survive being overridden and are
    /// reported by makeJob, not a crash.
    @Test func uncheckedValuesAreReportedNotFatal() {
        var s = HyperlapseSettings()
        s.output = URL(fileURLWithPath: "/tmp/never.mp4")
        s.source = .video(file: URL(fileURLWithPath: "x.mp4"))
        s.fov = .nan
        s.zoom = .level(9)
        s.size = FrameSize(width: 0, height: 0)
        let merged = HyperlapseSettings().overridden(by: s)
        #expect(merged.zoom == .level(9) && merged.size == FrameSize(width: 0, height: 0) && merged.fov?.isNaN == true)
        #expect { try merged.makeJob(overwrite: false) } throws: { "\($0)".contains("size takes 16x16 to 8192x8192") }
        s.size = nil
        #expect(throws: LapseError.self) { try s.overridden(by: HyperlapseSettings()).makeJob(overwrite: false) }
    }

    /// A job file's numbers are held to the flags' ranges before any work: a frame step of 2⁶³ − 1 overflowed
    /// (signal 4), and a crf of 10⁶, a GIF −1 wide or a radius of 10³⁰⁰ ran.
    @Test func jobFileNumbersAreCheckedAsTheFlagsAre() async {
        func message(_ change: (inout HyperlapseSettings) -> Void) -> String? {
            var s = HyperlapseSettings()
            s.output = URL(fileURLWithPath: "/tmp/never.mp4")
            s.source = .video(file: URL(fileURLWithPath: "x.mp4"))
            change(&s)
            do {
                _ = try s.makeJob(overwrite: false)
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(message { $0.frameStep = Int.max } == "`frameStep` takes 1 to 10000, not \(Int.max)")
        #expect(message { $0.frameStep = 0 } == "`frameStep` takes 1 to 10000, not 0")
        #expect(message { $0.crf = 1e6 } == "`crf` takes 0 to 51, not 1000000")
        #expect(message { $0.gifWidth = -1 } == "`gifWidth` takes 16 to 4096, not -1")
        #expect(message { $0.radius = 1e300 } == "`radius` takes 1 to 1000, not 1e+300")
        #expect(message { $0.spacing = .nan } == "`spacing` takes 0.5 to 10000, not nan")
        // Every number a flag takes (issue #42: `"zoom": 9` was found only after the route was planned, a fov of
        // 0.5, 200 fps or a heading offset of 10⁹ ran).
        #expect(message { $0.zoom = .level(9) } == "`zoom` takes auto or 0 to 5, not 9")
        #expect(message { $0.fov = 0.5 } == "`fov` takes 1 to 179, not 0.5")
        #expect(message { $0.fps = FrameRate(200) } == "`fps` takes 1 to 120, not 200")
        #expect(message { $0.headingOffset = 1e9 } == "`headingOffset` takes -360 to 360, not 1000000000")
        #expect(message { $0.panoHeading = -361 } == "`panoHeading` takes -360 to 360, not -361")
        #expect(message { $0.forward = 400 } == "`forward` takes -360 to 360, not 400")
        #expect(
            message {
                $0.frameStep = 10000
                $0.crf = 51
                $0.gifWidth = 16
                $0.radius = 1
                $0.spacing = 0.5
                $0.zoom = .level(5)
                $0.fov = 179
                $0.fps = FrameRate(120)
                $0.panoHeading = -360
            } == nil)
        // The feed, made without a job (a library caller, `lapse preview`), holds its own numbers alike.
        var feedOnly = HyperlapseSettings()
        feedOnly.source = .video(
            file: URL(fileURLWithPath: TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")))
        feedOnly.frameStep = Int.max
        await #expect { _ = try await feedOnly.makeFeed() } throws: {
            "\($0)" == "`frameStep` takes 1 to 10000, not \(Int.max)"
        }
    }

    /// A job file's preset and timeout are checked before any work, as the flags are: a preset x264 does not have
    /// when the file is read (naming the key), the timeout when the job is made.
    @Test func jobFilePresetAndTimeoutAreChecked() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("preset-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("job.json").path
        try Data(#"{"output": "/tmp/never.mp4", "source": "google", "preset": "fastest"}"#.utf8)
            .write(to: URL(fileURLWithPath: file))
        #expect { try HyperlapseSettings.read(URL(fileURLWithPath: file)) } throws: {
            "\($0)" == "\(file): 'preset': takes one of \(EncoderPreset.names.joined(separator: ", ")), not 'fastest'"
        }
        var s = HyperlapseSettings()
        s.output = URL(fileURLWithPath: "/tmp/never.mp4")
        s.source = .google
        s.preset = .slow
        s.timeout = 0
        #expect { try s.makeJob(overwrite: false) } throws: { "\($0)" == "`timeout` takes 0.1 to 3600, not 0" }
    }

    @Test func jobFilePathsAreMadeAbsolute() {
        var s = HyperlapseSettings()
        s.source = .video(file: URL(fileURLWithPath: "clips/a.mp4"))
        s.route = URL(fileURLWithPath: "/abs/route.gpx")
        s.keyframes = URL(fileURLWithPath: "cam/../cam.json")
        s.output = URL(fileURLWithPath: "out.mp4")
        s.gif = URL(location: "https://example.com/not-a-path.gif")
        let a = s.withAbsolutePaths(relativeTo: URL(fileURLWithPath: "/work/jobs"))
        #expect(a.source?.description == "video:/work/jobs/clips/a.mp4")
        #expect(a.route?.shown == "/abs/route.gpx")
        #expect(a.keyframes?.shown == "/work/jobs/cam.json")
        #expect(a.output?.shown == "/work/jobs/out.mp4")
        #expect(a.gif?.shown == "https://example.com/not-a-path.gif")
        var local = HyperlapseSettings()
        local.source = .local(directory: URL(fileURLWithPath: "pics"))
        #expect(
            local.withAbsolutePaths(relativeTo: URL(fileURLWithPath: "/w")).source
                == .local(directory: URL(fileURLWithPath: "/w/pics")))
        local.source = .google
        #expect(local.withAbsolutePaths(relativeTo: URL(fileURLWithPath: "/w")).source == .google)
    }

    /// A camera whose heading keys lie in the second lookup window while a pitch key lies in the first: the
    /// streamed poses must wait for the heading key, giving the same video as when every pose waits for the whole
    /// route (a look-ahead longer than the route; the video's frames all face one way, so it changes nothing else).
    @Test func streamedPosesEqualWholeRoutePoses() async throws {
        var outputs: [[PixelBuffer]] = []
        for (name, lookAhead) in [("streamed", 50.0), ("whole", 1e7)] {
            let camera = dir.appendingPathComponent("\(name).json").path
            try Data(
                """
                {"lookAhead": \(lookAhead), "shots": [{"frame": 0, "mode": "keyframes"}],
                 "keyframes": [{"frame": 0, "heading": 0, "easing": "linear"}, {"frame": 50, "pitch": 0},
                               {"frame": 115, "heading": 90}]}
                """.utf8
            ).write(to: URL(fileURLWithPath: camera))
            var settings = HyperlapseSettings()
            settings.source = .video(file: URL(fileURLWithPath: overpass))
            settings.size = FrameSize(width: 96, height: 48)
            settings.crf = 0 // lossless: the frames as rendered
            settings.keyframes = URL(fileURLWithPath: camera)
            settings.output = dir.appendingPathComponent("\(name).mp4")
            let job = try settings.makeJob(overwrite: true)
            let summary = try await job.run(feed: try await settings.makeFeed())
            #expect(summary.frames == 120)
            outputs.append(try FFmpegReference.frames(summary.output.path, filters: "format=rgba", size: (96, 48)))
        }
        #expect(outputs[0].count == 120)
        for (i, (a, b)) in zip(outputs[0], outputs[1]).enumerated() { #expect(a == b, "frame \(i)") }
        // The heading does turn (the comparison can fail): frame 0 looks north, frame 119 east.
        #expect(ImageMetrics.psnr(outputs[0][0], outputs[0][119]) < 20)
    }

    /// A feed of 1000 points that records what the job asks for, and when.
    final class RecordingFeed: PanoramaFeed, @unchecked Sendable {
        // @unchecked: the logs are guarded by `lock`.
        let lock = NSLock()
        var lookupsStarted: [Int] = []
        /// For each image asked for: (point index, lookups started by then, tiles of a 2048 x 1024 panorama in its
        /// region).
        var images: [(point: Int, lookups: Int, tiles: Int)] = []
        var name: String { "recording" }
        var pointCount: Int { 1000 }
        var distance: Double { 9990 }
        var lookupWindow: Int { 100 }

        /// Point i: no coverage when i % 10 == 9; panorama "p<i/2>" otherwise (so pairs are duplicates).
        static func panoramaID(_ i: Int) -> String? { i % 10 == 9 ? nil : "p\(i / 2)" }

        func lookup(_ range: Range<Int>) async throws -> [HyperlapseStop?] {
            lock.withLock { lookupsStarted.append(range.lowerBound) }
            return range.map { i in
                Self.panoramaID(i).map { id in
                    let point = RoutePoint(
                        coordinate: Coordinate(uncheckedLatitude: 45, longitude: Double(i) * 1e-4),
                        distanceAlongRoute: Double(i) * 10, heading: 90)
                    return HyperlapseStop(
                        panoramaID: id, routePoint: point, pose: PanoramaPose(heading: 0),
                        attribution: Attribution(source: "test", author: i >= 950 ? "late" : "early"))
                }
            }
        }

        func image(for stop: HyperlapseStop, region: PanoramaRegion?) async throws -> PixelBuffer {
            let tiles = try region.map { try $0.cells(2048, 1024, 512, 512).filter { $0 }.count } ?? 32
            lock.withLock {
                images.append((Int(stop.routePoint.distanceAlongRoute / 10), lookupsStarted.count, tiles))
            }
            return PixelBuffer(
                width: 64, height: 32,
                fill: RGBA(UInt8(stop.routePoint.distanceAlongRoute.truncatingRemainder(dividingBy: 256)), 90, 160))
        }

        /// The small whole picture for the stabiliser (logged apart: it is not a frame's view).
        func analysisImage(for stop: HyperlapseStop) async throws -> PixelBuffer {
            lock.withLock { pictures.append((Int(stop.routePoint.distanceAlongRoute / 10), lookupsStarted.count)) }
            return PixelBuffer(width: 64, height: 32, fill: RGBA(90, 90, 160))
        }
        /// For each analysis picture asked for: (point index, lookups started by then).
        var pictures: [(point: Int, lookups: Int)] = []
    }

    /// Lookups run at most a window or two ahead of the frames being rendered (not the whole route first); each
    /// frame's panorama is asked for with the region its view reads; duplicates and gaps are counted across
    /// windows; credits of the last panoramas reach the MP4 metadata written at the end.
    @Test func lookupsStreamAheadOfRendering() async throws {
        let feed = RecordingFeed()
        var job = HyperlapseJob(output: dir.appendingPathComponent("stream.mp4"))
        job.width = 32
        job.height = 18
        job.overwrite = true
        let summary = try await job.run(feed: feed)

        var expectedFrames = 0
        var gaps = 0
        var duplicates = 0
        var previous: String?
        for i in 0..<1000 {
            guard let id = RecordingFeed.panoramaID(i) else {
                gaps += 1
                continue
            }
            if id == previous { duplicates += 1 } else { expectedFrames += 1 }
            previous = id
        }
        #expect(summary.frames == expectedFrames && summary.panoramas == expectedFrames)
        #expect(summary.gaps == gaps && summary.duplicatesDropped == duplicates)
        #expect(summary.routePoints == 1000)
        #expect(feed.lookupsStarted == Array(stride(from: 0, to: 1000, by: 100)))
        #expect(feed.images.count == expectedFrames)
        // One small picture of each panorama for the stabiliser, a little ahead of its frame.
        #expect(feed.pictures.count == expectedFrames)
        for p in feed.pictures {
            #expect(p.lookups <= p.point / 100 + 2, "picture of point \(p.point): \(p.lookups) lookups started")
        }
        #expect(
            feed.images.first.map { $0.lookups <= 2 } == true, "the first frame waits for one window, not the route")
        for image in feed.images {
            // The window holding the point, plus the one being looked up meanwhile (and one more at a window's edge).
            #expect(image.lookups <= image.point / 100 + 3, "point \(image.point): \(image.lookups) lookups started")
            #expect(image.tiles > 0 && image.tiles < 32, "a 90° view reads some of the 32 tiles, not all")
        }
        let copyright = try FFmpegReference.formatTags(summary.output.path)["copyright"] ?? ""
        #expect(copyright.contains("by early") && copyright.contains("by late"), "\(copyright)")
    }
}
