// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
import TestSupport
import Testing

/// What a new user met in their first hour (issue #45), each through the command line.
@Suite struct FirstContactCLITests {
    static let clip = TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")

    /// Ctrl-C under `--json`: the error object README promises for every failure, code `cancelled`, on stdout.
    @Test func anInterruptUnderJSONIsAnErrorObject() throws {
        let dir = TestData.scratchDirectory("first-contact-interrupt")
        let out = dir.appendingPathComponent("run.mp4").path
        let (process, seen, stdout) = try Shell.lapseStoppedWithOutput(
            ["hyperlapse", "--source", "video:" + Self.clip, "--size", "640x320", "-o", out, "--json"],
            signal: SIGINT
        ) { $0.contains("render: 2") }
        #expect(process.terminationStatus == 130, "\(seen)")
        let object = try #require(try JSONSummary.parse(Data(stdout.utf8)), "\(stdout)")
        let error = try #require(object["error"] as? [String: Any])
        #expect(error["code"] as? String == "cancelled")
        #expect(error["exit_status"] as? Int == 130)
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// An unknown option names the nearest known one when it is a typing slip, and none when nothing is near.
    @Test(arguments: [
        (["gif", "--widht", "300", "a.mp4", "-o", "a.gif"], "did you mean --width?"),
        (["hyperlapse", "--sourse", "google", "-o", "a.mp4"], "did you mean --source?"),
        (["video", "--sise", "640x360", "a.png", "-o", "a.mp4"], "did you mean --size?"),
        (["clip", "--strat", "1", "a.mp4", "-o", "b.mp4"], "did you mean --start?"),
        (["video", "--frobnicate", "a.png", "-o", "a.mp4"], nil)
    ])
    func anUnknownOptionSuggestsTheNearest(arguments: [String], suggestion: String?) throws {
        let r = try Shell.lapse(arguments)
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("error: unknown option \(arguments[1])\n"), "\(r.stderr)")
        if let suggestion {
            #expect(r.stderr.contains("\n\(suggestion)\n"), "\(r.stderr)")
        } else {
            #expect(!r.stderr.contains("did you mean"), "\(r.stderr)")
        }
    }

    /// A mistyped command names the nearest one too (a second newcomer's try: `lapse hyperlaps` printed the help
    /// with no hint).
    @Test(arguments: [("hyperlaps", " (did you mean hyperlapse?)"), ("gifs", " (did you mean gif?)"), ("zzz", "")])
    func anUnknownCommandSuggestsTheNearest(command: String, suggestion: String) throws {
        let r = try Shell.lapse([command, "x"])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("error: unknown command '\(command)'\(suggestion)\n"), "\(r.stderr)")
    }

    @Test func versionUnderJSONIsJSON() throws {
        let r = try Shell.lapse(["--json", "--version"])
        #expect(r.status == 0)
        let object = try #require(try JSONSummary.parse(Data(r.stdout.utf8)), "\(r.stdout)")
        #expect((object["version"] as? String)?.isEmpty == false)
        #expect(try Shell.lapse(["--version"]).stdout.hasPrefix("lapse "))
    }

    /// An HTTP 404 is `not_found` and a 403 `denied`, as for every other service; a server that is not there
    /// fails at once with a hint, as `route` does.
    @Test func mediaServersFailWithTheirCodeAndAtOnce() throws {
        let server = try LocalServer(
            script: "http_file_server.py", arguments: ["--root", TestData.path("video/synthetic")])
        let dir = TestData.scratchDirectory("first-contact-http")
        for (path, code) in [("__status/404/a.mp4", "not_found"), ("__status/403/a.mp4", "denied")] {
            for command in ["clip", "gif"] {
                let r = try Shell.lapse([
                    command, "\(server.baseURL)/\(path)", "--start", "0", "--duration", "1", "-o",
                    dir.appendingPathComponent("x.\(command == "gif" ? "gif" : "mp4")").path, "--json"
                ])
                #expect(r.status == 1)
                let error = try #require(try JSONSummary.parse(Data(r.stdout.utf8))?["error"] as? [String: Any])
                #expect(error["code"] as? String == code, "\(command) \(path): \(r.stdout)")
            }
        }
        let port = server.port
        server.stop()
        for command in ["clip", "gif"] {
            let started = Date()
            let r = try Shell.lapse([
                command, "http://127.0.0.1:\(port)/x.mp4", "--start", "0", "--duration", "1", "-o",
                dir.appendingPathComponent("y.\(command == "gif" ? "gif" : "mp4")").path
            ])
            #expect(r.status == 1)
            #expect(
                r.stderr.contains("connection refused (is the server running and the URL right?)"), "\(r.stderr)")
            // Not a speed limit: before, libavformat's reconnection delays made it 4 s and more.
            #expect(Date().timeIntervalSince(started) < 3)
        }
    }
}

extension FirstContactCLITests {
    /// `make install` puts the tool on PATH under PREFIX (a dry run: the real one would build during the tests).
    @Test func makeInstallCopiesTheToolUnderPrefix() throws {
        let r = try Shell.run(
            "make", ["--dry-run", "--no-print-directory", "-C", TestData.projectRoot.path, "install", "PREFIX=/opt/x"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("install -m 755 .build/release/lapse /opt/x/bin/lapse"), "\(r.stdout)")
    }

    /// README's demo command is the one `make demo` runs, the report page included.
    @Test func readmeShowsTheDemoCommand() throws {
        let readme = try String(contentsOf: TestData.projectRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let demo = try String(
            contentsOf: TestData.projectRoot.appendingPathComponent("scripts/demo.sh"), encoding: .utf8)
        // demo.sh names the keyframe file from the project's root ("$here/examples/…").
        for flag in [
            "--keyframes examples/overpass-camera.json", "--gif demo/hyperlapse.gif", "--report demo/hyperlapse.html"
        ] {
            #expect(readme.contains(flag), "README lacks \(flag)")
            #expect(demo.contains(flag.replacingOccurrences(of: "examples/", with: "\"$here/examples/")), "\(flag)")
        }
        #expect(readme.contains("https://www.swift.org/install/linux/") && readme.contains("make install"))
    }
}

extension FirstContactCLITests {
    /// A range that runs past the end of the video is cut there, and the user is told (before: a 1.19 s GIF from
    /// `--start 10 --duration 5` of an 11.2 s video, without a word).
    @Test func aRangePastTheEndIsSaid() throws {
        let out = TestData.scratchDirectory("first-contact-gif").appendingPathComponent("end.gif").path
        let r = try Shell.lapse([
            "gif", Self.clip, "--start", "3", "--duration", "5", "--width", "100", "-o", out
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stderr.contains(
                "--duration 0:05.000 runs past the end of the video (0:04.005): the GIF is 0:01.005, from 0:03.000 "
                    + "to the end"), "\(r.stderr)")
        #expect(try FFmpegReference.frameTimes(out).count == 10)
        let inside = try Shell.lapse([
            "gif", Self.clip, "--start", "1", "--duration", "2", "--width", "100", "-o", out, "-y"
        ])
        #expect(inside.status == 0 && !inside.stderr.contains("warning"), "\(inside.stderr)")
    }
}

extension FirstContactCLITests {
    /// An image is decoded by its content whatever its extension says, with a warning (before: a WebP named
    /// `.jpg` was "not an image (the content is not JPG data)"; a JPEG named `.png` likewise).
    @Test(arguments: ["video", "gif"])
    func aMisnamedImageDecodesAsWhatItIs(command: String) throws {
        let dir = TestData.scratchDirectory("first-contact-misnamed")
        let webp = dir.appendingPathComponent("webp.jpg").path
        let png = dir.appendingPathComponent("png.jpeg").path
        let jpeg = dir.appendingPathComponent("jpeg.png").path
        try FileManager.default.copyItem(atPath: TestData.path("images/pillow/transparent.webp"), toPath: webp)
        try FileManager.default.copyItem(atPath: TestData.path("images/pillow/hopper.png"), toPath: png)
        try FileManager.default.copyItem(atPath: TestData.path("images/pillow/hopper.jpg"), toPath: jpeg)
        let out = dir.appendingPathComponent("out." + (command == "gif" ? "gif" : "mp4")).path
        let r = try Shell.lapse([command, png, webp, jpeg, "-o", out, "-y"])
        #expect(r.status == 0, "\(r.stderr)")
        for (path, said) in [
            (webp, "WebP data named as JPEG"), (png, "PNG data named as JPEG"), (jpeg, "JPEG data named as PNG")
        ] {
            #expect(r.stderr.contains("warning: \(path): \(said), decoded as it is"), "\(r.stderr)")
        }
        // Content that is no image at all, named as one, is still refused.
        let text = dir.appendingPathComponent("text.jpg").path
        try "not a picture".write(toFile: text, atomically: true, encoding: .utf8)
        let refused = try Shell.lapse([command, text, "-o", out, "-y"])
        #expect(refused.status == 1 && refused.stderr.contains("not an image"), "\(refused.stderr)")
    }
}

extension FirstContactCLITests {
    /// JSON that is no route — a saved Google error answer, another program's file — says what it is not and which
    /// formats are read (before: "GeoJSON object without \"type\"").
    @Test(arguments: [
        (
            "error.json", #"{"error":{"code":403,"message":"API key not valid.","status":"PERMISSION_DENIED"}}"#,
            "a saved error answer (PERMISSION_DENIED: API key not valid.), not a route"
        ),
        ("track.svjson", #"{"name":"x","points":[[1,2]]}"#, "JSON that is not a route (no GeoJSON \"type\")")
    ])
    func jsonThatIsNoRouteSaysWhichFormatsAre(name: String, content: String, said: String) throws {
        let dir = TestData.scratchDirectory("first-contact-route")
        let input = dir.appendingPathComponent(name).path
        try content.write(toFile: input, atomically: true, encoding: .utf8)
        let r = try Shell.lapse(["route", "--input", input, "-o", dir.appendingPathComponent("o.gpx").path])
        #expect(r.status == 1)
        #expect(
            r.stderr.hasPrefix(
                "error: \(input): \(said); route files are GPX, GeoJSON, KML, a saved Google Routes or Directions "
                    + "answer, lat,lng lines or an encoded polyline\n"), "\(r.stderr)")
    }
}

extension FirstContactCLITests {
    /// The speed said is the video's time over the output's: with --crossfade the blended frames between the
    /// video's make it slower (before: 5× said for 47 frames, 1.6 s, made from 4.0 s of video).
    @Test func theSpeedSaidCountsTheCrossfadesFrames() throws {
        let out = TestData.scratchDirectory("first-contact-speed").appendingPathComponent("s.mp4").path
        func speed(_ extra: [String]) throws -> (Double?, Int?) {
            let r = try Shell.lapse(
                [
                    "hyperlapse", "--source", "video:" + Self.clip, "--frame-step", "5", "--fps", "29.97", "--size",
                    "320x160", "-o", out, "-y", "--json"
                ] + extra)
            #expect(r.status == 0, "\(r.stderr)")
            let object = try JSONSummary.parse(Data(r.stdout.utf8))
            return (object?["speed"] as? Double, object?["frames"] as? Int)
        }
        let (plain, plainFrames) = try speed([])
        #expect(plainFrames == 24)
        #expect(abs((plain ?? 0) - 5) < 1e-6, "\(String(describing: plain))")
        // 24 frames of the video, 5 apart at 29.97 fps, shown in 47 frames at 29.97 fps: 120/47, to a thousandth.
        let (faded, fadedFrames) = try speed(["--crossfade"])
        #expect(fadedFrames == 47)
        #expect(faded == (120.0 / 47 * 1000).rounded() / 1000, "\(String(describing: faded))")
    }
}

extension FirstContactCLITests {
    /// README starts with a quick start and the common problems, the dashboard camera's first (issue #45, item 9).
    @Test func readmeSaysWhatToDoWhenTheVideoFacesTheWrongWay() throws {
        let readme = try String(contentsOf: TestData.projectRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let quick = try #require(readme.range(of: "## Quick start"))
        let problems = try #require(readme.range(of: "## Common problems"))
        let commands = try #require(readme.range(of: "## Commands"))
        #expect(quick.lowerBound < problems.lowerBound && problems.lowerBound < commands.lowerBound)
        let section = readme[problems.upperBound..<commands.lowerBound]
        #expect(section.contains("**The video faces the wrong way**") && section.contains("`--forward D`"))
        // Each option the section names is one the tool has.
        let help = try Shell.lapse(["hyperlapse", "--help"]).stdout
        for option in ["--forward", "--radius", "--overwrite"] { #expect(help.contains(option), "\(option)") }
    }
}

extension FirstContactCLITests {
    /// Your own imagery gets no copyright tag, and its credits file names no copyright, unless `--copyright TEXT`
    /// gives one: the source's name ("overpass-clip.mp4") is no copyright line (issue #45, item 4).
    @Test func yourOwnImageryHasNoCopyrightUnlessGiven() throws {
        let dir = TestData.scratchDirectory("own-copyright")
        defer { try? FileManager.default.removeItem(at: dir) }
        let video = "video:" + TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")
        func run(_ name: String, _ extra: [String]) throws -> (tags: [String: String], credits: String) {
            let out = dir.appendingPathComponent(name + ".mp4").path
            let r = try Shell.lapse(
                ["hyperlapse", "--source", video, "--frame-step", "30", "--size", "320x160", "-o", out, "--quiet"]
                    + extra)
            #expect(r.status == 0, "\(r.stderr)")
            return (
                try FFmpegReference.formatTags(out),
                try String(contentsOfFile: dir.appendingPathComponent(name + ".credits.txt").path, encoding: .utf8)
            )
        }
        let plain = try run("plain", [])
        #expect(plain.tags["copyright"] == nil, "\(plain.tags)")
        #expect(plain.tags["comment"]?.contains("Imagery: overpass-clip.mp4") == true)
        #expect(plain.credits.contains("(your own imagery: no credit needed)"), "\(plain.credits)")
        #expect(!plain.credits.contains("- overpass-clip.mp4"))
        let given = try run("given", ["--copyright", "© 2026 Ada Lovelace"])
        #expect(given.tags["copyright"] == "© 2026 Ada Lovelace", "\(given.tags)")
        #expect(given.credits.contains("\n- © 2026 Ada Lovelace\n"), "\(given.credits)")
    }
}

extension FirstContactCLITests {
    /// Progress says what it counts and ends at its total (issue #45, item 19): the analysis gives its total and
    /// percentage along the route with the panoramas analysed, the render the frames written beside the points;
    /// `--frame-step 5` says which 24 of the 120 video frames; a clip's count ends at the frames it copied (an
    /// estimate of 191 ended at 172 before).
    @Test func progressSaysWhatItCountsAndEndsAtItsTotal() throws {
        let dir = TestData.scratchDirectory("progress-counts")
        defer { try? FileManager.default.removeItem(at: dir) }
        func lines(_ r: ProcessResult, _ stage: String) -> [String] {
            r.stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix(stage + ": ") }
        }
        let video = TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")
        let hyper = try Shell.lapse([
            "hyperlapse", "--source", "video:" + video, "--frame-step", "5", "--size", "320x160",
            "-o", dir.appendingPathComponent("v.mp4").path
        ])
        #expect(hyper.status == 0, "\(hyper.stderr)")
        #expect(lines(hyper, "analyse").last == "analyse: 24/24 video frames (100%), 24 panoramas", "\(hyper.stderr)")
        #expect(lines(hyper, "analyse").allSatisfy { $0.contains("/24 video frames (") })
        #expect(lines(hyper, "render").last == "render: 24/24 video frames (100%), 24 frames")
        #expect(hyper.stdout.contains("24 video frames (every 5th of 120), 24 panoramas used"), "\(hyper.stdout)")

        let clip = try Shell.lapse([
            "clip", TestData.path("video/regift-test-file.mov"), "--start", "0.5", "--end", "3.3",
            "-o", dir.appendingPathComponent("c.mp4").path
        ])
        #expect(clip.status == 0, "\(clip.stderr)")
        let copied = try FFmpegReference.probe(
            dir.appendingPathComponent("c.mp4").path,
            ["-count_packets", "-select_streams", "v:0", "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0"]
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(lines(clip, "clip").last == "clip: \(copied)/\(copied) frames (100%)", "\(clip.stderr)")
    }
}

extension FirstContactCLITests {
    /// A GIF more than twice the video's width is refused before any frame is decoded, saying the size it would be
    /// and the largest width that is not; `--upscale` makes it (issue #45, item 20: `--width 5000` of an 816-wide
    /// video ran 38.7 s for 76.8 MB).
    @Test func aGIFManyTimesTheVideoIsRefusedUnlessAskedFor() throws {
        let dir = TestData.scratchDirectory("gif-upscale")
        defer { try? FileManager.default.removeItem(at: dir) }
        let video = TestData.path("video/regift-test-file.mov")
        let big = dir.appendingPathComponent("big.gif").path
        let refused = try Shell.lapse(["gif", video, "--width", "5000", "-o", big])
        #expect(refused.status == 64)
        #expect(
            refused.stderr.hasPrefix(
                """
                error: \(video): the GIF would be 5000x2659, more than 2× the video's 816x434 (every frame upscaled: \
                larger, no sharper); give --width 1632 or less, or --upscale to make it anyway
                """), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: big))
        let made = try Shell.lapse(
            ["gif", video, "--width", "1700", "--duration", "0.3", "--upscale", "-o", big, "--quiet"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try FFmpegReference.dimensions(big) == (1700, 904))
    }
}

extension FirstContactCLITests {
    /// A rerun with `--overwrite` but without the earlier run's `--gif` and `--report` names them: they are left
    /// as they were and show the earlier run (issue #45, item 21). A rerun that writes them again says nothing.
    @Test func aRerunNamesTheEarlierRunsGIFAndReport() throws {
        let dir = TestData.scratchDirectory("rerun-leftovers")
        defer { try? FileManager.default.removeItem(at: dir) }
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        let common = [
            "hyperlapse", "--source", "video:" + TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"),
            "--frame-step", "30", "--size", "320x160", "-o", path("v.mp4"), "-y"
        ]
        let first = try Shell.lapse(common + ["--gif", path("v.gif"), "--report", path("v.html"), "--quiet"])
        #expect(first.status == 0, "\(first.stderr)")
        let job = try String(contentsOfFile: path("v.job.json"), encoding: .utf8)
        #expect(job.contains("\"report\" : \"\(path("v.html"))\""), "\(job)")
        let again = try Shell.lapse(common + ["--gif", path("v.gif"), "--report", path("v.html")])
        #expect(again.status == 0 && !again.stderr.contains("earlier run"), "\(again.stderr)")
        let plain = try Shell.lapse(common)
        #expect(plain.status == 0, "\(plain.stderr)")
        for (kind, file) in [("GIF", "v.gif"), ("report", "v.html")] {
            #expect(
                plain.stderr.contains(
                    """
                    warning: \(path(file)): the \(kind) of the earlier run of \(path("v.mp4")) is left as it was \
                    (this run makes none): it shows the earlier run
                    """), "\(plain.stderr)")
        }
        // Its job file records neither, so a third run says nothing more.
        let third = try Shell.lapse(common)
        #expect(third.status == 0 && !third.stderr.contains("earlier run"), "\(third.stderr)")
    }
}

extension FirstContactCLITests {
    /// Your photos of two trips and a lone photo between them (issue #45, item 22): `panoramas` says where the
    /// trips part and gives no photo the bearing across a gap (the last photo of the first trip, without a compass,
    /// keeps the bearing it came in on); the preview's map draws no line across a jump (three runs of the route,
    /// the points after each jump marked).
    @Test func twoTripsAreKeptApart() throws {
        let dir = TestData.scratchDirectory("two-trips")
        defer { try? FileManager.default.removeItem(at: dir) }
        let picture = try DecodedImage(url: URL(fileURLWithPath: TestData.path("pano360/trekview_360/GSAG2002.JPG")))
            .pixels(
                width: 512, height: 256)
        let start = (latitude: 52.44, longitude: 6.89)
        func at(north: Double, east: Double) -> (latitude: Double, longitude: Double) {
            (
                start.latitude + north / 111_320,
                start.longitude + east / (111_320 * cos(start.latitude * Double.pi / 180))
            )
        }
        let positions =
            (0..<4).map { at(north: 0, east: 3 * Double($0)) } + [at(north: 600, east: 0)]
            + (0..<4).map { at(north: 1500 + 3 * Double($0), east: 0) }
        let folder = try GeotaggedPhoto.folder(
            dir.appendingPathComponent("photos"), [PixelBuffer](repeating: picture, count: 9), positions: positions)
        let out = dir.appendingPathComponent("out").path
        let exported = try Shell.lapse(["panoramas", "--source", "local:" + folder, "-o", out])
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(
            exported.stderr.contains(
                """
                warning: local 360° photos: photos IMG_0004.JPG and IMG_0005.JPG are 899 m apart (the farthest of 2 \
                such steps): two trips (neither photo's heading is taken from the other)
                """),
            "\(exported.stderr)")
        let manifest = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json"))) as? [String: Any])
        let headings = (manifest["points"] as? [[String: Any]] ?? []).map { $0["panoHeading"] as? Double ?? -1 }
        #expect(headings.count == 9)
        #expect(headings.prefix(4).allSatisfy { abs($0 - 90) < 1 }, "\(headings)") // east, the last one too
        #expect(headings.suffix(4).allSatisfy { abs($0) < 1 || abs($0 - 360) < 1 }, "\(headings)") // north

        let page = dir.appendingPathComponent("p.html").path
        let preview = try Shell.lapse(["preview", "--source", "local:" + folder, "--report", page, "--quiet"])
        #expect(preview.status == 0, "\(preview.stderr)")
        let report = try #require(try Browser.embeddedJSON(page, id: "lapse-report") as? [String: Any])
        let points = report["points"] as? [[String: Any]] ?? []
        #expect(points.count == 9)
        #expect(points.indices.filter { points[$0]["after_jump"] as? Bool == true } == [4, 5])
        let seen = try Browser.check(page, screenshot: dir.appendingPathComponent("p.png").path)
        #expect(seen["route_paths"] as? Int == 3, "\(seen["route_paths"] ?? "")")
    }
}
