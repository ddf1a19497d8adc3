// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

@testable import LapseKit

/// Credits in the pictures, the sidecar and the metadata: Google Street View from the Map Tiles stand-in along the
/// real Toronto–Montreal route (`maptiles_route_world.py`, 60 m: 3 panoramas), Panoramax from its stand-in (two
/// pictures by two authors, one CC-BY-SA-4.0, one etalab-2.0), OSRM from the directions stand-in.
@Suite struct HyperlapseCreditTests {
    let dir = TestData.scratchDirectory("credit")

    /// Samples that differ between two planes `width` samples wide, inside and outside `box`.
    static func differences(_ a: [UInt8], _ b: [UInt8], width: Int, box: PixelRect) -> (inside: Int, outside: Int) {
        var inside = 0
        var outside = 0
        for i in a.indices where a[i] != b[i] {
            if box.contains(i % width, i / width) { inside += 1 } else { outside += 1 }
        }
        return (inside, outside)
    }

    /// Lossless video frames with and without a credit differ, in every frame, in the credit's box and nowhere
    /// else — exactly, in every plane of the 4:2:0 video (the box is even-aligned: whole chroma blocks); inside, most
    /// of the box is darker than the picture (a dark box with small white text).
    static func expectCreditOnlyInBox(
        _ framed: [(y: [UInt8], u: [UInt8], v: [UInt8])], _ plain: [(y: [UInt8], u: [UInt8], v: [UInt8])],
        width: Int, boxes: [PixelRect], _ what: String
    ) {
        #expect(framed.count == plain.count && framed.count == boxes.count, "\(what): \(framed.count) frames")
        for (k, (a, b)) in zip(framed, plain).enumerated() where k < boxes.count {
            let box = boxes[k]
            let chromaBox = PixelRect(x: box.x / 2, y: box.y / 2, width: box.width / 2, height: box.height / 2)
            let y = differences(a.y, b.y, width: width, box: box)
            let u = differences(a.u, b.u, width: width / 2, box: chromaBox)
            let v = differences(a.v, b.v, width: width / 2, box: chromaBox)
            #expect(
                y.outside == 0 && u.outside == 0 && v.outside == 0,
                "\(what) frame \(k): \(y.outside) Y, \(u.outside) U, \(v.outside) V samples outside \(box) changed")
            #expect(
                y.inside * 10 > box.width * box.height * 8,
                "\(what) frame \(k): \(y.inside) Y samples of \(box) changed")
            let darker = zip(a.y, b.y).enumerated().filter { i, p in box.contains(i % width, i / width) && p.0 < p.1 }
                .count
            #expect(darker * 2 > box.width * box.height, "\(what) frame \(k): \(darker) Y samples of \(box) darker")
        }
    }

    func googleSettings(_ world: RouteWorld, _ name: String) -> HyperlapseSettings {
        var s = HyperlapseSettings()
        s.route = URL(fileURLWithPath: world.routeFile)
        s.source = .google
        s.radius = 20
        s.size = FrameSize(width: 640, height: 360)
        s.zoom = .level(1)
        s.crf = 0 // lossless: the frames as drawn, but for the conversion to 4:2:0
        s.stabilize = false
        s.cacheDir = dir.appendingPathComponent("cache")
        s.output = dir.appendingPathComponent(name + ".mp4")
        return s
    }

    /// For each corner, Street View frames carry "Google Maps · <the panorama's copyright line>" in that corner (the
    /// text the Map Tiles policies ask for where the logo is not shown: issue #43), small,
    /// 10 px from the edges, and nothing else of the frame changes (against the same hyperlapse without a credit).
    @Test func googleCreditInEachCornerOnly() async throws {
        let world = try RouteWorld(arguments: ["--length", "60"], in: dir)
        #expect(world.panoramas.count == 3)
        func run(_ name: String, _ corner: CreditCorner?) async throws -> [(y: [UInt8], u: [UInt8], v: [UInt8])] {
            let s = googleSettings(world, name)
            var job = try s.makeJob(overwrite: false)
            #expect(job.creditPosition == .bottomRight && job.routeCredit == nil) // the defaults, for a route file
            job.creditPosition = corner
            let summary = try await job.run(feed: try await s.makeFeed(environment: world.environment))
            #expect(summary.frames == world.panoramas.count)
            return try FFmpegReference.yuv420pFrames(summary.output.path, width: 640, height: 360)
        }
        let plain = try await run("plain", nil)
        let credit = "Google Maps · " + world.copyright
        #expect(world.copyright == "© 2026 Stand-in Route Imagery")
        #expect(Attribution(source: Attribution.googleStreetView, copyright: world.copyright).credit == credit)
        for corner in CreditCorner.allCases {
            let framed = try await run(corner.rawValue, corner)
            let box = try #require(
                try CreditOverlay(corner: corner).box(for: credit, frameWidth: 640, frameHeight: 360))
            let left = corner == .topLeft || corner == .bottomLeft
            let top = corner == .topLeft || corner == .topRight
            // 0.5 em of 10 px from the edges (made even: 6 px); one 10 px line (12 px) and its padding; less than
            // two fifths of the width (a long copyright line after "Google Maps").
            #expect(
                (left ? box.x : 640 - box.x - box.width) == 6 && (top ? box.y : 360 - box.y - box.height) == 6,
                "\(corner): \(box)")
            #expect(box.height == 16 && box.width > 150 && box.width * 100 < 640 * 40, "\(corner): \(box)")
            Self.expectCreditOnlyInBox(
                framed, plain, width: 640, boxes: Array(repeating: box, count: 3), corner.rawValue)
        }
        // No CC BY-SA imagery, no route service: the sidecar credits the imagery alone.
        let sidecar = try String(contentsOfFile: dir.appendingPathComponent("plain.credits.txt").path, encoding: .utf8)
        #expect(
            sidecar
                == """
                Imagery credits (Google Street View):\n- Google Maps Street View — © 2026 Stand-in Route Imagery\nMade \
                with lapse \(lapseVersion).\n
                """
        )
    }

    /// The GIF's credit is drawn at the GIF's size after resizing (its own text of 9 px at least, not the video's
    /// shrunk), in its corner only: exactly, frame by frame as the job makes them (a real Street View frame), and in
    /// the GIF file against the same GIF without a credit (the GIF's palettes make the rest differ by a little).
    @Test func gifCreditIsDrawnAtTheGIFsSizeInItsCornerOnly() async throws {
        let world = try RouteWorld(arguments: ["--length", "60"], in: dir)
        let credit = "Google Maps · " + world.copyright
        func run(_ name: String, _ corner: CreditCorner?) async throws -> [PixelBuffer] {
            var s = googleSettings(world, name)
            s.gif = dir.appendingPathComponent(name + ".gif")
            var job = try s.makeJob(overwrite: false)
            job.creditPosition = corner
            let summary = try await job.run(feed: try await s.makeFeed(environment: world.environment))
            #expect(summary.gifSummary?.width == 213 && summary.gifSummary?.height == 120)
            return try FFmpegReference.frames(s.gif!.path, filters: "format=rgba", size: (213, 120))
        }
        let plainGIF = try await run("gif-plain", nil)
        let plainVideo = try FFmpegReference.frames(
            dir.appendingPathComponent("gif-plain.mp4").path,
            filters: "scale=in_color_matrix=bt709:in_range=limited,format=rgba", size: (640, 360))

        // The frames the job gives the encoders: the video frame credited at 640 x 360; the GIF frame, the frame
        // without its credit resized, then credited at 213 x 120.
        let overlay = try CreditOverlay(corner: .bottomLeft)
        let crediting = FrameCrediting(overlay: overlay, gifSize: (213, 120))
        var frame = plainVideo[0]
        let gifFrame = try #require(try crediting.apply(credit, to: &frame))
        let videoBox = try #require(overlay.box(for: credit, frameWidth: 640, frameHeight: 360))
        let gifBox = try #require(overlay.box(for: credit, frameWidth: 213, frameHeight: 120))
        // The video's credit shrunk to the GIF would be 5 px high; the GIF's is two lines of 9 px (one would be
        // too wide for 213 px) and its padding.
        #expect(gifBox.height == 24 && videoBox.height * 120 / 360 == 5, "GIF \(gifBox), video \(videoBox)")
        #expect(gifBox.x == 6 && gifBox.y + gifBox.height == 120 - 6 && gifBox.width < 213, "\(gifBox)")
        var plainGIFFrame = try plainVideo[0].resized(width: 213, height: 120)
        for (credited, clean, box, what) in [
            (frame, plainVideo[0], videoBox, "video"), (gifFrame, plainGIFFrame, gifBox, "GIF")
        ] {
            var inside = 0
            var outside = 0
            for y in 0..<clean.height {
                for x in 0..<clean.width where credited[x, y] != clean[x, y] {
                    if box.contains(x, y) { inside += 1 } else { outside += 1 }
                }
            }
            #expect(
                outside == 0 && inside * 10 > box.width * box.height * 8,
                "\(what): \(inside) inside, \(outside) outside \(box)")
        }
        overlay.draw(credit, into: &plainGIFFrame)
        #expect(plainGIFFrame == gifFrame)

        // The GIF files: the credit's box differs from the GIF without it by far more than the rest does.
        let framedGIF = try await run("gif-framed", .bottomLeft)
        #expect(framedGIF.count == plainGIF.count && framedGIF.count == 3)
        let box = (x: gifBox.x, y: gifBox.y, width: gifBox.width, height: gifBox.height)
        for (k, (a, b)) in zip(framedGIF, plainGIF).enumerated() {
            let rest = ImageMetrics.psnr(a, b, excluding: box)
            let whole = ImageMetrics.psnr(a, b)
            var darker = 0
            for y in gifBox.y..<gifBox.y + gifBox.height {
                for x in gifBox.x..<gifBox.x + gifBox.width where Int(a[x, y].g) + 20 < Int(b[x, y].g) { darker += 1 }
            }
            print(
                """
                GIF frame \(k): PSNR outside the credit \(rest) dB, whole frame \(whole) dB; \(darker) box pixels \
                darker
                """
            )
            #expect(rest >= 30, "frame \(k): outside the credit \(rest) dB")
            #expect(whole < rest - 6, "frame \(k): whole \(whole) dB, outside \(rest) dB")
            #expect(darker * 2 > gifBox.width * gifBox.height, "frame \(k): \(darker) box pixels darker")
        }
    }

    /// Panoramax: each frame carries its own picture's author and licence ("© Zoë Éléonore · etalab-2.0 ·
    /// Panoramax": accented, through FreeType), in its own box (a crossfade's blended frame both); the sidecar and
    /// the metadata say the video is a derivative under CC BY-SA 4.0 (one picture is CC-BY-SA-4.0).
    @Test func panoramaxFramesCarryTheirOwnAuthorAndLicence() async throws {
        let server = try LocalServer.panoramax(workdir: "lapse-panoramax-standin-v1")
        let route = dir.appendingPathComponent("pmx.txt").path
        try "45.76000,4.83000\n45.76040,4.83000\n".write(toFile: route, atomically: true, encoding: .utf8)
        func run(_ name: String, _ corner: CreditCorner?, crossfade: Bool = false)
            async throws -> (HyperlapseJob.Summary, [(y: [UInt8], u: [UInt8], v: [UInt8])])
        {
            var s = HyperlapseSettings()
            s.crossfade = crossfade
            s.route = URL(fileURLWithPath: route)
            s.source = .panoramax
            s.radius = 15
            s.size = FrameSize(width: 640, height: 360)
            s.crf = 0
            s.stabilize = false
            s.cacheDir = dir.appendingPathComponent("cache")
            s.output = dir.appendingPathComponent(name + ".mp4")
            var job = try s.makeJob(overwrite: false)
            job.creditPosition = corner
            let summary = try await job.run(
                feed: try await s.makeFeed(environment: ["LAPSE_PANORAMAX_URL": server.baseURL + "/api"]))
            return (summary, try FFmpegReference.yuv420pFrames(summary.output.path, width: 640, height: 360))
        }
        let (summary, framed) = try await run("pmx-framed", .topLeft)
        let (_, plain) = try await run("pmx-plain", nil)
        #expect(summary.frames == 2)
        let credits = summary.attributions.compactMap(\.credit)
        #expect(credits == ["© Alice Example · CC-BY-SA-4.0 · Panoramax", "© Zoë Éléonore · etalab-2.0 · Panoramax"])
        let overlay = try CreditOverlay(corner: .topLeft)
        let boxes = try credits.map { try #require(overlay.box(for: $0, frameWidth: 640, frameHeight: 360)) }
        #expect(
            boxes[0].x == 6 && boxes[0].y == 6 && boxes[1].x == 6 && boxes[1].y == 6
                && boxes[0].width != boxes[1].width, "\(boxes)")
        Self.expectCreditOnlyInBox(framed, plain, width: 640, boxes: boxes, "panoramax")
        // With --crossfade, the frame blended from the two pictures credits both, a line each.
        let (_, fadedFramed) = try await run("pmx-fade-framed", .topLeft, crossfade: true)
        let (_, fadedPlain) = try await run("pmx-fade-plain", nil, crossfade: true)
        let both = try #require(overlay.box(for: credits[0] + "\n" + credits[1], frameWidth: 640, frameHeight: 360))
        #expect(both.height == 28 && both.width == max(boxes[0].width, boxes[1].width), "\(both)")
        Self.expectCreditOnlyInBox(fadedFramed, fadedPlain, width: 640, boxes: [boxes[0], both, boxes[1]], "crossfade")

        let sidecar = try String(
            contentsOfFile: dir.appendingPathComponent("pmx-framed.credits.txt").path, encoding: .utf8)
        #expect(
            sidecar == """
                Imagery credits (Panoramax):
                - Panoramax — by Alice Example — CC-BY-SA-4.0
                - Panoramax — by Zoë Éléonore — etalab-2.0
                This video is a derivative of CC-BY-SA imagery and is licensed under CC BY-SA 4.0: \
                https://creativecommons.org/licenses/by-sa/4.0/
                Made with lapse \(lapseVersion).

                """)
        let tags = try FFmpegReference.formatTags(summary.output.path)
        #expect(
            tags["copyright"]
                == "Panoramax — by Alice Example — CC-BY-SA-4.0; Panoramax — by Zoë Éléonore — etalab-2.0; "
                + "video licensed under CC BY-SA 4.0, https://creativecommons.org/licenses/by-sa/4.0/", "\(tags)")
        #expect(tags["comment"]?.hasSuffix("etalab-2.0. " + HyperlapseJob.shareAlikeNotice) == true, "\(tags)")
    }

    /// A route planned by OSRM: the sidecar and the MP4 metadata credit OpenStreetMap's contributors (ODbL);
    /// a route from Google Directions or a file does not.
    @Test func osrmRouteCreditsOpenStreetMap() async throws {
        let world = try RouteWorld(arguments: ["--length", "60"], in: dir)
        let directions = try LocalServer(script: "directions_standin.py")
        let route = try RouteFile.read(URL(fileURLWithPath: world.routeFile)).coordinates
        var s = googleSettings(world, "osrm")
        s.route = nil
        s.from = "\(route.first!.latitude),\(route.first!.longitude)"
        s.to = "\(route.last!.latitude),\(route.last!.longitude)"
        s.provider = .osrm
        let job = try s.makeJob(overwrite: false)
        #expect(job.routeCredit == HyperlapseJob.openStreetMapRouteCredit)
        let summary = try await job.run(
            feed: try await s.makeFeed(
                environment: world.environment.merging(["LAPSE_OSRM_URL": directions.baseURL + "/osrm"]) { $1 }))
        #expect(summary.frames == world.panoramas.count)
        let sidecar = try String(contentsOfFile: dir.appendingPathComponent("osrm.credits.txt").path, encoding: .utf8)
        #expect(
            sidecar == """
                Imagery credits (Google Street View):
                - Google Maps Street View — © 2026 Stand-in Route Imagery
                Route data © OpenStreetMap contributors (ODbL), https://www.openstreetmap.org/copyright
                Made with lapse \(lapseVersion).

                """)
        let tags = try FFmpegReference.formatTags(summary.output.path)
        #expect(
            tags["copyright"]
                == """
                Google Maps Street View — © 2026 Stand-in Route Imagery; Route data © OpenStreetMap contributors \
                (ODbL), https://www.openstreetmap.org/copyright
                """,
            "\(tags)")
        #expect(
            tags["comment"]
                == """
                Hyperlapse made with lapse \(lapseVersion). Imagery: Google Maps Street View — © 2026 Stand-in Route \
                Imagery. 
                """
                + "Route data © OpenStreetMap contributors (ODbL), https://www.openstreetmap.org/copyright", "\(tags)")
        s.provider = .google
        #expect(try s.makeJob(overwrite: true).routeCredit == nil)
        s.provider = nil
        #expect(try s.makeJob(overwrite: true).routeCredit == nil) // Google Directions, the default
    }

    /// Video sources (and your own photos) have nothing to credit: the video with the default credit position is
    /// the video without a credit, byte for byte.
    @Test func videoSourceDrawsNothing() async throws {
        var outputs: [Data] = []
        for (name, corner) in [("v-default", CreditCorner.bottomRight), ("v-none", nil)] {
            var s = HyperlapseSettings()
            s.source = .video(
                file: URL(fileURLWithPath: TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")))
            s.frameStep = 40
            s.size = FrameSize(width: 320, height: 160)
            s.stabilize = false
            s.output = dir.appendingPathComponent(name + ".mp4")
            var job = try s.makeJob(overwrite: false)
            job.creditPosition = corner
            let summary = try await job.run(feed: try await s.makeFeed())
            #expect(summary.attributions.map(\.credit) == [nil])
            outputs.append(try Data(contentsOf: summary.output))
        }
        #expect(outputs[0] == outputs[1])
    }

    /// What each source's credit says; which licences are ShareAlike; a blended frame's credit.
    @Test func creditWording() {
        #expect(
            Attribution(source: "Google Street View", copyright: "© 2024 Google").credit
                == "Google Maps · © 2024 Google")
        #expect(Attribution(source: "Google Street View").credit == "Google Maps")
        #expect(
            Attribution(source: "Panoramax", author: "Zoë Éléonore", license: "CC-BY-SA-4.0").credit
                == "© Zoë Éléonore · CC-BY-SA-4.0 · Panoramax")
        #expect(Attribution(source: "Panoramax").credit == "Panoramax")
        #expect(Attribution(source: "local 360° photos").credit == nil)
        #expect(Attribution(source: "overpass-clip.mp4").credit == nil)
        #expect(Attribution(source: "my feed", author: "Ann", license: "CC-BY-4.0").credit == "© Ann · CC-BY-4.0")
        #expect(
            Attribution(source: "Google Street View").requiresCredit && Attribution(source: "Panoramax").requiresCredit)
        #expect(!Attribution(source: "local 360° photos").requiresCredit)
        for licence in [
            "CC-BY-SA-4.0", "CC BY-SA 2.0", "cc_by_sa_3.0", "https://creativecommons.org/licenses/by-sa/4.0/"
        ] {
            #expect(Attribution(source: "Panoramax", license: licence).isShareAlike, "\(licence)")
        }
        for licence in ["CC-BY-4.0", "etalab-2.0", "CC0-1.0"] {
            #expect(!Attribution(source: "Panoramax", license: licence).isShareAlike, "\(licence)")
        }
        #expect(HyperlapseJob.blendedCredit("A", "A") == "A" && HyperlapseJob.blendedCredit("A", "B") == "A\nB")
        #expect(HyperlapseJob.blendedCredit(nil, "B") == "B" && HyperlapseJob.blendedCredit(nil, nil) == nil)
    }

    /// `creditPosition` in settings and job files: the corners, `none` for your own imagery only.
    @Test func creditPositionSettings() throws {
        var s = HyperlapseSettings()
        s.output = URL(fileURLWithPath: "x.mp4")
        s.source = .video(file: URL(fileURLWithPath: "x.mp4"))
        #expect(try s.makeJob(overwrite: false).creditPosition == .bottomRight)
        for corner in CreditCorner.allCases {
            s.creditPosition = .corner(corner)
            #expect(try s.makeJob(overwrite: false).creditPosition == corner)
        }
        s.creditPosition = HyperlapseSettings.CreditPosition.none
        #expect(try s.makeJob(overwrite: false).creditPosition == nil)
        s.source = .local(directory: URL(fileURLWithPath: "pics"))
        #expect(try s.makeJob(overwrite: false).creditPosition == nil)
        for (source, name) in [(PanoramaSourceSetting.google, "Google Street View"), (.panoramax, "Panoramax")] {
            s.source = source
            #expect { try s.makeJob(overwrite: false) } throws: { error in
                (error as? LapseError)
                    == .usage(
                        """
                        `creditPosition` none is for your own photos and videos: \(name) imagery must carry its \
                        credit
                        """
                    )
            }
        }
        // Another word is refused where it is read: a job file names the key.
        let middle = dir.appendingPathComponent("middle.job.json")
        try Data(#"{"creditPosition": "middle"}"#.utf8).write(to: middle)
        #expect { try HyperlapseSettings.read(middle) } throws: { error in
            (error as? LapseError)?.description
                == """
                \(middle.path): 'creditPosition': takes one of bottom-right, bottom-left, top-left, top-right, none, \
                not 'middle'
                """
        }
        // A job file keeps it; flags override it.
        s.creditPosition = .corner(.topLeft)
        let file = dir.appendingPathComponent("c.job.json")
        try s.jsonData().write(to: file)
        let read = try HyperlapseSettings.read(file)
        #expect(read.creditPosition == .corner(.topLeft))
        var flags = HyperlapseSettings()
        flags.creditPosition = .corner(.bottomLeft)
        #expect(read.overridden(by: flags).creditPosition == .corner(.bottomLeft))
    }
}
