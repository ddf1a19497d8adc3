// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
import TestSupport
import Testing

@Suite struct PanoramasCLITests {
    let dir = TestData.scratchDirectory("panocli")
    static let key = "cli-test-key-AIzaSy0042"

    func mapTiles() throws -> LocalServer {
        try LocalServer(
            script: "maptiles_standin.py",
            arguments: [
                "--key", Self.key, "--data", TestData.path("pano360"),
                "--workdir",
                FileManager.default.temporaryDirectory.appendingPathComponent("lapse-maptiles-standin-v1").path
            ])
    }

    /// A route file: 'lat,lng' lines.
    func route(_ points: [(Double, Double)]) throws -> String {
        let path = dir.appendingPathComponent("route-\(points.count).txt").path
        try points.map { "\($0.0),\($0.1)" }.joined(separator: "\n").write(
            toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func stats(_ server: LocalServer) throws -> [String: Any] {
        let r = try Shell.run("curl", ["-s", server.baseURL + "/_stats"])
        return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] ?? [:]
    }

    /// Street View panoramas are not exported: Google's terms forbid storing and bulk-downloading them. The
    /// command refuses with exit 64 and one line saying so, before any request (the stand-in is asked nothing) and
    /// with nothing written (issue #43, item 5).
    @Test func streetViewIsNotExported() throws {
        let server = try mapTiles()
        let out = dir.appendingPathComponent("google").path
        let r = try Shell.lapse(
            [
                "panoramas", "--route", try route([(55.70000, 13.19000), (55.70150, 13.19000)]), "--source", "google",
                "--maptiles-url", server.baseURL, "--no-cache", "--out", out
            ],
            environment: ["GOOGLE_MAPS_API_KEY": Self.key])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(
            r.stderr.hasPrefix(
                """
                error: --source google: Google's terms do not allow storing or bulk-downloading Street View images, \
                so they are not exported; make a hyperlapse of them instead (lapse hyperlapse --source google)

                """), "\(r.stderr)")
        let requests = try stats(server)
        #expect(requests["total"] as? Int == 0, "\(requests)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func routeWithoutCoverageSaysSo() throws {
        let server = try LocalServer.panoramax(workdir: "lapse-panoramax-standin-v2")
        let r = try Shell.lapse([
            "panoramas", "--route", try route([(48.1, 11.5), (48.1005, 11.5)]), "--source", "panoramax",
            "--panoramax-url", server.baseURL + "/api", "--no-cache", "--out", dir.appendingPathComponent("o").path
        ])
        #expect(r.status == 1)
        #expect(r.stderr.contains("no coverage: no panorama within 50 m of any of the 7 route points"), "\(r.stderr)")
    }

    /// One run writes a folder at a time: while another holds the folder's journal locked, a run fails before it
    /// writes anything, naming the folder (issue #42: two runs racing for one folder left a panorama outside any
    /// manifest); once it is released, the same command writes the folder.
    @Test func aFolderBeingWrittenByAnotherRunIsLeftAlone() throws {
        let out = dir.appendingPathComponent("locked").path
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let journal = out + "/.manifest.json.journal"
        let fd = open(journal, O_RDWR | O_CREAT, 0o644)
        #expect(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
        let command = [
            "panoramas", "--source", "local:" + TestData.path("pano360/trekview_360"), "--width", "512", "--out", out
        ]
        let r = try Shell.lapse(command)
        #expect(r.status == 1, "\(r.stderr)")
        #expect(
            r.stderr == "error: \(out): another lapse panoramas run is writing this folder; nothing was written\n",
            "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == [".manifest.json.journal"])
        close(fd)
        let again = try Shell.lapse(command)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: out).sorted()
                == ["0001_GSAG2002.jpg", "0002_R0014760.jpg", "manifest.json"])
    }

    @Test func localFolderWithoutARouteWritesEveryPhoto() throws {
        let out = dir.appendingPathComponent("local").path
        let r = try Shell.lapse([
            "panoramas", "--source", "local:" + TestData.path("pano360/trekview_360"),
            "--width", "1024", "--out", out
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: out).sorted()
                == ["0001_GSAG2002.jpg", "0002_R0014760.jpg", "manifest.json"])
        // Names without the photo's own extension (not `0001_GSAG2002.JPG.jpg`), dates in ISO 8601 (not EXIF's
        // `2020:05:09 14:16:30`) (issue #45, item 11).
        let manifest = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: out).appendingPathComponent("manifest.json")))
        let points = (manifest as? [String: Any])?["points"] as? [[String: Any]] ?? []
        #expect(points.compactMap { $0["date"] as? String } == ["2020-05-09T14:16:30", "2020-05-11T11:28:25"])
        let flat = try Shell.lapse([
            "panoramas", "--source", "local:" + TestData.path("images/opensfm_lund/images"),
            "--out", dir.appendingPathComponent("lund").path
        ])
        #expect(flat.status == 1 && flat.stderr.contains("no usable 360° photo (29 skipped"))
    }

    /// Killed (SIGKILL, then SIGINT) with three of ten panoramas written, then run again: the rerun completes the
    /// folder, keeping what the first one wrote, and the folder is the clean run's byte for byte, with no
    /// temporary file or journal left; a third run is refused (the job is finished) before any lookup.
    @Test func killedRunIsCompletedByTheRerun() throws {
        let photos = dir.appendingPathComponent("resume-photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        for k in 1...10 {
            try FileManager.default.copyItem(
                atPath: TestData.path("pano360/trekview_360/\(k % 2 == 0 ? "GSAG2002" : "R0014760").JPG"),
                toPath: photos.appendingPathComponent(String(format: "P%02d.JPG", k)).path)
        }
        func arguments(_ out: String, photos: URL = photos) -> [String] {
            ["panoramas", "--source", "local:" + photos.path, "--out", out]
        }
        // The same file names in another folder: another job, whose images are not the killed run's.
        let others = dir.appendingPathComponent("resume-others")
        try? FileManager.default.removeItem(at: others)
        try FileManager.default.copyItem(at: photos, to: others)
        let reference = dir.appendingPathComponent("resume-clean").path
        let clean = try Shell.lapse(arguments(reference))
        #expect(clean.status == 0, "\(clean.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: reference).sorted()
        #expect(files.count == 11)
        for (signal, name) in [(SIGKILL, "kill"), (SIGINT, "int")] {
            let out = dir.appendingPathComponent("resume-" + name).path
            _ = try Shell.lapseStopped(arguments(out), signal: signal) { $0.contains("panoramas: 3/10") }
            let left = try FileManager.default.contentsOfDirectory(atPath: out)
            let images = left.filter { $0.hasSuffix(".jpg") && !$0.hasPrefix(".") }
            #expect(!left.contains("manifest.json") && images.count >= 3 && images.count < 10, "\(name): \(left)")
            let other = try Shell.lapse(arguments(out, photos: others))
            #expect(other.status == 1 && other.stderr.contains("file exists"), "\(name): \(other.stderr)")
            let again = try Shell.lapse(arguments(out) + ["--json"])
            #expect(again.status == 0, "\(name): \(again.stderr)")
            let summary = try JSONSummary.parse(Data(again.stdout.utf8))
            #expect(summary?["resumed"] as? Int == images.count, "\(name): \(again.stdout)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == files, "\(name)")
            for file in files {
                #expect(
                    FileManager.default.contentsEqual(atPath: out + "/" + file, andPath: reference + "/" + file),
                    "\(name): \(file)")
            }
            let third = try Shell.lapse(arguments(out))
            #expect(third.status == 1 && third.stderr.contains("manifest.json: file exists"), "\(third.stderr)")
        }
    }

    /// `--frame-step N`, as hyperlapse's (issue #45, item 10); `--every N`, its old name, still works and says so.
    @Test(arguments: ["--frame-step", "--every"])
    func videoWithoutATrackTakesEveryNthFrame(flag: String) throws {
        let out = dir.appendingPathComponent("video" + flag).path
        let r = try Shell.lapse([
            "panoramas", "--source", "video:" + TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"),
            flag, "60", "--width", "512", "--out", out, "--json"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let summary = try JSONSummary.parse(Data(r.stdout.utf8))
        #expect(summary?["written"] as? [String] == ["0001_video-0.000s.jpg", "0002_video-2.002s.jpg"])
        #expect(
            r.stderr.contains("warning: --every is now --frame-step (the same as hyperlapse's)") == (flag == "--every"),
            "\(r.stderr)")
    }

    /// Panoramax as it answers (the stand-in's street in Lyon): the cropped 360° picture is written placed in its
    /// full 2048 × 1024 frame (its rows where they belong, black above and below), the one that cannot be placed is
    /// warned about once and left out, the manifest says the heading of the picture without `view:azimuth` is
    /// unknown and gives the tilted one's pitch and roll; `--width 2048` takes every picture's `sd` asset.
    @Test func panoramaxCroppedAzimuthlessAndTiltedPictures() throws {
        let server = try LocalServer.panoramax(workdir: "lapse-panoramax-standin-v2")
        func id(_ n: Int) -> String { "6b1c7e52-0f1a-4c55-9a59-1a2b3c4d5e0\(n)" }
        let east = 4.83 + 190 / (111_320 * cos(45.7604 * .pi / 180))
        let route = try route([(45.76, 4.83), (45.7604, 4.83), (45.7604, east)])
        let out = dir.appendingPathComponent("pmx").path
        let r = try Shell.lapse([
            "panoramas", "--route", route, "--source", "panoramax", "--panoramax-url", server.baseURL + "/api",
            "--radius", "8", "--width", "2048", "--no-cache", "--out", out
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let warning =
            """
            warning: Panoramax picture \(id(5)): a 360° picture of 2000×700 is not 2:1 and has no visible_area to \
            place it by; skipped
            """
        #expect(r.stderr.components(separatedBy: warning).count == 2, "\(r.stderr)")
        #expect(r.stdout.contains("6 unique panoramas"), "\(r.stdout)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: out).sorted()
                == [1, 2, 4, 6, 7, 8].enumerated().map { "000\($0.offset + 1)_\(id($0.element)).jpg" } + [
                    "manifest.json"
                ])

        let manifest =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json")))
            as? [String: Any]
        let written = try #require(manifest?["panoramas"] as? [[String: Any]])
        func panorama(_ n: Int) throws -> [String: Any] {
            try #require(
                written.first { ($0["panorama"] as? [String: Any])?["id"] as? String == id(n) }?["panorama"]
                    as? [String: Any])
        }
        let cropped = try panorama(4)
        #expect(cropped["width"] as? Int == 2048 && cropped["height"] as? Int == 1024)
        #expect(
            cropped["crop"] as? [String: Int] == [
                "fullWidth": 2048, "fullHeight": 1024, "left": 0, "top": 160, "width": 2048, "height": 736
            ])
        #expect(try panorama(7)["headingSource"] as? String == "none")
        let tilted = try panorama(8)
        #expect(
            tilted["tilt"] as? Double == 4.5 && tilted["roll"] as? Double == -2 && tilted["heading"] as? Double == 272)

        let image = try #require(
            try FFmpegReference.frames(out + "/0003_\(id(4)).jpg", filters: "format=rgba", size: (2048, 1024)).first)
        #expect(image.width == 2048 && image.height == 1024)
        func band(_ rows: Range<Int>) -> PixelBuffer {
            PixelBuffer(
                width: 2048, height: rows.count,
                bytes: Array(image.bytes[(rows.lowerBound * 2048 * 4)..<(rows.upperBound * 2048 * 4)]))
        }
        // Black, to JPEG's noise, above row 160 and from row 896 down (the edges' rows blur into their neighbours).
        #expect(band(0..<156).bytes.enumerated().allSatisfy { $0.offset % 4 == 3 || $0.element <= 8 })
        #expect(band(900..<1024).bytes.enumerated().allSatisfy { $0.offset % 4 == 3 || $0.element <= 8 })
        let reference = try #require(
            try FFmpegReference.frames(
                TestData.path("pano360/trekview_360/GSAG2002.JPG"),
                filters: "scale=2048:1024:flags=bicubic,format=yuv444p,crop=2048:736:0:160,format=rgba",
                size: (2048, 736)
            ).first)
        let psnr = ImageMetrics.psnr(
            band(164..<892),
            PixelBuffer(width: 2048, height: 728, bytes: Array(reference.bytes[(4 * 2048 * 4)..<(732 * 2048 * 4)])))
        // JPEG at quality 92 in 4:2:0 costs the fine texture some: a row off costs far more.
        #expect(psnr >= 30, "\(psnr) dB")
        let shifted = ImageMetrics.psnr(
            band(165..<893),
            PixelBuffer(width: 2048, height: 728, bytes: Array(reference.bytes[(4 * 2048 * 4)..<(732 * 2048 * 4)])))
        #expect(shifted < psnr - 5, "\(shifted) dB one row off")

        let log =
            try JSONSerialization.jsonObject(
                with: Data(try Shell.run("curl", ["-s", server.baseURL + "/_log"]).stdout.utf8)) as? [String: Any]
        #expect((log?["served"] as? [String])?.sorted() == [1, 2, 4, 6, 7, 8].map { id($0) + "/sd" })
    }

    @Test(arguments: [
        (["panoramas", "--source", "google"], "no output folder"),
        (["panoramas", "--out", "x"], "no panorama source"),
        (
            ["panoramas", "--source", "google", "--zoom", "7", "--out", "x", "--route", "r.gpx"],
            "--zoom takes auto or 0 to 5"
        ),
        (["panoramas", "--source", "flickr", "--out", "x", "--route", "r.gpx"], "--source takes"),
        (
            ["panoramas", "--source", "panoramax", "--out", "x", "--route", "r.gpx", "--from", "1,2", "--to", "3,4"],
            "either --route or --from/--to"
        ),
        (["panoramas", "--source", "panoramax", "--out", "x", "--track", "t.gpx"], "--track is for --source video"),
        (["panoramas", "--source", "panoramax", "--out", "x"], "no route")
    ])
    func usageErrorsExit64(arguments: [String], message: String) throws {
        let r = try Shell.lapse(arguments, environment: ["GOOGLE_MAPS_API_KEY": ""])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    /// No network (a host that does not resolve) or nothing listening: one clear line, exit 1, and the lookups of
    /// the route's 31 points are not each retried.
    @Test(arguments: ["http://lapse-offline.invalid/api", "http://127.0.0.1:9/api"])
    func unreachableServiceFailsAtOnce(url: String) throws {
        let route = try route((0...30).map { (48.85 + Double($0) * 0.0001, 2.35) })
        for command in [
            ["panoramas", "--out", dir.appendingPathComponent("offline").path],
            ["hyperlapse", "-o", dir.appendingPathComponent("offline.mp4").path]
        ] {
            let r = try Shell.lapse(
                command + ["--source", "panoramax", "--route", route, "--quiet"],
                environment: ["LAPSE_PANORAMAX_URL": url])
            #expect(r.status == 1, "\(r.stderr)")
            let lines = r.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(r.stderr)")
            #expect(r.stderr.contains(url.contains("invalid") ? "host not found" : "connection refused"), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("offline.mp4").path))
        }
    }

    @Test func help() throws {
        let r = try Shell.lapse(["panoramas", "--help"])
        #expect(r.status == 0 && r.stdout.contains("--zoom auto|0-5") && r.stdout.contains("Examples:"))
    }
}
