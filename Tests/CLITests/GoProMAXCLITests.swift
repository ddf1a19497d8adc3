// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
import LapseTelemetry
import TestSupport
import Testing

/// A GoPro MAX `.360` file as it comes off the camera (``GoProMAXFile``: the real cube-map frames of
/// `pano360/gopro_max_eac` as two HEVC streams, the real GPMF track between them) works with `--source video:`,
/// no export to equirectangular first (issue #40, item 2).
@Suite struct GoProMAXCLITests {
    let dir = TestData.scratchDirectory("gopro-max-cli")

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// `lapse panoramas` exports the file's frames as equirectangular pictures of its faces' size (2944 × 1472 for
    /// 3K), and each is max2sphere's picture of that frame (the reference converter's, scaled to it): ≥ 30 dB.
    @Test func panoramasUnfoldTheCubeMapAsTheReferenceConverterDoes() throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try GoProMAXFile.make(in: dir, fps: 4, loops: 1)
        // Without its GPS (the gpmd track left out) the frames are taken every N.
        let plain = path("plain.360")
        let strip = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-i", file, "-map", "0:0", "-map", "0:2", "-c", "copy",
                "-f", "mp4", plain
            ])
        #expect(strip.status == 0, "\(strip.stderr)")
        let r = try Shell.lapse([
            "panoramas", "--source", "video:" + plain, "--frame-step", "1", "--width", "2944", "-o", path("panos")
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: path("panos")).filter { $0.hasSuffix(".jpg") }
            .sorted()
        #expect(files.count == 4, "\(files)")
        for (k, name) in files.enumerated() {
            let ours = try DecodedImage(url: URL(fileURLWithPath: path("panos/" + name))).pixels()
            #expect(ours.width == 2944 && ours.height == 1472)
            let reference = try DecodedImage(
                url: URL(fileURLWithPath: TestData.path("pano360/gopro_max_eac/3k/STITCHED/GS018423_\(k + 1).jpg"))
            ).pixels()
            let scaled = try ours.resized(width: reference.width, height: reference.height)
            let psnr = ImageMetrics.psnr(scaled, reference)
            #expect(psnr >= 30, "frame \(k + 1): \(psnr) dB")
        }
    }

    /// `lapse hyperlapse --source video:FILE.360`: positions from the file's own GPMF GPS, frames rendered from
    /// the cube map; an Insta360 `.insv` is refused in one line saying to export it, and a file of two streams of
    /// another size is read as an ordinary video (and refused as one that is not 2:1).
    @Test func aHyperlapseOfA360File() throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try GoProMAXFile.make(in: dir, fps: 4, loops: 4)
        let r = try Shell.lapse([
            "hyperlapse", "--source", "video:" + file, "--spacing", "2", "--size", "480x270", "-o", path("max.mp4"),
            "--json", "--frame-step", "2"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        // Placed by its GPS, the video gives a frame every --spacing metres: --frame-step does not apply, and says so.
        #expect(
            r.stderr.contains(
                "--frame-step is for a video without positions: this one's own GPS places a frame every --spacing "
                    + "metres instead"), "\(r.stderr)")
        let summary = try #require(try JSONSummary.parse(r.stdoutData))
        #expect(summary["source"] as? String == "video (positions from the camera's GPS (GPMF))", "\(summary)")
        let frames = try #require(summary["frames"] as? Int)
        #expect(frames >= 3, "\(summary)")
        #expect(try FFmpegReference.frameTimes(path("max.mp4")).count == frames)
        #expect(try FFmpegReference.dimensions(path("max.mp4")) == (480, 270))

        // An Insta360 original (dual fisheye, 2:1 here) is refused, saying to export an equirectangular video.
        let insv = try Shell.lapse([
            "hyperlapse", "--source", "video:" + TestData.path("pano360/insta360_insv/sample.insv"), "-o",
            path("insv.mp4")
        ])
        #expect(insv.status == 1, "\(insv.stderr)")
        #expect(
            insv.stderr.contains(
                "an Insta360 original (.insv: two fisheye pictures, not equirectangular): export an "
                    + "equirectangular video from it first (Insta360 Studio)"), "\(insv.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path("insv.mp4")))
        // Renamed, it is known by the trailer Insta360 appends to its originals.
        let renamed = path("renamed.mp4")
        try FileManager.default.copyItem(atPath: TestData.path("pano360/insta360_insv/sample.insv"), toPath: renamed)
        let known = try Shell.lapse(["hyperlapse", "--source", "video:" + renamed, "-o", path("renamed-out.mp4")])
        #expect(known.status == 1 && known.stderr.contains("an Insta360 original"), "\(known.stderr)")

        let odd = path("odd.mp4")
        let make = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=640x360:d=1", "-f", "lavfi", "-i",
                "testsrc2=s=640x360:d=1", "-map", "0:v", "-map", "1:v", "-c:v", "libx264", odd
            ])
        #expect(make.status == 0, "\(make.stderr)")
        let refused = try Shell.lapse(["hyperlapse", "--source", "video:" + odd, "-o", path("odd-out.mp4")])
        #expect(refused.status == 1, "\(refused.stderr)")
        // (Two streams are read together only at GoPro MAX's sizes: this is a video of 640×360.)
        #expect(
            refused.stderr.hasPrefix("error: \(odd): not an equirectangular 360° video: 640×360 is not 2:1"),
            "\(refused.stderr)")
    }

    /// The file's gravity (GPMF `GRAV`, one vector a frame) levels each frame: the real track's camera was pitched
    /// 4°–8° down as it walked: every frame's pose is within 3° of its gravity's tilt and roll at the frame's time
    /// (1.5 σ of the 2° it is trusted to: the pictures' own motion pulls too, and here they come from another walk
    /// than the track), and its evidence names the level. Without the track the frames are taken to be upright
    /// (within the pictures' ±3°).
    @Test func itsGravityLevelsTheFrames() throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try GoProMAXFile.make(in: dir, fps: 4, loops: 2)
        func poses(_ source: String, _ name: String, _ extra: [String]) throws -> [[String: Any]] {
            let r = try Shell.lapse(
                ["hyperlapse", "--source", "video:" + source, "--size", "320x180", "-o", path(name + ".mp4")] + extra)
            #expect(r.status == 0, "\(r.stderr)")
            let job = try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: path(name + ".job.json"))))
            return (job as? [String: Any])?["frames"] as? [[String: Any]] ?? []
        }
        let levelled = try poses(file, "levelled", ["--spacing", "2"])
        #expect(levelled.count >= 2, "\(levelled)")
        let telemetry = try #require(try CameraTelemetry.read(ofVideo: URL(fileURLWithPath: file)))
        for frame in levelled {
            let tilt = frame["tilt"] as? Double ?? 0
            let roll = frame["roll"] as? Double ?? 99
            let time = try #require(Double((frame["pano"] as? String ?? "").dropFirst("video@".count)))
            let g = try #require(telemetry.gravity(at: time))
            let level = CameraGravity(time: time, vector: g).level
            #expect(level.tilt < -4 && abs(tilt - level.tilt) < 3 && abs(roll - level.roll) < 3, "\(frame) \(level)")
            #expect((frame["from"] as? String ?? "").contains("level"), "\(frame)")
        }
        let plain = path("plain.360")
        let strip = try Shell.run(
            "ffmpeg", ["-v", "error", "-y", "-i", file, "-map", "0:0", "-map", "0:2", "-c", "copy", "-f", "mp4", plain])
        #expect(strip.status == 0, "\(strip.stderr)")
        let upright = try poses(plain, "upright", [])
        #expect(upright.count == 8, "\(upright)")
        for frame in upright {
            let tilt = frame["tilt"] as? Double ?? 99
            let roll = frame["roll"] as? Double ?? 99
            #expect(abs(tilt) < 3 && abs(roll) < 3, "\(frame)")
            #expect(!(frame["from"] as? String ?? "level").contains("level"), "\(frame)")
        }
    }
}
