// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseGeo
import LapseKit
import LapseRender
import TestSupport
import Testing

/// The hyperlapse against the Mapillary stand-in (Tests/Fixtures/mapillary_standin.py): a route along the five real
/// GoPro MAX photos of `pano360/geovisio_gopromax_walk` served as one sequence, with a second sequence beside it.
@Suite struct HyperlapseMapillaryTests {
    let dir = TestData.scratchDirectory("hypermly")
    static func walk(_ n: Int) -> String { MapillaryStandIn.walk(n) }

    func settings(_ name: String) throws -> HyperlapseSettings {
        var s = HyperlapseSettings()
        s.route = try URL(fileURLWithPath: MapillaryStandIn.walkRoute(in: dir))
        s.source = .mapillary
        s.spacing = 1
        s.radius = 4
        s.size = FrameSize(width: 640, height: 360)
        s.crf = 0
        s.stabilize = false
        s.cacheDir = dir.appendingPathComponent("cache")
        s.output = dir.appendingPathComponent(name + ".mp4")
        return s
    }

    /// One frame per photo of the walk, in sequence order (the route resampled every metre: 10 points, the repeats
    /// dropped); each posed by its refined heading; each frame's credit names the photo's creator
    /// ("© ada_walks · CC BY-SA 4.0 · Mapillary") and is drawn in its corner and nowhere else; the credits file and
    /// the MP4 say the video is a CC BY-SA 4.0 derivative.
    @Test func aRouteThroughASequenceUsesEachPictureOnceWithItsCredit() async throws {
        let server = try MapillaryStandIn.server()
        let environment = ["MAPILLARY_ACCESS_TOKEN": MapillaryStandIn.token, "LAPSE_MAPILLARY_URL": server.baseURL]
        func run(_ name: String, _ corner: CreditCorner?, stabilize: Bool = false) async throws
            -> (HyperlapseJob.Summary, [(y: [UInt8], u: [UInt8], v: [UInt8])])
        {
            var s = try settings(name)
            s.stabilize = stabilize
            var job = try s.makeJob(overwrite: false)
            job.creditPosition = corner
            let summary = try await job.run(feed: try await s.makeFeed(environment: environment))
            return (summary, try FFmpegReference.yuv420pFrames(summary.output.path, width: 640, height: 360))
        }
        let (summary, framed) = try await run("mly-framed", .bottomRight)
        let (plain, unframed) = try await run("mly-plain", nil)
        #expect(summary.frames == 5 && summary.panoramas == 5, "\(summary.frames) \(summary.panoramas)")
        // Stabilised (Mapillary's licence allows analysing its pictures): the same five photos in sequence order,
        // each posed from its refined heading (12° less than the camera's compass).
        let (stable, _) = try await run("mly-stable", .bottomRight, stabilize: true)
        #expect(stable.orientations.map(\.pano) == (1...5).map(Self.walk))
        for (k, o) in stable.orientations.enumerated() {
            #expect(
                abs(angleDifference(from: MapillaryStandIn.walkEXIF[k].heading - 12, to: o.sourceHeading)) < 1e-3,
                "frame \(k): \(o)")
        }
        #expect(summary.attributions.compactMap(\.credit) == ["© ada_walks · CC BY-SA 4.0 · Mapillary"])
        let overlay = try CreditOverlay(corner: .bottomRight)
        let box = try #require(
            overlay.box(for: "© ada_walks · CC BY-SA 4.0 · Mapillary", frameWidth: 640, frameHeight: 360))
        HyperlapseCreditTests.expectCreditOnlyInBox(
            framed, unframed, width: 640, boxes: Array(repeating: box, count: 5), "mapillary")
        #expect(plain.frames == 5)
        // The second run took every picture from the cache (kept by its Cache-Control: max-age).
        #expect(summary.tilesDownloaded == 5 && plain.tilesDownloaded == 0 && plain.tilesFromCache == 5)

        let sidecar = try String(
            contentsOfFile: dir.appendingPathComponent("mly-framed.credits.txt").path, encoding: .utf8)
        #expect(
            sidecar == """
                Imagery credits (Mapillary):
                - Mapillary — by ada_walks — CC BY-SA 4.0
                This video is a derivative of CC-BY-SA imagery and is licensed under CC BY-SA 4.0: \
                https://creativecommons.org/licenses/by-sa/4.0/
                Made with lapse \(lapseVersion).

                """)
        let tags = try FFmpegReference.formatTags(summary.output.path)
        #expect(
            tags["copyright"]
                == "Mapillary — by ada_walks — CC BY-SA 4.0; "
                + "video licensed under CC BY-SA 4.0, https://creativecommons.org/licenses/by-sa/4.0/", "\(tags)")
    }

    /// Mapillary's imagery must carry its credit: `creditPosition` none is refused, as for Google and Panoramax.
    @Test func theCreditCannotBeLeftOut() throws {
        var s = try settings("mly-none")
        s.creditPosition = HyperlapseSettings.CreditPosition.none
        #expect(throws: LapseError.self) { _ = try s.makeJob(overwrite: false) }
    }
}
