// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
import TestSupport
import Testing

@testable import LapsePanorama

/// A 2:1 picture is known for a 360° one, without metadata, when its left and right edges meet
/// (``VideoPanoramaSource/wrapsAround(_:)``): every real 360° picture of the shared data does, at the size the
/// check looks at (512 × 256); the same pictures cut to 2:1 elsewhere (flat pictures of 2:1) do not.
@Suite struct WrapAroundTests {
    static let real360 = [
        "pano360/trekview_360/GSAG2002.JPG", "pano360/trekview_360/R0014760.JPG",
        "pano360/geovisio_gopromax_walk/1.jpg", "pano360/geovisio_gopromax_walk/5.jpg",
        "pano360/trekview_gpano_pose/GSAQ3296.JPG", "pano360/trekview_worldlock_bike/GS010013-worldlock_000001.jpg"
    ]

    static func columns(_ p: PixelBuffer, from x0: Int, count: Int) -> PixelBuffer {
        var out = PixelBuffer(width: count, height: p.height)
        for y in 0..<p.height {
            let src = (y * p.width + x0) * 4
            out.bytes.replaceSubrange((y * count * 4)..<((y + 1) * count * 4), with: p.bytes[src..<(src + count * 4)])
        }
        return out
    }

    @Test func real360PicturesWrapAndFlatOnesDoNot() throws {
        for name in Self.real360 {
            let p = try DecodedImage(url: URL(fileURLWithPath: TestData.path(name))).pixels(width: 512, height: 256)
            #expect(VideoPanoramaSource.wrapsAround(p), "\(name)")
            // A flat picture of 2:1: the middle half of it (90° either side of its centre), stretched.
            let half = try Self.columns(p, from: 128, count: 256).resized(width: 512, height: 256)
            #expect(!VideoPanoramaSource.wrapsAround(half), "\(name), its middle half")
        }
        let video = try VideoFrameReader(
            URL(fileURLWithPath: TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")))
        video.outputSize = (512, 256)
        #expect(VideoPanoramaSource.wrapsAround(try #require(try video.nextFrame()).pixels))
        #expect(
            try VideoFrameReader(URL(fileURLWithPath: TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")))
                .sphericalProjection == nil)
    }

    /// Photos: a 2:1 photo is a 360° one when its XMP (GPano ProjectionType) or its camera says so, or, saying
    /// nothing, when it wraps around; a flat one of 2:1 is skipped naming `--equirectangular`, and taken with it.
    @Test func flatPhotosOf2To1AreLeftOutUnlessSaidOtherwise() throws {
        let dir = TestData.scratchDirectory("wrap-photos")
        defer { try? FileManager.default.removeItem(at: dir) }
        let real = try DecodedImage(url: URL(fileURLWithPath: TestData.path("pano360/geovisio_gopromax_walk/1.jpg")))
            .pixels(
                width: 1024, height: 512)
        // The real photo written again without any XMP or camera tags: known by its edges.
        try GeotaggedPhoto.write(
            real, to: dir.appendingPathComponent("a-real.jpg").path, latitude: 49.0, longitude: 1.9,
            dateTime: "2026:11:30 10:00:00")
        // Its middle half stretched to 2:1: a flat picture.
        let flat = try Self.columns(real, from: 256, count: 512).resized(width: 1024, height: 512)
        try GeotaggedPhoto.write(
            flat, to: dir.appendingPathComponent("b-flat.jpg").path, latitude: 49.0, longitude: 1.9001,
            dateTime: "2026:11:30 10:00:01")
        // The same flat picture with GPano ProjectionType: taken at its word.
        try GeotaggedPhoto.write(
            flat, to: dir.appendingPathComponent("c-tagged.jpg").path, latitude: 49.0, longitude: 1.9002,
            dateTime: "2026:11:30 10:00:02", level: (pitch: 0, roll: 0))
        let source = try LocalPhotoSource(directory: dir)
        #expect(source.panoramas.map(\.id) == ["a-real.jpg", "c-tagged.jpg"])
        #expect(
            source.skipped.map(\.file) == ["b-flat.jpg"]
                && source.skipped[0].reason
                    == "not known to be a 360° photo: no GPano ProjectionType, not from a known 360° camera, and its "
                    + "left and right edges do not meet; give --equirectangular if it is one"
        )
        let insisted = try LocalPhotoSource(directory: dir, equirectangular: true)
        #expect(insisted.panoramas.count == 3 && insisted.skipped.isEmpty)
        // A real camera's photo says so itself.
        let gopro = try PhotoMetadata(url: URL(fileURLWithPath: TestData.path("pano360/trekview_360/GSAG2002.JPG")))
        #expect(gopro.saysSpherical && gopro.projectionType == "equirectangular")
        #expect(gopro.camera?.lowercased().contains("gopro") == true, "\(gopro.camera ?? "no camera")")
    }

    /// Two fisheye circles side by side (a dual-lens camera's original) are known by their black, even surround
    /// (``VideoPanoramaSource/isDualFisheye(_:)``): every real 360° picture of the shared data is not one (the
    /// photos, three frames a second of the demo video, max2sphere's GoPro MAX pictures, each also at half and a
    /// third of its exposure), nor is a black frame; each of
    /// them made into two fisheye circles of 200° (ffmpeg's `v360` to `dfisheye`, outside the circles black as a
    /// lens leaves it) is. A folder's dual-fisheye photo is skipped saying to export it.
    @Test func dualFisheyeIsKnownByItsCircles() throws {
        let dir = TestData.scratchDirectory("dual-fisheye")
        defer { try? FileManager.default.removeItem(at: dir) }
        var pictures =
            Self.real360.map(TestData.path)
            + (1...4).map {
                TestData.path("pano360/gopro_max_eac/3k/STITCHED/GS018423_\($0).jpg")
            }
        let video = try VideoFrameReader(
            URL(fileURLWithPath: TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")))
        video.outputSize = (512, 256)
        var n = 0
        while let frame = try video.nextFrame() {
            if n % 10 == 0 {
                let file = dir.appendingPathComponent("frame\(n).png").path
                try ImageWriter.write(frame.pixels, to: URL(fileURLWithPath: file), overwrite: true)
                pictures.append(file)
            }
            n += 1
        }
        #expect(pictures.count >= 22)
        let outside = "gt(hypot(mod(X,W/2)-W/4,Y-H/2),H/2)"
        for (k, picture) in pictures.enumerated() {
            let p = try DecodedImage(url: URL(fileURLWithPath: picture)).pixels(width: 512, height: 256)
            #expect(!VideoPanoramaSource.isDualFisheye(p), "\(picture)")
            // Darkened (under an overpass at a third of the exposure, its corners are dark and even too).
            for gain in [0.5, 0.3] {
                var dark = p
                for i in dark.bytes.indices where i % 4 != 3 {
                    dark.bytes[i] = UInt8((Double(dark.bytes[i]) * gain).rounded())
                }
                #expect(!VideoPanoramaSource.isDualFisheye(dark), "\(picture) at \(gain) of its exposure")
            }
            let fisheye = dir.appendingPathComponent("fisheye\(k).png").path
            let r = try Shell.run(
                "ffmpeg",
                [
                    "-v", "error", "-y", "-i", picture, "-vf",
                    "scale=1024:512,format=yuv444p,v360=input=e:output=dfisheye:h_fov=200:v_fov=200,"
                        + "geq=lum='if(\(outside),0,lum(X,Y))':cb='if(\(outside),128,cb(X,Y))'"
                        + ":cr='if(\(outside),128,cr(X,Y))'",
                    fisheye
                ])
            #expect(r.status == 0, "\(r.stderr)")
            let circles = try DecodedImage(url: URL(fileURLWithPath: fisheye)).pixels(width: 512, height: 256)
            #expect(VideoPanoramaSource.isDualFisheye(circles), "\(picture) as two fisheye circles")
            if k == 2 {
                try FileManager.default.createDirectory(
                    at: dir.appendingPathComponent("photos"), withIntermediateDirectories: true)
                try GeotaggedPhoto.write(
                    try DecodedImage(url: URL(fileURLWithPath: fisheye)).pixels(width: 1024, height: 512),
                    to: dir.appendingPathComponent("photos/fisheye.jpg").path, latitude: 49.0, longitude: 1.9,
                    dateTime: "2026:11:30 10:00:00")
                try GeotaggedPhoto.write(
                    try DecodedImage(url: URL(fileURLWithPath: picture)).pixels(width: 1024, height: 512),
                    to: dir.appendingPathComponent("photos/real.jpg").path, latitude: 49.0, longitude: 1.9001,
                    dateTime: "2026:11:30 10:00:01")
            }
        }
        #expect(!VideoPanoramaSource.isDualFisheye(PixelBuffer(width: 512, height: 256)))
        let source = try LocalPhotoSource(directory: dir.appendingPathComponent("photos"))
        #expect(source.panoramas.map(\.id) == ["real.jpg"])
        #expect(
            source.skipped.map(\.reason) == [
                "two fisheye pictures side by side (a dual-fisheye original), not equirectangular: export an "
                    + "equirectangular photo from it first"
            ], "\(source.skipped)")
    }
}
