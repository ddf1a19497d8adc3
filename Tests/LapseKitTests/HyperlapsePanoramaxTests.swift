// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit
import Synchronization
import TestSupport
import Testing

/// The hyperlapse against the Panoramax stand-in (Tests/Fixtures/panoramax_standin.py) along its street in Lyon:
/// 190 m north then east, past a cropped 360° picture, one that cannot be placed, one without `view:azimuth` and
/// one with `pers:pitch`/`pers:roll` (the last three frames of a real 360° video from a car whose camera faces back).
@Suite struct HyperlapsePanoramaxTests {
    let dir = TestData.scratchDirectory("hyperpmx")
    static func id(_ n: Int) -> String { "6b1c7e52-0f1a-4c55-9a59-1a2b3c4d5e0\(n)" }
    /// The stand-in's folder under the temporary directory (the pictures it makes, made once).
    static let workdir = "lapse-panoramax-standin-v2"

    final class Collected: Sendable {
        private let list = Mutex<[String]>([])
        func add(_ message: String) { list.withLock { $0.append(message) } }
        var items: [String] { list.withLock { $0 } }
    }

    struct Log: Decodable { var served: [String] }

    func server() throws -> LocalServer {
        try LocalServer.panoramax(workdir: Self.workdir)
    }

    /// The route: the first picture, the corner 44.5 m north, 190 m east of it (the stand-in's flat-earth step).
    func settings(_ name: String) throws -> HyperlapseSettings {
        let corner = (45.76040, 4.83000)
        let east = corner.1 + 190 / (111_320 * cos(corner.0 * .pi / 180))
        let route = dir.appendingPathComponent("route.txt").path
        try "45.7600000,4.8300000\n45.7604000,4.8300000\n45.7604000,\(String(format: "%.7f", east))\n"
            .write(toFile: route, atomically: true, encoding: .utf8)
        var s = HyperlapseSettings()
        s.route = URL(fileURLWithPath: route)
        s.source = .panoramax
        s.spacing = 10
        s.radius = 8
        s.size = FrameSize(width: 320, height: 180)
        s.cacheDir = URL(fileURLWithPath: dir.appendingPathComponent("cache-" + name).path)
        s.output = dir.appendingPathComponent(name + ".mp4")
        return s
    }

    /// Six frames: the cropped picture does not stop the job, the unplaceable one is skipped with one warning; the
    /// picture without azimuth is posed (before stabilisation) along the road, east, and the stabiliser turns it
    /// by its pictures' motion and the positions to where the video's camera looks (back, west); pitch and roll are
    /// in the tilted picture's pose; every picture comes as the `sd` asset (a 320-pixel frame at 90° needs 960).
    @Test func croppedAzimuthlessAndTiltedPicturesMakeFrames() async throws {
        let server = try server()
        let s = try settings("pmx")
        let environment = ["LAPSE_PANORAMAX_URL": server.baseURL + "/api"]
        let warnings = Collected()
        let feed = try await s.makeFeed(warning: { warnings.add($0) }, environment: environment)
        let summary = try await s.makeJob(overwrite: false).run(feed: feed)
        #expect(summary.frames == 6 && summary.panoramas == 6)
        #expect(summary.orientations.map(\.pano) == [1, 2, 4, 6, 7, 8].map(Self.id))
        #expect(
            warnings.items.filter { $0.contains(Self.id(5)) }
                == [
                    """
                    Panoramax picture \(Self.id(5)): a 360° picture of 2000×700 is not 2:1 and has no \
                    visible_area to place it by; skipped
                    """
                ])
        #expect(try FFmpegReference.frameTimes(summary.output.path).count == 6)

        let stops = try await feed.lookup(0..<feed.pointCount).compactMap { $0 }
        let cropped = try #require(stops.first { $0.panoramaID == Self.id(4) })
        #expect(cropped.panorama?.crop?.top == 160 && cropped.panorama?.crop?.height == 736)
        let unknown = try #require(stops.first { $0.panoramaID == Self.id(7) })
        #expect(unknown.panorama?.headingSource == "none" && unknown.headingUncertainty == nil)
        #expect(abs(unknown.pose.heading - unknown.routePoint.heading) < 1e-9 && abs(unknown.pose.heading - 90) < 0.1)
        let tilted = try #require(stops.first { $0.panoramaID == Self.id(8) })
        #expect(tilted.pose == PanoramaPose(heading: 272, tilt: 4.5, roll: -2) && tilted.levelUncertainty == 3)

        let report = try #require(summary.stabilization)
        #expect(report.pairsMeasured >= 2, "\(report)")
        let seven = try #require(summary.orientations.first { $0.pano == Self.id(7) })
        #expect(seven.from == "positions+pixels", "\(seven)")
        #expect(abs(seven.sourceHeading - 90) < 0.1)
        #expect(abs(angleDifference(from: 272, to: seven.heading)) < 25, "\(seven)")
        let eight = try #require(summary.orientations.first { $0.pano == Self.id(8) })
        #expect(eight.from.hasPrefix("metadata") && eight.tilt > 0.5 && eight.roll < -0.3, "\(eight)")

        let log = try await HTTPClient.shared.getJSON(URL(string: server.baseURL + "/_log")!, as: Log.self)
        #expect(log.served.sorted() == [1, 2, 4, 6, 7, 8].map { Self.id($0) + "/sd" })
    }

    /// Without stabilisation the tilted picture's frame is its view posed with `pers:pitch` 4.5 and `pers:roll` −2
    /// (and clearly not the level one's).
    @Test func pitchAndRollPoseTheFrame() async throws {
        let server = try server()
        var s = try settings("level")
        s.stabilize = false
        s.crf = 1
        let feed = try await s.makeFeed(environment: ["LAPSE_PANORAMAX_URL": server.baseURL + "/api"])
        var job = try s.makeJob(overwrite: false)
        job.creditPosition = nil // the pose is what is compared here; HyperlapseCreditTests checks the credit
        let summary = try await job.run(feed: feed)
        #expect(summary.frames == 6)
        var stops: [HyperlapseStop] = []
        for case let stop? in try await feed.lookup(0..<feed.pointCount) where stop.panoramaID != stops.last?.panoramaID
        {
            stops.append(stop)
        }
        #expect(stops.map(\.panoramaID) == [1, 2, 4, 6, 7, 8].map(Self.id))
        let points = stops.map { stop in
            var p = stop.routePoint
            p.coordinate = stop.position
            return p
        }
        let camera = try #require(CameraPath(job.camera).poses(for: points).last)
        let tilted = try #require(stops.last)
        let panorama = try await feed.image(for: tilted, region: nil)
        let projector = try Projector(width: 320, height: 180)
        let posed = try projector.render(panorama, pose: tilted.pose, camera: camera)
        let level = try projector.render(panorama, pose: PanoramaPose(heading: 272), camera: camera)
        let toRGB = "scale=in_color_matrix=bt709:in_range=limited,format=rgba"
        let frame = try #require(try FFmpegReference.frames(summary.output.path, filters: toRGB, size: (320, 180)).last)
        let psnr = ImageMetrics.psnr(frame, posed)
        #expect(psnr >= 30, "\(psnr) dB")
        #expect(ImageMetrics.psnr(frame, level) < psnr - 5)
    }
}
