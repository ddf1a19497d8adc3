// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

@Suite struct HyperlapseCLITests {
    let dir = TestData.scratchDirectory("hyperlapsecli")
    let source = "video:" + TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")

    func files() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() }

    /// Ctrl-C halfway leaves nothing at the output path (no partial file either); the rerun gives the same bytes
    /// as an uninterrupted run.
    @Test func interruptedRunLeavesNothingAndTheRerunIsIdentical() throws {
        let common = ["hyperlapse", "--source", source, "--size", "640x320", "--frame-step", "2"]
        let reference = dir.appendingPathComponent("ref.mp4").path
        let first = try Shell.lapse(common + ["-o", reference, "--quiet"])
        #expect(first.status == 0, "\(first.stderr)")

        let out = dir.appendingPathComponent("run.mp4").path
        // Interrupted once rendering is under way.
        let (process, seen) = try Shell.lapseStopped(common + ["-o", out], signal: SIGINT) { $0.contains("render: 2") }
        #expect(seen.contains("render:"), "\(seen)")
        #expect(process.terminationStatus == 130)
        #expect(!FileManager.default.fileExists(atPath: out))
        let left = try files()
        #expect(left.filter { $0.contains("partial") }.isEmpty, "\(left)")

        let again = try Shell.lapse(common + ["-o", out, "--quiet"])
        #expect(again.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(contentsOf: URL(fileURLWithPath: reference)))
    }

    @Test func summaryAndJSON() throws {
        let out = dir.appendingPathComponent("s.mp4").path
        let r = try Shell.lapse([
            "hyperlapse", "--source", source, "--frame-step", "30", "--size", "320x160", "--json",
            "-o", out, "--gif", dir.appendingPathComponent("s.gif").path
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSummary.parse(r.stdoutData))
        #expect(json["frames"] as? Int == 4)
        #expect(json["panoramas"] as? Int == 4)
        #expect((json["bytes"] as? Int ?? 0) > 0)
        #expect((json["gif_bytes"] as? Int ?? 0) > 0)
        #expect(r.stderr.contains("lookup:") && r.stderr.contains("render: 4/4 video frames (100%)"))
        #expect(Set(try files()) == ["s.credits.txt", "s.gif", "s.job.json", "s.mp4"])
        // --credit-position is a setting of the job file (a video has nothing to credit: none is allowed).
        let n = try Shell.lapse([
            "hyperlapse", "--source", source, "--frame-step", "60", "--size", "320x160", "--quiet",
            "--credit-position", "none", "-o", dir.appendingPathComponent("n.mp4").path
        ])
        #expect(n.status == 0, "\(n.stderr)")
        let job =
            try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("n.job.json")))
            as? [String: Any]
        #expect(job?["creditPosition"] as? String == "none")
    }

    /// `--forward D` holds without stabilisation too: a video (whose heading nobody knows) is turned so that the
    /// camera along the road looks D right of its centre column — the same frames as `--heading-offset D`, not
    /// those of the centre column.
    @Test func forwardWithoutStabilisation() throws {
        func run(_ name: String, _ extra: [String]) throws -> Data {
            let out = dir.appendingPathComponent(name + ".mp4").path
            let r = try Shell.lapse(
                [
                    "hyperlapse", "--source", source, "--frame-step", "30", "--size", "320x160", "--no-stabilize",
                    "--quiet", "-o", out, "-y"
                ] + extra)
            #expect(r.status == 0, "\(r.stderr)")
            return try Data(contentsOf: URL(fileURLWithPath: out))
        }
        let forward = try run("fw", ["--forward", "180"])
        let offset = try run("fo", ["--heading-offset", "180"])
        let plain = try run("fp", [])
        #expect(forward == offset)
        #expect(forward != plain)
        // Street View's headings are known: said before anything else (here, before the missing key).
        let google = try Shell.lapse(
            [
                "hyperlapse", "--source", "google", "--from", "48.85,2.35", "--to", "48.86,2.35",
                "--no-stabilize", "--forward", "10", "-o", dir.appendingPathComponent("g.mp4").path
            ],
            environment: ["GOOGLE_MAPS_API_KEY": ""])
        #expect(
            google.stderr.hasPrefix(
                "warning: --forward turns only panoramas whose heading is not known: Street View's are posed"),
            "\(google.stderr)")
    }

    /// `--fps` takes rationals here as in `lapse video` (#18 item 2): 29.97 is 30000/1001 in the stream, the
    /// frames step by 1001/30000 s, the GIF's delays add up to the video's length, and the job file records the
    /// fraction, so its rerun gives the same bytes; out of range or not a rate is a usage error.
    @Test func frameRateTakesRationals() throws {
        let out = dir.appendingPathComponent("ntsc.mp4").path
        let gif = dir.appendingPathComponent("ntsc.gif").path
        let r = try Shell.lapse([
            "hyperlapse", "--source", source, "--frame-step", "10", "--size", "320x160", "--fps", "29.97",
            "--gif", gif, "--json", "-o", out
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSummary.parse(r.stdoutData))
        #expect(json["frame_rate"] as? String == "30000/1001")
        #expect(json["frames"] as? Int == 12)
        #expect(abs((json["duration"] as? Double ?? 0) - 12 * 1001 / 30000) < 1e-9, "\(json)")
        let rate = try FFmpegReference.probe(
            out, ["-select_streams", "v:0", "-show_entries", "stream=r_frame_rate,avg_frame_rate", "-of", "csv=p=0"])
        #expect(rate.trimmingCharacters(in: .whitespacesAndNewlines) == "30000/1001,30000/1001", "\(rate)")
        let times = try FFmpegReference.frameTimes(out)
        #expect(times.count == 12)
        #expect(times.enumerated().allSatisfy { abs($0.element - Double($0.offset) * 1001 / 30000) < 1e-4 }, "\(times)")
        // The GIF's delays (centiseconds, read by gifsicle) add up to the video's 0.4004 s.
        let info = try Shell.run("gifsicle", ["--info", gif]).stdout
        let delays = info.components(separatedBy: "delay ").dropFirst().compactMap { Double($0.prefix { $0 != "s" }) }
        #expect(delays.count == 12 && Int((delays.reduce(0, +) * 100).rounded()) == 40, "\(info)")
        let text = try Shell.lapse([
            "hyperlapse", "--source", source, "--frame-step", "60", "--size", "320x160", "--fps", "25/2",
            "-o", dir.appendingPathComponent("half.mp4").path
        ])
        #expect(text.stdout.contains("2 frames at 12.5 fps, 0.2 s"), "\(text.stdout)")

        let jobFile = dir.appendingPathComponent("ntsc.job.json")
        let job = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: jobFile)) as? [String: Any])
        #expect(job["fps"] as? String == "30000/1001", "\(job)")
        let again = dir.appendingPathComponent("ntsc2.mp4").path
        let rerun = try Shell.lapse(["hyperlapse", "--config", jobFile.path, "-o", again, "--quiet"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: again)) == Data(contentsOf: URL(fileURLWithPath: out)))
        for bad in ["0", "121", "fast", "30/0"] {
            let u = try Shell.lapse(["hyperlapse", "--source", source, "--fps", bad, "-o", out, "-y"])
            #expect(
                u.status == 64 && u.stderr.contains("--fps takes frames per second from 1 to 120"),
                "\(bad): \(u.stderr)")
        }
    }

    /// Warnings where a user would want one (#18 item 7): a GIF width larger than the video (clamped), a
    /// hyperlapse of one frame, a directions provider that plans nothing (the route comes from the video).
    @Test func warningsForWhatIsNotAsAskedFor() throws {
        let out = dir.appendingPathComponent("w.mp4").path
        let gif = dir.appendingPathComponent("w.gif").path
        let r = try Shell.lapse([
            "hyperlapse", "--source", source, "--frame-step", "500", "--size", "320x160",
            "--gif", gif, "--gif-width", "1000", "--provider", "osrm", "-o", out, "-y"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stderr.contains("warning: the GIF width asked for (1000) is more than the video's: the GIF is 320 wide"),
            "\(r.stderr)")
        #expect(r.stderr.contains("warning: video overpass-clip.mp4: one frame only"), "\(r.stderr)")
        #expect(
            r.stderr.contains(
                "warning: the directions provider osrm plans nothing here: the route comes from the video's frames"),
            "\(r.stderr)")
        #expect(try FFmpegReference.dimensions(gif) == (320, 160))
        // The job file does not record the provider that planned nothing, so its rerun has no such warning.
        let jobFile = dir.appendingPathComponent("w.job.json")
        let job = try JSONSerialization.jsonObject(with: Data(contentsOf: jobFile)) as? [String: Any]
        #expect(job?["provider"] == nil && job?["gifWidth"] as? Int == 1000)
        let rerun = try Shell.lapse(["hyperlapse", "--config", jobFile.path, "-y"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(!rerun.stderr.contains("directions provider"), "\(rerun.stderr)")
        let plain = try Shell.lapse([
            "hyperlapse", "--source", source, "--frame-step", "10", "--size", "320x160", "-o", out, "-y"
        ])
        // Only the earlier runs' GIF is named (left as it was: this run makes none).
        let warnings = plain.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") }
        #expect(
            plain.status == 0 && warnings.count == 1
                && warnings[0].hasPrefix("warning: \(gif): the GIF of the earlier"),
            "\(plain.stderr)")
    }

    /// Own photos without a route are their own route, but not across a jump: the two real photos of the shared
    /// data were taken 660 km apart (the Netherlands, England). Before, the 660 km between them were resampled
    /// every 10 m: 65998 route points, 65986 gaps and 10 "duplicates", a 6.5 MB report, no word of why. Now: one
    /// point per photo, a warning naming both and the distance, and the video of the two.
    @Test func photosFarApartAreAJumpNotARoute() throws {
        let photos = dir.appendingPathComponent("two-trips")
        try? FileManager.default.removeItem(at: photos)
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        for name in ["GSAG2002.JPG", "R0014760.JPG"] {
            try FileManager.default.copyItem(
                atPath: TestData.path("pano360/trekview_360/" + name), toPath: photos.appendingPathComponent(name).path)
        }
        let out = dir.appendingPathComponent("trips.mp4").path
        let r = try Shell.lapse([
            "hyperlapse", "--source", "local:" + photos.path, "--size", "320x160", "--json", "-o", out, "-y"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stderr.contains(
                """
                warning: local:\(photos.path): photos GSAG2002.JPG and R0014760.JPG are 660 km apart: the video jumps \
                there (no route points between)
                """), "\(r.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: r.stdoutData) as? [String: Any])
        #expect(summary["route_points"] as? Int == 2, "\(summary)")
        #expect(summary["gaps"] as? Int == 0 && summary["duplicates_dropped"] as? Int == 0, "\(summary)")
        // The distance covered: none (the 660 km between the photos were jumped, not travelled).
        #expect(summary["distance"] as? Double == 0, "\(summary)")
        let times = try FFmpegReference.frameTimes(out)
        #expect(summary["frames"] as? Int == 2 && times.count == 2)
    }

    /// The stabilisation in the summary and `--json`: the direction of travel measured (the video's camera faces
    /// back: about 180°) or given (`--forward`), the turn between frames, the pairs measured; `--no-stabilize`
    /// turns it off (null); the job file records every frame's orientation and where it came from.
    @Test func stabilizationIsReported() throws {
        func run(_ name: String, _ extra: [String]) throws -> [String: Any] {
            let out = dir.appendingPathComponent(name + ".mp4").path
            let r = try Shell.lapse(
                [
                    "hyperlapse", "--source", source, "--frame-step", "10", "--size", "320x160", "--json",
                    "-o", out
                ] + extra)
            #expect(r.status == 0, "\(r.stderr)")
            return try #require(try JSONSummary.parse(r.stdoutData))
        }
        let summary = try run("m", [])
        // Every 10th frame of a 29.97 fps video at 12 fps: 4.004 times as fast as the video.
        #expect(abs((summary["speed"] as? Double ?? 0) - 10 * 12 / 29.97) < 1e-3, "\(summary)")
        // A video without positions: no distance measured (null, not 0).
        #expect(summary.keys.contains("distance") && summary["distance"] is NSNull, "\(summary)")
        let measured = try #require(summary["stabilization"] as? [String: Any])
        let travel = try #require(measured["travel_direction"] as? Double)
        // within 15° of ±180
        #expect(abs((travel + 540).truncatingRemainder(dividingBy: 360) - 180) > 165, "\(measured)")
        #expect(measured["travel_direction_given"] as? Bool == false)
        let pairs = try #require(measured["pairs_measured"] as? Int)
        #expect(pairs >= 8 && pairs + (measured["pairs_unmeasured"] as? Int ?? -1) == 11, "\(measured)")
        let after = try #require(measured["jitter_after"] as? [String: Double])
        #expect((after["median"] ?? 99) < 1)
        let given = try #require(try run("g", ["--forward", "170"])["stabilization"] as? [String: Any])
        #expect(given["travel_direction"] as? Double == 170 && given["travel_direction_given"] as? Bool == true)
        #expect(try run("n", ["--no-stabilize"])["stabilization"] is NSNull)
        // The text says which side, in words: 270° right is 90° left.
        let text = try Shell.lapse([
            "hyperlapse", "--source", source, "--frame-step", "10", "--size", "320x160", "--forward", "270",
            "-o", dir.appendingPathComponent("t.mp4").path, "-y"
        ])
        #expect(text.stdout.contains("stabilised: travel 90° left of the centre column (given)"), "\(text.stdout)")
        #expect(text.stdout.contains("0 gaps; plays at 4× the video's speed"), "\(text.stdout)")
        let job = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("m.job.json")))
                as? [String: Any])
        let frames = try #require(job["frames"] as? [[String: Any]])
        #expect(frames.count == 12)
        #expect(frames.first?["from"] as? String == "start")
        #expect(frames.filter { $0["from"] as? String == "pixels" }.count == pairs)
        // The job file renders again with its frames ignored.
        let again = try Shell.lapse([
            "hyperlapse", "--config", dir.appendingPathComponent("m.job.json").path,
            "-o", dir.appendingPathComponent("m2.mp4").path, "--quiet"
        ])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            try Data(contentsOf: dir.appendingPathComponent("m.mp4"))
                == Data(contentsOf: dir.appendingPathComponent("m2.mp4")))
    }

    @Test(arguments: [
        (["--source", "video:/nonexistent/clip.mp4"], 1, "/nonexistent/clip.mp4: "),
        (["--source", "video:" + TestData.path("images/pillow/hopper.png")], 1, "hopper.png: "),
        (
            [
                "--source", "video:" + TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"), "-o",
                "/nonexistent/dir/x.mp4"
            ], 1, "does not exist"
        ),
        (
            [
                "--source", "video:" + TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"), "--keyframes",
                "/nonexistent/cam.json"
            ], 1, "/nonexistent/cam.json"
        ),
        (["--source", "nowhere"], 64, "--source takes"),
        (["--source", "google", "--look-at", "1,2", "--heading-offset", "5"], 64, "only one of"),
        (["--source", "google", "--fov", "200"], 64, "--fov"),
        (["--source", "google", "--forward", "400"], 64, "--forward"),
        (
            ["--source", "google", "--credit-position", "none"], 64,
            """
            error: --credit-position none is for your own photos and videos: Google Street View imagery must \
            carry its credit
            """
        ),
        (
            ["--source", "panoramax", "--credit-position", "none"], 64,
            "error: --credit-position none is for your own photos and videos: Panoramax imagery must carry its credit"
        ),
        (
            [
                "--source", "video:" + TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"),
                "--credit-position", "middle"
            ], 64,
            "error: --credit-position takes one of bottom-right, bottom-left, top-left, top-right, none, not 'middle'"
        )
    ])
    func errorsAreOneLine(arguments: [String], status: Int32, message: String) throws {
        var args = ["hyperlapse"] + arguments
        if !arguments.contains("-o") { args += ["-o", dir.appendingPathComponent("e.mp4").path] }
        let r = try Shell.lapse(args)
        #expect(r.status == status, "\(r.stderr)")
        let errorLines = r.stderr.split(separator: "\n").filter { $0.hasPrefix("error: ") }
        #expect(errorLines.count == 1)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(try files().isEmpty)
    }

    /// Own photos that are mostly the same panorama again (a real GoPro MAX photo saved ten times with other XMP, at
    /// one position: 13 photos, 10 giving no frame) are said in a warning, and `--frame-step`, which is for videos,
    /// is said to go unused rather than silently ignored; the run succeeds.
    @Test func duplicatePhotosAndAFrameStepForPhotosAreSaid() throws {
        let out = dir.appendingPathComponent("poses.mp4").path
        let r = try Shell.lapse([
            "hyperlapse", "--source", "local:" + TestData.path("pano360/trekview_gpano_pose"), "--size", "320x180",
            "--frame-step", "3", "-o", out, "--overwrite", "--json"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        // The same warnings in the JSON summary, for scripts that read it only.
        let summary = try #require(try JSONSummary.parse(r.stdoutData))
        let warnings = summary["warnings"] as? [String] ?? []
        #expect(
            warnings.contains { $0.contains("10 of 13 points have the panorama of the one before") }
                && warnings.contains { $0.hasPrefix("--frame-step is for a video") }, "\(warnings)")
        #expect(
            r.stderr.contains("10 of 13 points have the panorama of the one before")
                && r.stderr.contains("they give no frame"), "\(r.stderr)")
        #expect(r.stderr.contains("--frame-step is for a video: local:"), "\(r.stderr)")
    }

    /// An output path that is a folder is refused before any work (exit 1, one line), with `--overwrite` too.
    @Test func aFolderAsTheOutputIsRefusedAtOnce() throws {
        let folder = dir.appendingPathComponent("folder.mp4")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let r = try Shell.lapse(["hyperlapse", "--source", source, "-o", folder.path, "--overwrite"])
        #expect(r.status == 1)
        #expect(r.stderr == "error: \(folder.path): is a folder, not a file\n", "\(r.stderr)")
    }
}

@Suite struct OutputAppearsCLITests {
    /// A file created at the output path while the hyperlapse runs survives (no --overwrite): the job fails with
    /// one line naming both, and the finished video is kept beside it, complete.
    @Test func aFileCreatedAtTheOutputMidJobSurvives() throws {
        let dir = TestData.scratchDirectory("outputappears")
        let out = dir.appendingPathComponent("run.mp4").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Shell.lapseBinary)
        process.arguments = [
            "hyperlapse", "--source", "video:" + TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"),
            "--size", "320x160", "--frame-step", "2", "--no-stabilize", "-o", out
        ]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var seen = ""
        while !seen.contains("render: 2") {
            let chunk = err.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: out))
        seen += String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1, "\(seen)")
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "someone else's")
        let kept = dir.appendingPathComponent("run-1.mp4").path
        #expect(
            seen.contains(
                """
                error: \(out): a file appeared here while the job ran and was kept (--overwrite replaces it); the \
                finished output is \(kept)
                """
            ), "\(seen)")
        #expect(try FFmpegReference.frameTimes(kept).count == 60)
    }
}
