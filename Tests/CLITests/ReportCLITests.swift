// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
import TestSupport
import Testing

/// `lapse hyperlapse --report` and `lapse preview`: the page, loaded in headless Chromium.
@Suite(.serialized) struct ReportCLITests {
    let dir = TestData.scratchDirectory("reportcli")
    static let start = (latitude: 52.44, longitude: 6.89)

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// A point `metres` along a straight road heading 60° from `start` (flat-earth: a few hundred metres).
    static func along(_ metres: Double) -> (latitude: Double, longitude: Double) {
        let north = metres * cos(60 * Double.pi / 180)
        let east = metres * sin(60 * Double.pi / 180)
        return (
            start.latitude + north / 111_320, start.longitude + east / (111_320 * cos(start.latitude * Double.pi / 180))
        )
    }

    /// 16 frames of the real 360° video (every third, 1024 × 512) as your own photos 2.5 m apart along the road,
    /// GPS in their EXIF and no compass (as consumer cameras write it); and a route file that goes on 50 m past
    /// the last photo (points without a panorama).
    func photoFolder() throws -> (folder: String, route: String) {
        let folder = dir.appendingPathComponent("photos")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let frames = try FFmpegReference.frames(
            TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"),
            filters: "select=not(mod(n\\,3))", size: (1024, 512))
        for k in 0..<16 {
            let p = Self.along(2.5 * Double(k))
            try GeotaggedPhoto.write(
                frames[k], to: folder.appendingPathComponent(String(format: "IMG_%04d.JPG", k)).path,
                latitude: p.latitude, longitude: p.longitude,
                dateTime: String(format: "2026:11:30 10:00:%02d", k))
        }
        let route = dir.appendingPathComponent("road.txt").path
        let ends = [Self.along(0), Self.along(2.5 * 15 + 50)]
        try ends.map { String(format: "%.7f,%.7f", $0.latitude, $0.longitude) }.joined(separator: "\n")
            .write(toFile: route, atomically: true, encoding: .utf8)
        return (folder.path, route)
    }

    /// `--json`'s object flattened as the page's table shows it (nested keys dotted).
    static func flattened(_ object: [String: Any], prefix: String = "") -> [String: Any] {
        var out: [String: Any] = [:]
        for (k, v) in object {
            let key = prefix.isEmpty ? k : prefix + "." + k
            if let nested = v as? [String: Any] {
                out.merge(flattened(nested, prefix: key)) { $1 }
            } else {
                out[key] = v
            }
        }
        return out
    }

    /// Every value of the `--json` summary is on the page, the same.
    static func expectSummary(_ page: [String: Any], equals json: [String: Any]) {
        let shown = page["summary"] as? [String: String] ?? [:]
        let expected = flattened(json)
        #expect(Set(shown.keys) == Set(expected.keys))
        for (key, value) in expected {
            let text = shown[key] ?? "(missing)"
            if value is NSNull {
                #expect(text == "–", "\(key)")
            } else if let s = value as? String {
                #expect(text == s, "\(key)")
            } else if let list = value as? [String] {
                // An array (the warnings) as the page's JSON.stringify wrote it.
                let read = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String]
                #expect(read == list, "\(key): \(text)")
            } else if text == "true" || text == "false" {
                #expect((value as? Bool).map(String.init) == text, "\(key): \(text) vs \(value)")
            } else if let n = value as? NSNumber {
                #expect(
                    Double(text).map { abs($0 - n.doubleValue) <= 1e-9 * max(1, abs(n.doubleValue)) } == true,
                    "\(key): \(text) vs \(n)")
            } else {
                Issue.record("\(key): \(value) not compared")
            }
        }
    }

    /// The screenshot is a picture, not a blank page: its luma varies (standard deviation over 20 levels).
    static func expectNotBlank(_ png: String) throws {
        let shot = try #require(try FFmpegReference.frames(png).first)
        var sum = 0.0
        var squares = 0.0
        let n = shot.width * shot.height
        for i in stride(from: 0, to: shot.bytes.count, by: 4) {
            let y =
                0.2126 * Double(shot.bytes[i]) + 0.7152 * Double(shot.bytes[i + 1]) + 0.0722 * Double(shot.bytes[i + 2])
            sum += y
            squares += y * y
        }
        let mean = sum / Double(n)
        #expect((squares / Double(n) - mean * mean).squareRoot() > 20)
    }

    func json(_ result: ProcessResult) throws -> [String: Any] {
        try #require(try JSONSummary.parse(result.stdoutData))
    }

    /// A hyperlapse of your own photos with a report (crossfaded: a blended frame between each two): the page has
    /// the route coloured by coverage (the road past the photos has none) on a plain background with a scale bar
    /// and OpenStreetMap's credit (the browser is offline), a marker per panorama, the video (playable, its
    /// duration), the GIF, a thumbnail of every panorama's frame (each the video's frame, scaled), the heading,
    /// pitch and fov plots with a point a panorama, and the summary exactly as `--json` gives it; clicking a
    /// thumbnail shows that frame in the video; no console error.
    @Test func localPhotosReportInABrowser() throws {
        let (folder, route) = try photoFolder()
        let out = dir.appendingPathComponent("photos.mp4").path
        let page = dir.appendingPathComponent("photos.html").path
        let run = try Shell.lapse([
            "hyperlapse", "--source", "local:" + folder, "--route", route, "--spacing", "2.5",
            "--radius", "4", "--size", "320x180", "--fps", "8", "--crossfade", "-o", out,
            "--gif", dir.appendingPathComponent("photos.gif").path, "--report", page, "--json", "-y"
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try json(run)
        #expect(summary["report"] as? String == page)
        let videoFrames = try #require(summary["frames"] as? Int)
        let frames = try #require(summary["panoramas"] as? Int) // the report's frames: one a panorama
        #expect(videoFrames == 2 * frames - 1)
        // The page's data agrees with the summary.
        let report = try #require(try Browser.embeddedJSON(page, id: "lapse-report") as? [String: Any])
        let points = report["points"] as? [[String: Any]] ?? []
        let statuses = points.map { $0["status"] as? String ?? "" }
        #expect(points.count == summary["route_points"] as? Int)
        #expect(statuses.filter { $0 == "uncovered" }.count == summary["gaps"] as? Int)
        #expect(statuses.filter { $0 == "duplicate" }.count == summary["duplicates_dropped"] as? Int)
        #expect(statuses.filter { $0 == "uncovered" }.count >= 15) // the 50 m past the photos
        #expect(report["positions_known"] as? Bool == true)
        let panoramas = report["panoramas"] as? [[String: Any]] ?? []
        #expect(panoramas.compactMap { $0["frame"] as? Int }.count == frames)
        #expect((report["frames"] as? [Any])?.count == frames)

        let shot = dir.appendingPathComponent("photos.png").path
        let after = dir.appendingPathComponent("clicked.png").path
        let seen = try Browser.check(page, screenshot: shot, videoAfterClick: after)
        #expect((seen["console_errors"] as? [String])?.isEmpty == true, "\(seen["console_errors"] ?? "")")
        // The credits: what the sidecar credits (between its heading and its "Made with" line), a list item each,
        // without the sidecar's "- " marks.
        let sidecar = try String(contentsOfFile: dir.appendingPathComponent("photos.credits.txt").path, encoding: .utf8)
        let lines = sidecar.split(separator: "\n")
        #expect(lines.first?.hasPrefix("Imagery credits") == true && lines.last?.hasPrefix("Made with lapse") == true)
        let items = lines.dropFirst().dropLast().map { $0.hasPrefix("- ") ? String($0.dropFirst(2)) : String($0) }
        #expect(items == ["(your own imagery: no credit needed)"], "\(sidecar)") // your photos: no credit
        #expect(seen["credits"] as? [String] == items, "\(seen["credits"] ?? "")")
        let video = try #require(seen["video"] as? [String: Any])
        #expect((video["ready_state"] as? Int ?? 0) >= 2)
        #expect(abs((video["duration"] as? Double ?? 0) - Double(videoFrames) / 8) < 0.01)
        #expect((seen["broken_images"] as? [String])?.isEmpty == true, "\(seen["broken_images"] ?? "")")
        #expect(seen["thumbnails"] as? Int == frames)
        #expect(seen["images"] as? Int == frames + 1) // and the GIF
        let drawn = Set(seen["route_statuses"] as? [String] ?? [])
        #expect(drawn.isSuperset(of: ["status-panorama", "status-uncovered"]), "\(drawn)")
        #expect((seen["route_paths"] as? Int ?? 0) >= 2)
        #expect(seen["markers"] as? Int == panoramas.count)
        // A marker's popup: its pano id, date, distance and the thumbnail of its frame, loaded.
        let middle = panoramas[panoramas.count / 2]
        let popup = seen["popup_text"] as? String ?? ""
        #expect(
            popup.contains(middle["id"] as? String ?? "?") && popup.contains("taken 2026")
                && popup.contains(" m from point"), "\(popup)")
        #expect(seen["popup_image"] as? Bool == true)
        #expect((seen["remote_resources"] as? [String])?.isEmpty == true, "\(seen["remote_resources"] ?? "")")
        #expect(seen["scale_bar"] as? Int == 1)
        #expect((seen["attribution"] as? String)?.contains("OpenStreetMap") == true)
        #expect((seen["osm_tiles"] as? Int ?? 0) > 0) // a route from a GPX file of no service: OpenStreetMap's map
        #expect(seen["plot_polylines"] as? [Int] == [Int](repeating: frames, count: 5))
        Self.expectSummary(seen, equals: summary)
        try Self.expectNotBlank(shot)

        // Each thumbnail is its frame of the video (the panoramas' frames, every second one of the crossfaded
        // video), scaled.
        let thumbs = try #require(try Browser.embeddedJSON(page, id: "lapse-thumbnails") as? [[String: Any]])
        #expect(thumbs.map { $0["frame"] as? Int ?? -1 } == (0..<frames).map { 2 * $0 })
        let decoded = try FFmpegReference.frames(out, size: (160, 90))
        var images: [Int: PixelBuffer] = [:]
        for t in thumbs {
            let k = try #require(t["frame"] as? Int)
            let src = (t["src"] as? String ?? "").removingPercentEncoding ?? ""
            let image: PixelBuffer = try #require(
                try FFmpegReference.frames(dir.appendingPathComponent(src).path).first)
            images[k] = image
            #expect(ImageMetrics.ssim(image, decoded[k]) >= 0.9, "thumbnail of frame \(k)")
        }
        // The click showed the clicked frame: the video element's picture is that thumbnail's, more than another's.
        let clicked = try #require(seen["clicked_frame"] as? Int)
        #expect(abs((seen["video_time_after_click"] as? Double ?? -1) - Double(clicked) / 8) < 0.01)
        let shown = try #require(try FFmpegReference.frames(after, size: (160, 90)).first)
        let own = ImageMetrics.ssim(shown, try #require(images[clicked]))
        let other = ImageMetrics.ssim(shown, try #require(images[0]))
        #expect(own >= 0.7 && own > other + 0.05, "clicked frame \(clicked): SSIM \(own), frame 0's \(other)")
    }

    /// A page named without a folder, in a folder with a space and a `#`, its video in another folder: every link
    /// works (the video plays, every thumbnail loads). A thumbnail folder holding other files is never replaced,
    /// even with --overwrite; an output inside the thumbnail folder is refused; both before any work.
    @Test func pagesAndVideosInOtherFolders() throws {
        let work = dir.appendingPathComponent("work space #1")
        try? FileManager.default.removeItem(at: work)
        try FileManager.default.createDirectory(
            at: work.appendingPathComponent("out dir"), withIntermediateDirectories: true)
        let video = "video:" + TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")
        let base = ["hyperlapse", "--source", video, "--frame-step", "10", "--size", "320x180", "--quiet"]
        let run = try Shell.lapse(base + ["-o", "out dir/v.mp4", "--report", "my report.html"], directory: work)
        #expect(run.status == 0, "\(run.stderr)")
        let page = work.appendingPathComponent("my report.html").path
        let media = try #require(try Browser.embeddedJSON(page, id: "lapse-media") as? [String: Any])
        #expect(media["video"] as? String == "./out%20dir/v.mp4")
        let seen = try Browser.check(page, screenshot: dir.appendingPathComponent("apart.png").path)
        #expect(((seen["video"] as? [String: Any])?["ready_state"] as? Int ?? 0) >= 2)
        #expect((seen["broken_images"] as? [String])?.isEmpty == true, "\(seen["broken_images"] ?? "")")
        #expect(seen["thumbnails"] as? Int == 12)
        #expect((seen["console_errors"] as? [String])?.isEmpty == true, "\(seen["console_errors"] ?? "")")

        // Run again with -y: the thumbnail folder is replaced (it holds thumbnails only).
        let again = try Shell.lapse(base + ["-o", "out dir/v.mp4", "--report", "my report.html", "-y"], directory: work)
        #expect(again.status == 0, "\(again.stderr)")
        // A thumbnail folder with something else in it stays as it is.
        let files = work.appendingPathComponent("my report_files")
        try Data("notes".utf8).write(to: files.appendingPathComponent("notes.txt"))
        let refused = try Shell.lapse(
            base + ["-o", "out dir/w.mp4", "--report", "my report.html", "-y"], directory: work)
        #expect(refused.status == 1 && refused.stderr.contains("other files"), "\(refused.stderr)")
        #expect(FileManager.default.fileExists(atPath: files.appendingPathComponent("notes.txt").path))
        #expect(!FileManager.default.fileExists(atPath: work.appendingPathComponent("out dir/w.mp4").path))
        // An output inside the page's thumbnail folder.
        let inside = try Shell.lapse(base + ["-o", "r_files/v.mp4", "--report", "r.html"], directory: work)
        #expect(inside.status == 64 && inside.stderr.contains("thumbnail folder"), "\(inside.stderr)")
        // No staging folder is left beside the page.
        let left = try FileManager.default.contentsOfDirectory(atPath: work.path).filter { $0.hasPrefix(".") }
        #expect(left.isEmpty, "\(left)")
    }

    /// The demo (a video without a track): the page says there is no map and shows the rest — the video, the
    /// strip (a thumbnail every third frame) and the camera plots; no console error.
    @Test func demoReportHasNoMap() throws {
        let out = dir.appendingPathComponent("demo.mp4").path
        let page = dir.appendingPathComponent("demo.html").path
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let run = try Shell.lapse([
            "hyperlapse", "--source", "video:" + TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"),
            "--pano-heading", "0", "--keyframes", here.appendingPathComponent("examples/overpass-camera.json").path,
            "--fps", "24", "--size", "640x360", "-o", out, "--report", page, "--json", "-y"
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try json(run)
        let frames = try #require(summary["frames"] as? Int)
        #expect(frames == 120)
        let seen = try Browser.check(page, screenshot: dir.appendingPathComponent("demo.png").path)
        #expect((seen["console_errors"] as? [String])?.isEmpty == true, "\(seen["console_errors"] ?? "")")
        #expect((seen["no_map"] as? String)?.contains("no positions") == true)
        #expect(seen["route_paths"] as? Int == 0)
        #expect(((seen["video"] as? [String: Any])?["ready_state"] as? Int ?? 0) >= 2)
        #expect(abs(((seen["video"] as? [String: Any])?["duration"] as? Double ?? 0) - 5) < 0.01)
        #expect(seen["thumbnails"] as? Int == 40) // every third of 120: at most 48 in the strip
        #expect((seen["broken_images"] as? [String])?.isEmpty == true)
        #expect(seen["plot_polylines"] as? [Int] == [Int](repeating: 120, count: 5))
        Self.expectSummary(seen, equals: summary)
        try Self.expectNotBlank(dir.appendingPathComponent("demo.png").path)
    }

    /// `lapse preview` against the Map Tiles stand-in: no tile is requested (the stand-in's log), its points and
    /// panoramas are exactly the hyperlapse's of the same route, and the page draws the route and a marker per
    /// panorama, with the summary as `--json` gives it and no console error.
    @Test func previewMakesNoTileRequest() throws {
        let world = try RouteWorld(in: dir)
        let page = dir.appendingPathComponent("preview.html").path
        let route = ["--route", world.routeFile, "--source", "google", "--spacing", "10", "--radius", "20"]
        let run = try Shell.lapse(
            ["preview"] + route + [
                "--cache-dir", dir.appendingPathComponent("cache-p").path,
                "--report", page, "--json", "-y"
            ], environment: world.environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try world.tilesServed(reset: true).isEmpty)
        // Nothing but the page: no thumbnails, so no thumbnails' folder.
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("preview_files").path))
        let summary = try json(run)
        #expect(summary["panoramas"] as? Int == world.panoramas.count)
        let preview = try #require(try Browser.embeddedJSON(page, id: "lapse-report") as? [String: Any])
        let ids = (preview["panoramas"] as? [[String: Any]] ?? []).map { $0["id"] as? String ?? "" }
        #expect(ids == world.panoramas.map(\.id))

        let hyperPage = dir.appendingPathComponent("route.html").path
        let made = try Shell.lapse(
            ["hyperlapse"] + route + [
                "--size", "320x180", "--zoom", "1", "--cache-dir",
                dir.appendingPathComponent("cache-h").path,
                "-o", dir.appendingPathComponent("route.mp4").path,
                "--report", hyperPage, "--quiet", "-y"
            ], environment: world.environment)
        #expect(made.status == 0, "\(made.stderr)")
        let full = try #require(try Browser.embeddedJSON(hyperPage, id: "lapse-report") as? [String: Any])
        func statuses(_ r: [String: Any]) -> [String] {
            (r["points"] as? [[String: Any]] ?? []).map { "\($0["status"] ?? "")/\($0["pano"] ?? "-")" }
        }
        #expect(statuses(preview) == statuses(full))

        let seen = try Browser.check(page, screenshot: dir.appendingPathComponent("preview.png").path)
        #expect((seen["console_errors"] as? [String])?.isEmpty == true, "\(seen["console_errors"] ?? "")")
        #expect(seen["video"] is NSNull)
        #expect((seen["route_paths"] as? Int ?? 0) >= 1)
        #expect(seen["markers"] as? Int == world.panoramas.count)
        #expect((seen["popup_text"] as? String)?.contains(" m from point") == true)
        #expect(seen["thumbnails"] as? Int == 0)
        #expect((seen["remote_resources"] as? [String])?.isEmpty == true, "\(seen["remote_resources"] ?? "")")
        Self.expectSummary(seen, equals: summary)
        try Self.expectNotBlank(dir.appendingPathComponent("preview.png").path)
    }

    /// A route from Google Maps Platform is shown on no map (the Routes API policies: on a Google map or without
    /// one) and credited there (issue #43, item 3): the report of a hyperlapse planned with `--provider google`, and
    /// the preview of the same route written by `lapse route` to GPX and read back (its copyright, notice and
    /// retrieval date kept, also through `route --input`), load no OpenStreetMap tile in headless Chromium; the
    /// route, marker and scale bar are drawn, the map credits "Route: Google Maps", and so does the credits file.
    /// (A route from a file of other origin loads them: `localPhotosReportInABrowser`.)
    @Test func aGoogleRouteIsShownOnNoMap() throws {
        let world = try RouteWorld(in: dir)
        let directions = try LocalServer(script: "directions_standin.py")
        var environment = world.environment
        environment["LAPSE_GOOGLE_ROUTES_URL"] = directions.baseURL + "/toronto_montreal"
        let ends = ["--from", "43.6533961,-79.3827986", "--to", "45.5017123,-73.5672184"]
        let along = ["--source", "google", "--spacing", "10000", "--radius", "30", "--cache-dir", path("cache-g")]
        func expectNoMap(_ page: String) throws {
            let data = try #require(try Browser.embeddedJSON(page, id: "lapse-report") as? [String: Any])
            #expect(data["basemap"] as? String == "none" && data["route_credit"] as? String == "Route: Google Maps")
            let seen = try Browser.check(page, screenshot: page + ".png")
            #expect(seen["osm_tiles"] as? Int == 0, "\(seen["osm_tiles"] ?? "")")
            #expect(seen["tile_errors"] as? Int == 0)
            #expect((seen["remote_resources"] as? [String])?.isEmpty == true, "\(seen["remote_resources"] ?? "")")
            #expect((seen["console_errors"] as? [String])?.isEmpty == true, "\(seen["console_errors"] ?? "")")
            #expect((seen["attribution"] as? String)?.contains("Route: Google Maps") == true)
            #expect((seen["attribution"] as? String)?.contains("OpenStreetMap") == false)
            #expect((seen["no_map"] as? String)?.contains("Google Maps Platform") == true)
            #expect((seen["route_paths"] as? Int ?? 0) >= 1 && seen["markers"] as? Int == 1)
            #expect(seen["scale_bar"] as? Int == 1)
            try Self.expectNotBlank(page + ".png")
        }
        let made = try Shell.lapse(
            ["hyperlapse"] + ends + along + [
                "--size", "320x180", "--zoom", "1", "-o", path("g.mp4"), "--report", path("g.html"), "--quiet", "-y"
            ], environment: environment)
        #expect(made.status == 0, "\(made.stderr)")
        try expectNoMap(path("g.html"))
        let credits = try String(contentsOfFile: path("g.credits.txt"), encoding: .utf8)
        #expect(credits.contains("\nRoute: Google Maps\n"), "\(credits)")

        let planned = try Shell.lapse(["route"] + ends + ["-o", path("g.gpx"), "--quiet"], environment: environment)
        #expect(planned.status == 0, "\(planned.stderr)")
        let gpx = try String(contentsOfFile: path("g.gpx"), encoding: .utf8)
        #expect(gpx.contains("<copyright author=\"Google\"/>"), "\(gpx.prefix(600))")
        let converted = try Shell.lapse(["route", "--input", path("g.gpx"), "-o", path("g.geojson")])
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(converted.stderr.contains("Route from Google Maps Platform (Routes API), retrieved 20"))
        let properties = try #require(
            (try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path("g.geojson"))))
                as? [String: Any])?["properties"] as? [String: Any])
        #expect(properties["copyright"] as? String == "Google")
        #expect((properties["notice"] as? String)?.contains("at most 30 days") == true)
        #expect(properties["retrieved"] is String)
        for file in ["g.gpx", "g.geojson"] {
            let page = path(file + ".html")
            let preview = try Shell.lapse(
                ["preview", "--route", path(file)] + along + ["--report", page, "--quiet", "-y"],
                environment: environment)
            #expect(preview.status == 0, "\(preview.stderr)")
            try expectNoMap(page)
        }
    }

    /// Wrong report names and combinations are usage errors (exit 64, one line, nothing written); a page in the way
    /// is refused before any work without --overwrite.
    @Test func badReportArgumentsAreRefused() throws {
        let out = dir.appendingPathComponent("bad.mp4").path
        let video = "video:" + TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")
        for (arguments, words) in [
            (
                ["hyperlapse", "--source", video, "-o", out, "--report", dir.appendingPathComponent("r.txt").path],
                "must end in .html"
            ),
            (
                [
                    "hyperlapse", "--source", video, "-o", out, "--report", dir.appendingPathComponent("r.html").path,
                    "--segment", "1/2"
                ], "--segment"
            ),
            (["preview", "--source", video], "--report")
        ] {
            let r = try Shell.lapse(arguments)
            #expect(r.status == 64, "\(arguments)")
            #expect(r.stderr.contains(words), "\(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count <= 2, "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
        let existing = dir.appendingPathComponent("existing.html").path
        try Data("mine".utf8).write(to: URL(fileURLWithPath: existing))
        let r = try Shell.lapse(["hyperlapse", "--source", video, "-o", out, "--report", existing])
        #expect(r.status == 1 && r.stderr.contains("existing.html"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "mine")
    }
}
