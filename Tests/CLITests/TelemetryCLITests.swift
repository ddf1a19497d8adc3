// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TestSupport

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
