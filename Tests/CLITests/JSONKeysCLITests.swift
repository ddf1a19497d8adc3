// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// Every command's `--json` summary in one key style, snake_case as ffprobe's (`frames_sampled`, `first_pts`),
/// nested objects and arrays of objects included.
@Suite(.serialized) struct JSONKeysCLITests {
    static func keys(_ value: Any) -> [String] {
        if let object = value as? [String: Any] { return object.keys + object.values.flatMap(keys) }
        if let array = value as? [Any] { return array.flatMap(keys) }
        return []
    }

    @Test func everyCommandsSummaryIsSnakeCase() throws {
        let dir = TestData.scratchDirectory("json-keys")
        func out(_ name: String) -> String { dir.appendingPathComponent(name).path }
        let photo = TestData.path("pano360/trekview_360/R0014760.JPG")
        let photos = TestData.path("pano360/trekview_360")
        let runs: [[String]] = [
            ["video", photo, "--size", "64x32", "-o", out("v.mp4")],
            ["concat", out("v.mp4"), out("v.mp4"), "-o", out("c.mp4")],
            [
                "clip", TestData.path("video/synthetic/gop4s_bframes_av_10s.mp4"), "--start", "5", "--duration", "1",
                "-o", out("clip.mp4")
            ],
            [
                "gif", TestData.path("video/iphone_rotated.mov"), "--duration", "0.3", "--width", "64", "-o",
                out("g.gif")
            ],
            ["view", photo, "--size", "64x36", "-o", out("view.png")],
            ["route", "--input", TestData.path("geo/sf_30km_h.gpx"), "--spacing", "100", "-o", out("r.geojson")],
            ["panoramas", "--source", "local:" + photos, "-o", out("panoramas")],
            ["preview", "--source", "local:" + photos, "-o", out("p.html")],
            [
                "hyperlapse", "--source", "video:" + TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"),
                "--frame-step", "40", "--size", "160x90", "-o", out("h.mp4")
            ]
        ]
        let style = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/
        for run in runs {
            let r = try Shell.lapse(run + ["--json"])
            #expect(r.status == 0, "\(run[0]): \(r.stderr)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: r.stdoutData) as? [String: Any], "\(run[0])")
            let keys = Self.keys(object)
            #expect(keys.count >= 5, "\(run[0]): \(keys)")
            let odd = keys.filter { $0.wholeMatch(of: style) == nil }
            #expect(odd.isEmpty, "\(run[0]): \(odd)")
        }
    }
}
