// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit
import TestSupport
import Testing

/// The hyperlapse against the Map Tiles stand-in along the real Toronto–Montreal route geometry
/// (`maptiles_route_world.py`: 27 panoramas every 30 m over the first 900 m, a few metres off the road, a
/// 120 m stretch without coverage, a magenta marker in each at the direction of a target beside the road).
@Suite struct HyperlapseRouteTests {
    let dir = TestData.scratchDirectory("hyperroute")

    func settings(_ world: RouteWorld, _ name: String) -> HyperlapseSettings {
        var s = HyperlapseSettings()
        s.route = URL(fileURLWithPath: world.routeFile)
        s.source = .google
        s.spacing = 10
        s.radius = 20
        s.size = FrameSize(width: 640, height: 360)
        s.zoom = .level(1) // 1024 x 512 panoramas: small, for speed
        s.cacheDir = dir.appendingPathComponent("cache")
        s.output = dir.appendingPathComponent(name)
        return s
    }

    /// RGBA pixels of every frame of `path` decoded by the ffmpeg CLI through `filters` (ending in `format=rgba`).
    func decode(_ path: String, _ filters: String, size: (Int, Int)) throws -> [PixelBuffer] {
        try FFmpegReference.frames(path, filters: filters, size: size)
    }

    /// Frame count = panoramas used; every panorama's tiles downloaded once; the first frame is `lapse view` of the
    /// first panorama at frame 0's heading (the road's) outside the credit drawn in its corner; the credits sidecar
    /// and the MP4's metadata carry the imagery's copyright. With the default settings (stabilisation and tone
    /// matching on) Street View's pictures are not analysed (issue #43: Google's Map Tiles policies): no zoom-0
    /// analysis tile is asked for, the panoramas are posed as their metadata says, and the summary says why.
    @Test func framesFollowThePanoramasAlongTheRoute() async throws {
        let world = try RouteWorld(in: dir)
        #expect(world.panoramas.count == 27)
        var s = settings(world, "route.mp4")
        // Near-lossless H.264 (CRF 1; CRF 0, truly lossless, needs a profile other than the encoder's High), so the
        // first-frame comparison sees the colour conversion and little else; the render exact.
        s.crf = 1
        let job = try s.makeJob(overwrite: false)
        let feed = try await s.makeFeed(environment: world.environment)
        let summary = try await job.run(feed: feed)
        let output = s.output!

        // Every panorama of the world is used once, in order; points in the gap are skipped and counted.
        #expect(summary.panoramas == world.panoramas.count)
        #expect(summary.frames == world.panoramas.count)
        #expect((90...92).contains(summary.routePoints)) // 900 m every 10 m
        #expect(summary.gaps >= 6 && summary.duplicatesDropped > 0)
        #expect(summary.panoramas + summary.duplicatesDropped + summary.gaps == summary.routePoints)
        #expect(try FFmpegReference.frameTimes(output.path).count == world.panoramas.count)
        let served = try world.tilesServed()
        #expect(Set(served.keys.map { String($0.split(separator: "/")[0]) }) == Set(world.panoramas.map(\.id)))
        // Zoom 1 has 2 x 1 tiles; a 90° view may need only one of them (only the tiles a frame reads are fetched).
        #expect(
            served.count >= world.panoramas.count && served.count <= world.panoramas.count * 2, "\(served.count) tiles")
        #expect(served.values.allSatisfy { $0 == 1 })
        #expect(!served.keys.contains { $0.split(separator: "/")[1] == "0" }, "\(served.keys.sorted())")
        #expect(summary.stabilization == nil && summary.orientations.isEmpty)
        #expect(
            summary.posedFromMetadata == "Google's Map Tiles API policies allow no analysis of Street View pictures")

        // Attribution: sidecar and MP4 metadata.
        let credits = try String(contentsOfFile: dir.appendingPathComponent("route.credits.txt").path, encoding: .utf8)
        #expect(credits.contains("Google Maps Street View — " + world.copyright))
        let tags = try FFmpegReference.formatTags(output.path)
        #expect(tags["copyright"]?.contains(world.copyright) == true, "\(tags)")

        // Frame 0's heading: the camera path's, which must be the road's bearing ahead (the first 50 m of the
        // route run straight, so the bearing from its start to 50 m along it, computed here independently).
        var stops: [HyperlapseStop] = []
        for case let stop? in try await feed.lookup(0..<feed.pointCount) where stop.panoramaID != stops.last?.panoramaID
        {
            stops.append(stop)
        }
        #expect(stops.first?.panoramaID == world.panoramas[0].id)
        let heading = try #require(CameraPath(job.camera).poses(for: stops.map(\.routePoint)).first).heading
        let route = try RouteFile.read(URL(fileURLWithPath: world.routeFile)).coordinates
        var along = 0.0
        var ahead = route[0]
        for (a, b) in zip(route, route.dropFirst()) where along < 50 {
            along += a.distance(to: b)
            ahead = b
        }
        let roadBearing = route[0].initialBearing(to: ahead)
        #expect(abs(angleDifference(from: heading, to: roadBearing)) < 3, "camera \(heading)°, road \(roadBearing)°")

        // The reference: the first panorama's two zoom-1 tiles fetched with curl, put side by side by ffmpeg,
        // viewed with `lapse view` at that heading.
        let first = world.panoramas[0]
        let t0 = dir.appendingPathComponent("t0.jpg").path
        let t1 = dir.appendingPathComponent("t1.jpg").path
        try world.downloadTile(panoID: first.id, zoom: 1, x: 0, y: 0, to: t0)
        try world.downloadTile(panoID: first.id, zoom: 1, x: 1, y: 0, to: t1)
        let pano = dir.appendingPathComponent("pano0.png").path
        let stitched = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-nostdin", "-y", "-i", t0, "-i", t1, "-filter_complex",
                "hstack=inputs=2,format=rgb24", "-frames:v", "1", pano
            ])
        #expect(stitched.status == 0, "\(stitched.stderr)")
        let view = dir.appendingPathComponent("view0.png").path
        let viewed = try Shell.lapse([
            "view", pano, "--heading", String(heading), "--pano-heading", String(first.heading),
            "--size", "640x360", "-o", view
        ])
        #expect(viewed.status == 0, "\(viewed.stderr)")

        // H.264 carries 4:2:0 YUV: the reference goes through the same BT.709 limited-range conversion and back;
        // the video (near-lossless at CRF 1) is decoded with the same matrix.
        let toRGB = "scale=in_color_matrix=bt709:in_range=limited,format=rgba"
        let frame0 = try #require(try decode(output.path, toRGB, size: (640, 360)).first)
        let reference = try #require(
            try decode(
                view, "scale=out_color_matrix=bt709:out_range=limited,format=yuv420p," + toRGB,
                size: (640, 360)
            ).first)
        let plainReference = try #require(try decode(view, "format=rgba", size: (640, 360)).first)
        // The frame carries the imagery's credit in its bottom right corner (`lapse view` does not): compared
        // outside the credit's box (and that box, 2 px more for the decoder's chroma upsampling).
        let credit = try #require(Attribution(source: Attribution.googleStreetView, copyright: world.copyright).credit)
        let box = try #require(
            try CreditOverlay(corner: .bottomRight).box(for: credit, frameWidth: 640, frameHeight: 360))
        let outside = (x: box.x - 2, y: box.y - 2, width: box.width + 4, height: box.height + 4)
        #expect(box.x + box.width > 600 && box.y + box.height > 340 && box.width < 320 && box.height < 30, "\(box)")
        // The frame is rendered plane by plane from the tiles' own Y′CbCr (chroma resampled at its own resolution,
        // as ffmpeg's v360 does for yuv420p), `lapse view` in RGBA: the same picture (luma SSIM ≥ 0.995 outside
        // the credit), chroma a little sharper (about 37 dB in RGB; the RGBA path gave 40 and more).
        let psnr = ImageMetrics.psnr(frame0, reference, excluding: outside)
        #expect(psnr >= 36, "first frame vs lapse view through 4:2:0: \(psnr) dB")
        var masked = frame0
        for y in max(0, outside.y)..<min(360, outside.y + outside.height) {
            for x in max(0, outside.x)..<min(640, outside.x + outside.width) {
                for c in 0..<4 { masked.bytes[(y * 640 + x) * 4 + c] = reference.bytes[(y * 640 + x) * 4 + c] }
            }
        }
        let ssim = ImageMetrics.ssim(masked, reference)
        #expect(ssim >= 0.995, "first frame vs lapse view, SSIM \(ssim)")
        #expect(ImageMetrics.psnr(frame0, reference) < psnr - 5, "the credit is in the frame")
        // Without the 4:2:0 round trip the difference is the chroma subsampling alone (reported, loosely bounded).
        let plain = ImageMetrics.psnr(frame0, plainReference, excluding: outside)
        #expect(plain >= 30, "first frame vs lapse view in RGB: \(plain) dB")
        // The comparison can fail: 2° off gives a clearly worse match.
        let turned = dir.appendingPathComponent("view0-turned.png").path
        _ = try Shell.lapse([
            "view", pano, "--heading", String(heading + 2), "--pano-heading", String(first.heading),
            "--size", "640x360", "-o", turned
        ])
        let wrong = try #require(try decode(turned, "format=rgba", size: (640, 360)).first)
        #expect(ImageMetrics.psnr(frame0, wrong, excluding: outside) < psnr - 10)
    }

    /// `--look-at` the target: its marker (painted in each panorama at the target's direction as seen from
    /// where that panorama was taken) stays within 2% of the frame centre in every frame.
    @Test func lookAtKeepsTheTargetCentred() async throws {
        let world = try RouteWorld(in: dir)
        var s = settings(world, "lookat.mp4")
        s.lookAt = "\(world.target.latitude),\(world.target.longitude)"
        let summary = try await s.makeJob(overwrite: false).run(
            feed: try await s.makeFeed(environment: world.environment))
        #expect(summary.frames == world.panoramas.count)
        let frames = try decode(
            s.output!.path, "scale=in_color_matrix=bt709:in_range=limited,format=rgba", size: (640, 360))
        #expect(frames.count == world.panoramas.count)
        for (i, frame) in frames.enumerated() {
            let marker = try #require(Self.magentaCentroid(frame), "frame \(i): no marker")
            let dx = marker.x - 319.5
            let dy = marker.y - 179.5
            #expect(
                abs(dx) <= 0.02 * 640 && abs(dy) <= 0.02 * 360,
                "frame \(i) (\(world.panoramas[i].id)): marker at \(marker.x), \(marker.y) (\(marker.pixels) px)")
        }
    }

    /// Centroid of the magenta (#FF00FF after H.264) pixels, when there are at least 20.
    static func magentaCentroid(_ p: PixelBuffer) -> (x: Double, y: Double, pixels: Int)? {
        var sx = 0.0
        var sy = 0.0
        var n = 0
        for y in 0..<p.height {
            for x in 0..<p.width {
                let i = (y * p.width + x) * 4
                let r = Int(p.bytes[i])
                let g = Int(p.bytes[i + 1])
                let b = Int(p.bytes[i + 2])
                if r > 150 && b > 150 && g < 100 && abs(r - b) < 80 {
                    sx += Double(x)
                    sy += Double(y)
                    n += 1
                }
            }
        }
        return n >= 20 ? (sx / Double(n), sy / Double(n), n) : nil
    }
}
