// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// The options several commands share are one option each (Sources/lapse/OptionGroups.swift): the same names, the
/// same range, the same error in every command that takes them; `--timeout` bounds every network request.
@Suite struct OptionGroupsCLITests {
    static let clip = TestData.path("video/iphone_rotated.mov")
    static let pano = TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")

    /// Each command with everything it needs but the option under test, which comes last.
    static func command(_ name: String, _ dir: URL) -> [String] {
        let route = dir.appendingPathComponent("route.txt").path
        try? "48.8584,2.2945\n48.8590,2.2950\n".write(toFile: route, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("out").path
        switch name {
        case "clip": return ["clip", clip, "-o", out + ".mp4", "--start", "0", "--duration", "1"]
        case "gif": return ["gif", clip, "-o", out + ".gif"]
        case "video":
            return ["video", TestData.path("pano360/trekview_360/R0014760.JPG"), "--size", "64x32", "-o", out + ".mp4"]
        case "view":
            return ["view", TestData.path("pano360/trekview_360/R0014760.JPG"), "--size", "64x36", "-o", out + ".png"]
        case "hyperlapse": return ["hyperlapse", "--route", route, "--source", "panoramax", "-o", out + ".mp4"]
        case "preview": return ["preview", "--route", route, "--source", "panoramax", "-o", out + ".html"]
        case "panoramas": return ["panoramas", "--route", route, "--source", "panoramax", "-o", out]
        case "route": return ["route", "--input", route, "-o", out + ".gpx"]
        case "concat": return ["concat", clip, clip, "-o", out + ".mp4"]
        default: fatalError(name)
        }
    }

    static let everyCommand = ["clip", "gif", "video", "view", "hyperlapse", "preview", "panoramas", "route", "concat"]

    /// (option with a bad value, the commands taking it, the error every one of them gives).
    static let cases: [(option: [String], commands: [String], error: String)] = [
        (
            ["--timeout", "0"], ["clip", "gif", "hyperlapse", "preview", "panoramas", "route"],
            "error: --timeout takes a number from 0.1 to 3600, not '0'"
        ),
        (["--crf", "52"], ["video", "hyperlapse"], "error: --crf takes a number from 0 to 51, not '52'"),
        (
            ["--preset", "fastest"], ["video", "hyperlapse"],
            """
            error: --preset takes one of ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, \
            veryslow, placebo, not 'fastest'
            """
        ),
        (["--fov", "180"], ["view", "hyperlapse"], "error: --fov takes a number from 1 to 179, not '180'"),
        (
            ["--size", "1280"], ["view", "hyperlapse", "video"],
            "error: --size takes WIDTHxHEIGHT such as 1280x720, 1 to 16384 each, not '1280'"
        ),
        (["-o"], everyCommand, "error: -o needs a value"),
        (["--output"], everyCommand, "error: --output needs a value")
    ]

    @Test(arguments: 0..<cases.count)
    func theSameOptionGivesTheSameError(_ k: Int) throws {
        let (option, commands, error) = Self.cases[k]
        let dir = TestData.scratchDirectory("option-groups-\(k)")
        for name in commands {
            let r = try Shell.lapse(
                Self.command(name, dir) + option, environment: ["LAPSE_PANORAMAX_URL": "http://127.0.0.1:9"])
            #expect(r.status == 64, "\(name) \(option): \(r.stderr)")
            #expect(r.stderr.hasPrefix(error), "\(name) \(option): \(r.stderr)")
        }
        #expect((try FileManager.default.contentsOfDirectory(atPath: dir.path)) == ["route.txt"])
    }

    /// `-y` is `--overwrite` in every command: an existing output is refused without it (naming --overwrite), and
    /// the command gets past that check with it.
    @Test func dashYIsOverwriteEverywhere() throws {
        let dir = TestData.scratchDirectory("option-groups-y")
        for name in ["clip", "gif", "video", "view", "route", "concat"] {
            let args = Self.command(name, dir)
            let output = args[args.firstIndex(of: "-o")! + 1]
            try Data("old".utf8).write(to: URL(fileURLWithPath: output))
            let refused = try Shell.lapse(args + ["--quiet"])
            #expect(refused.status == 1 && refused.stderr.contains("--overwrite"), "\(name): \(refused.stderr)")
            let replaced = try Shell.lapse(args + ["--quiet", "-y"])
            #expect(!replaced.stderr.contains("--overwrite"), "\(name): \(replaced.stderr)")
            let now = try? Data(contentsOf: URL(fileURLWithPath: output))
            #expect(replaced.status == 0 && now != Data("old".utf8), "\(name) left the old file: \(replaced.stderr)")
        }
    }

    /// A service that accepts requests and never answers: every command that reads the network gives up on a
    /// request --timeout seconds after sending it, retries included (the error says so: one attempt, no retry
    /// after it, as none could finish in time), and fails with exit 1, whatever it was asking for (a route from
    /// OSRM, panoramas from Panoramax).
    @Test func timeoutBoundsEveryRequest() throws {
        let silent = try LocalServer(script: "silent_server.py")
        defer { silent.stop() }
        let dir = TestData.scratchDirectory("option-groups-timeout")
        let env = ["LAPSE_PANORAMAX_URL": silent.baseURL]
        let runs: [(String, [String])] = [
            (
                "route",
                [
                    "route", "--from", "48.8584,2.2945", "--to", "48.8606,2.3376", "--provider", "osrm",
                    "--osrm-url", silent.baseURL, "-o", dir.appendingPathComponent("r.gpx").path
                ]
            ),
            ("hyperlapse", Self.command("hyperlapse", dir)),
            ("preview", Self.command("preview", dir)),
            ("panoramas", Self.command("panoramas", dir))
        ]
        for (name, args) in runs {
            let r = try Shell.lapse(args + ["--timeout", "0.3", "--quiet"], environment: env)
            #expect(r.status == 1, "\(name): \(r.stderr)")
            #expect(
                r.stderr.contains("timed out after 0.3 s") && !r.stderr.contains("attempts"), "\(name): \(r.stderr)")
        }
    }

    /// `--` ends the options: what follows is an input even when it is named like an option (`-y`, `--help`).
    @Test func doubleDashEndsTheOptions() throws {
        let dir = TestData.scratchDirectory("option-groups-dashes")
        let pano = TestData.path("pano360/trekview_360/R0014760.JPG")
        for name in ["-y", "--help"] {
            try FileManager.default.copyItem(atPath: pano, toPath: dir.appendingPathComponent(name).path)
        }
        let out = dir.appendingPathComponent("v.png").path
        let view = ["view", "--size", "64x36", "-o", out, "--quiet", "--"]
        let first = try Shell.lapse(view + ["-y"], directory: dir)
        #expect(first.status == 0 && FileManager.default.fileExists(atPath: out), "\(first.stderr)")
        // The panorama "-y" again: the view exists, and "-y" after "--" is not --overwrite.
        let again = try Shell.lapse(view + ["-y"], directory: dir)
        #expect(again.status == 1 && again.stderr.contains("--overwrite"), "\(again.stderr)")
        let help = try Shell.lapse(
            ["view", "--size", "64x36", "-o", out, "-y", "--quiet", "--", "--help"], directory: dir)
        #expect(help.status == 0 && !help.stdout.contains("Examples:"), "\(help.stdout) \(help.stderr)")
    }
}
