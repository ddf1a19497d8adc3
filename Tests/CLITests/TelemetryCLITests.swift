// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// A 360° video whose file carries its camera's GPS (GoPro's GPMF `gpmd` track) has positions without `--track`
/// (issue #40, item 1, in part). No small real 360° video with telemetry is public: the real GoPro MAX track of
/// `telemetry/gpmf/max-heromode.mp4` (a walk of about 13 m) is muxed into the real 360° video of the demo.
@Suite struct TelemetryCLITests {
    let dir = TestData.scratchDirectory("telemetry-cli")

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    @Test func aVideosOwnGPSPlacesItsFrames() throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        let video = path("walk360.mp4")
        let mux = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-i", TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"),
                "-i", TestData.path("telemetry/gpmf/max-heromode.mp4"), "-map", "0:v", "-map", "1:3", "-c", "copy",
                "-tag:d:0", "gpmd", "-t", "5", video
            ])
        #expect(mux.status == 0, "\(mux.stderr)")
        let own = try Shell.lapse([
            "hyperlapse", "--source", "video:" + video, "--spacing", "1", "--size", "320x160", "-o", path("own.mp4"),
            "--report", path("own.html"), "--json"
        ])
        #expect(own.status == 0, "\(own.stderr)")
        let summary = try #require(try JSONSummary.parse(own.stdoutData))
        #expect(summary["source"] as? String == "video (positions from the camera's GPS (GPMF))")
        // The positions of the video's first four seconds of a 13 m walk: metres, a frame a metre or so.
        let distance = try #require(summary["distance"] as? Double)
        #expect(distance > 2 && distance < 12, "\(distance) m")
        #expect((summary["frames"] as? Int ?? 0) >= 3, "\(summary)")
        let report = try #require(try Browser.embeddedJSON(path("own.html"), id: "lapse-report") as? [String: Any])
        #expect(report["positions_known"] as? Bool == true)
        let points = report["points"] as? [[String: Any]] ?? []
        let near = points.allSatisfy {
            abs(($0["latitude"] as? Double ?? 0) - 33.1268) < 0.002
                && abs(($0["longitude"] as? Double ?? 0) + 117.3273) < 0.002
        }
        #expect(!points.isEmpty && near)

        // A track given wins over the camera's own.
        let gpx = path("elsewhere.gpx")
        try """
        <?xml version="1.0"?><gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
        <trkpt lat="52.44" lon="6.89"><time>2026-01-01T10:00:00Z</time></trkpt>
        <trkpt lat="52.4401" lon="6.89"><time>2026-01-01T10:00:04Z</time></trkpt>
        </trkseg></trk></gpx>
        """.write(toFile: gpx, atomically: true, encoding: .utf8)
        let given = try Shell.lapse([
            "hyperlapse", "--source", "video:" + video, "--track", gpx, "--size", "320x160", "-o", path("given.mp4"),
            "--json"
        ])
        #expect(given.status == 0, "\(given.stderr)")
        #expect(try JSONSummary.parse(given.stdoutData)?["source"] as? String == "video")
    }
}

/// A 360° video whose file carries Google's Camera Motion Metadata (a `camm` track, as Insta360, Ricoh Theta and
/// Labpano cameras write it) has positions without `--track`: a track written per the specification (GPS of
/// type 6 ten times a second along a straight 40 m, gyroscope, accelerometer, orientation and magnetometer packets
/// between them, one a sample) is added to the real 360° video of the demo (issue #40, item 1).
@Suite struct CAMMCLITests {
    let dir = TestData.scratchDirectory("camm-cli")

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    @Test func aVideosCAMMPlacesItsFrames() throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        let plain = path("plain.mp4")
        let copy = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-i", TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"), "-map",
                "0:v", "-c", "copy", "-t", "4", plain
            ])
        #expect(copy.status == 0, "\(copy.stderr)")
        // North along a meridian at 10 m/s from 52.44 N, 6.89 E: 40 m in 4 s.
        var samples: [(time: Double, bytes: [UInt8])] = []
        for k in 0..<40 {
            let t = Double(k) / 10
            let latitude = 52.44 + 10 * t / 111_195
            samples.append(
                (
                    t,
                    CAMMFile.packet(
                        6,
                        [
                            1_419_000_000 + t, Int32(3), latitude, 6.89, Float(30), Float(3), Float(5), Float(0),
                            Float(10), Float(0), Float(0.5)
                        ])
                ))
            let others: [[UInt8]] = [
                CAMMFile.packet(2, [Float(0.01), Float(0), Float(0)]),
                CAMMFile.packet(3, [Float(0), Float(9.81), Float(0)]),
                CAMMFile.packet(0, [Float(0), Float(0), Float(0)]),
                CAMMFile.packet(7, [Float(20), Float(0), Float(40)])
            ]
            samples.append((t + 0.05, others[k % others.count]))
        }
        let video = path("camm360.mp4")
        try CAMMFile.add(samples: samples, to: plain, output: video)
        let probe = try Shell.run(
            "ffprobe", ["-v", "error", "-show_entries", "stream=codec_tag_string", "-of", "csv=p=0", video])
        #expect(probe.stdout.contains("camm"), "\(probe.stdout) \(probe.stderr)")

        let r = try Shell.lapse([
            "hyperlapse", "--source", "video:" + video, "--spacing", "5", "--size", "320x160", "-o", path("camm.mp4"),
            "--report", path("camm.html"), "--json"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let summary = try #require(try JSONSummary.parse(r.stdoutData))
        #expect(summary["source"] as? String == "video (positions from the camera's GPS (CAMM))", "\(summary)")
        // 39 fixes 0.1 s apart: 38.9 m of route at 5 m spacing, 8 or 9 frames.
        let distance = try #require(summary["distance"] as? Double)
        #expect(abs(distance - 39) < 1, "\(distance) m")
        let frames = try #require(summary["frames"] as? Int)
        #expect((8...9).contains(frames), "\(summary)")
        #expect(try FFmpegReference.frameTimes(path("camm.mp4")).count == frames)
        let report = try #require(try Browser.embeddedJSON(path("camm.html"), id: "lapse-report") as? [String: Any])
        let points = report["points"] as? [[String: Any]] ?? []
        #expect(
            !points.isEmpty
                && points.allSatisfy {
                    let lat = $0["latitude"] as? Double ?? 0
                    let lon = $0["longitude"] as? Double ?? 0
                    return lat >= 52.44 - 1e-6 && lat <= 52.44 + 40 / 111_195.0 && abs(lon - 6.89) < 1e-6
                }, "\(points)")

        // A sample that breaks the specification (a GPS packet cut short) is one line naming the file and the sample.
        let broken = path("broken.mp4")
        let cut = Array(CAMMFile.packet(5, [52.44, 6.89, 1.0]).prefix(20))
        try CAMMFile.add(samples: [(0, cut)], to: plain, output: broken)
        let refused = try Shell.lapse(["hyperlapse", "--source", "video:" + broken, "-o", path("broken-out.mp4")])
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(
            refused.stderr.hasPrefix(
                "error: \(broken): telemetry sample 1: packet of type 5 runs past the end of its sample"),
            "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path("broken-out.mp4")))
    }
}
