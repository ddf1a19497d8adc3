// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
import TestSupport
import Testing

/// Only real 360° videos are panoramas (issue #40, item 3): a flat video cropped to 2:1 is refused, naming
/// `--equirectangular`; its spherical metadata, or the flag, makes it one; a real 360° video without metadata (the
/// demo's) is known by its edges, which meet.
@Suite struct SphericalVideoCLITests {
    let dir = TestData.scratchDirectory("spherical-cli")

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// The flat video of `telemetry/gpmf/max-heromode.mp4` (a GoPro MAX in its flat mode) cropped to 848 × 424.
    func flatTwoToOne() throws -> String {
        let out = path("flat.mp4")
        let r = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-i", TestData.path("telemetry/gpmf/max-heromode.mp4"), "-map", "0:v", "-vf",
                "crop=848:424", "-t", "1", "-c:v", "libx264", "-preset", "ultrafast", out
            ])
        #expect(r.status == 0, "\(r.stderr)")
        return out
    }

    @Test func aFlatVideoOf2To1IsRefusedUnlessSaidOtherwise() throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        let flat = try flatTwoToOne()
        let refused = try Shell.lapse([
            "hyperlapse", "--source", "video:" + flat, "--size", "320x180", "-o", path("a.mp4")
        ])
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(
            refused.stderr.hasPrefix(
                "error: \(flat): not known to be a 360° video: it has no spherical metadata and its left and right "
                    + "edges do not meet as a 360° picture's do; if it is one, give --equirectangular\n"),
            "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path("a.mp4")))
        // Insisted on: rendered.
        let insisted = try Shell.lapse([
            "hyperlapse", "--source", "video:" + flat, "--equirectangular", "--size", "320x180", "-o", path("b.mp4")
        ])
        #expect(insisted.status == 0, "\(insisted.stderr)")
        // Its spherical metadata (Spherical Video V1, as Google's injector writes it) says it is one: taken as such.
        try SphericalMetadata.inject(into: flat)
        #expect(try VideoFrameReader(URL(fileURLWithPath: flat)).sphericalProjection == "equirectangular")
        let tagged = try Shell.lapse([
            "hyperlapse", "--source", "video:" + flat, "--size", "320x180", "-o", path("c.mp4")
        ])
        #expect(tagged.status == 0, "\(tagged.stderr)")
        // `lapse panoramas` refuses the flat one too.
        let plain = try flatTwoToOne()
        let panos = try Shell.lapse(["panoramas", "--source", "video:" + plain, "-o", path("panos")])
        #expect(panos.status == 1 && panos.stderr.contains("give --equirectangular"), "\(panos.stderr)")
    }

    /// A video of two fisheye circles (a dual-lens camera's original, here the demo video made into one by ffmpeg's
    /// `v360` to `dfisheye`, black outside the circles as a lens leaves it), whatever its name, is refused in one
    /// line saying to export an equirectangular video; nothing is written.
    @Test func aDualFisheyeVideoIsRefused() throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let fisheye = path("VID_20261206_dual.mp4")
        let outside = "gt(hypot(mod(X,W/2)-W/4,Y-H/2),H/2)"
        let r = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-i", TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"), "-t", "1",
                "-vf",
                "v360=input=e:output=dfisheye:w=1024:h=512:h_fov=200:v_fov=200,"
                    + "geq=lum='if(\(outside),0,lum(X,Y))':cb='if(\(outside),128,cb(X,Y))'"
                    + ":cr='if(\(outside),128,cr(X,Y))'",
                "-c:v", "libx264", "-crf", "20", fisheye
            ])
        #expect(r.status == 0, "\(r.stderr)")
        let refused = try Shell.lapse(["hyperlapse", "--source", "video:" + fisheye, "-o", path("d.mp4")])
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(
            refused.stderr == "error: \(fisheye): two fisheye pictures side by side (a dual-fisheye original), not "
                + "equirectangular: export an equirectangular video from it first\n", "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path("d.mp4")))
    }
}
