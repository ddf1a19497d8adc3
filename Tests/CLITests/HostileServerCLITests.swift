// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// A Map Tiles server that answers with sizes no panorama has, answers too large to hold, or nothing: the run ends
/// with exit 1 naming the fault, in bounded memory, and keeps nothing the answer described (issue #42).
@Suite struct HostileServerCLITests {
    let dir = TestData.scratchDirectory("hostile-cli")
    static let key = "cli-test-key-AIzaSy0042"
    /// What a job of 2 or 12 panoramas may use at most, whatever the server sends.
    static let memoryBoundKB = 600 * 1024

    func server(_ hostile: [String]) throws -> LocalServer {
        try LocalServer(
            script: "maptiles_standin.py",
            arguments: [
                "--key", Self.key, "--data", TestData.path("pano360"), "--workdir",
                FileManager.default.temporaryDirectory.appendingPathComponent("lapse-maptiles-standin-v1").path
            ] + hostile.flatMap { ["--hostile", $0] })
    }

    /// A hyperlapse of the stand-in's two panoramas (zoom 1, 320x180, a cache of its own): its result, its peak
    /// memory in kB and its output's path.
    func hyperlapse(_ server: LocalServer, _ name: String) throws -> (ProcessResult, Int, String) {
        let route = dir.appendingPathComponent("route.txt").path
        try "55.70000,13.19000\n55.70050,13.19000\n".write(toFile: route, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent(name + ".mp4").path
        let (r, kB) = try Shell.lapseMeasured(
            [
                "hyperlapse", "--route", route, "--source", "google", "--zoom", "1", "--radius", "20",
                "--size", "320x180", "--cache-dir", dir.appendingPathComponent("cache-" + name).path, "-o", out,
                "--quiet"
            ], environment: ["GOOGLE_MAPS_API_KEY": Self.key, "LAPSE_MAPTILES_URL": server.baseURL])
        return (r, kB, out)
    }

    @Test(arguments: [
        (["tileWidth=0", "tileHeight=0"], "unusable answer (tile size 0 out of range)"),
        (["tileWidth=-512", "tileHeight=-512"], "unusable answer (tile size -512 out of range)"),
        (["tileWidth=1", "tileHeight=1"], "unusable answer (tile size 1 out of range)"),
        (["imageWidth=4194304"], "unusable answer (image size 4194304x"),
        (["imageWidth=1099511627776"], "unusable answer (image size 1099511627776x"),
        (["imageWidth=9223372036854775807"], "unusable answer (image size 9223372036854775807x"),
        (["copyright=5000"], "unusable answer (copyright of 5000 characters)"),
        (["copyright=5000000"], "more than the 1048576 expected"),
        (["padding=5000000"], "more than the 1048576 expected"),
        (["huge-tiles=1"], "16000x8000 is 128.0 megapixels, more than the limit of 0.3 megapixels")
    ])
    func aHostileAnswerFailsTheRunInBoundedMemory(hostile: [String], reason: String) throws {
        let server = try server(hostile)
        let (r, kB, out) = try hyperlapse(server, hostile.joined(separator: "_"))
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains(reason), "\(r.stderr)")
        #expect(!r.stderr.contains(Self.key))
        #expect(kB > 0 && kB < Self.memoryBoundKB, "peak \(kB) kB")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// A 12-panorama hyperlapse stays under 600 MB whatever the server sends: served as Google documents, every
    /// panorama is a frame; with tiles of 16000x8000, metadata padded to 5 MB or a tile size of 1 it fails naming
    /// the fault and writes nothing (issue #42: 4.4 GB, 2.8 GB and 6.1 GB).
    @Test(arguments: [
        ([], ""), (["huge-tiles=1"], "more than the limit of 0.3 megapixels"),
        (["padding=5000000"], "more than the 1048576 expected"),
        (["tileWidth=1", "tileHeight=1"], "unusable answer (tile size 1 out of range)")
    ])
    func aTwelvePanoramaJobStaysInBoundedMemory(hostile: [String], reason: String) throws {
        let world = try RouteWorld(
            arguments: ["--length", "345", "--every", "30", "--gap", "", "--no-marker"]
                + hostile.flatMap { ["--hostile", $0] },
            in: dir)
        #expect(world.panoramas.count == 12)
        let out = dir.appendingPathComponent("twelve-\(hostile.joined(separator: "_")).mp4").path
        let cache = dir.appendingPathComponent("cache-\(hostile.joined(separator: "_"))").path
        let (r, kB) = try Shell.lapseMeasured(
            [
                "hyperlapse", "--route", world.routeFile, "--source", "google", "--spacing", "30", "--radius", "20",
                "--size", "640x360", "--zoom", "2", "--cache-dir", cache, "-o", out, "-y", "--quiet"
            ], environment: world.environment)
        #expect(kB > 0 && kB < Self.memoryBoundKB, "peak \(kB) kB")
        if reason.isEmpty {
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try FFmpegReference.frameTimes(out).count == 12)
        } else {
            #expect(r.status == 1, "\(r.stderr)")
            #expect(r.stderr.contains(reason), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }

    /// An error message that repeats the request's credentials shows neither: the key and the session token are
    /// both redacted (issue #42: the session token appeared in 403 messages).
    @Test func anErrorThatRepeatsTheCredentialsShowsNeither() throws {
        let server = try server(["echo-secrets=1"])
        let (r, _, _) = try hyperlapse(server, "echo")
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("Permission denied for key [redacted] with session [redacted]."), "\(r.stderr)")
        #expect(!r.stderr.contains(Self.key) && !r.stderr.contains("session-"), "\(r.stderr)")
    }

    /// Empty answers to `panoIds` are retried as a 5xx is: the run succeeds.
    @Test func emptyAnswersAreRetried() throws {
        let server = try server(["empty-panoids=2"])
        let (r, _, out) = try hyperlapse(server, "empty")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try FFmpegReference.frameTimes(out).count == 2)
        let stats = try Shell.run("curl", ["-s", server.baseURL + "/_stats"]).stdout
        #expect(stats.contains("\"empty_answers\": 2"), "\(stats)")
    }
}

/// Media servers that never finish: 100 bytes on every reconnection then silence, a byte at a time. `clip` and `gif`
/// end --timeout seconds after the last progress, with exit 1 and nothing written (before, each ran until killed).
@Suite struct HostileMediaServerCLITests {
    static let file = "gop4s_bframes_av_10s_faststart.mp4"

    @Test(arguments: ["clip", "gif"], ["__again/\(file)", "__trickle/\(file)"])
    func aServerThatNeverFinishesEndsAtTheTimeout(command: String, path: String) throws {
        let server = try LocalServer(
            script: "http_file_server.py", arguments: ["--root", TestData.path("video/synthetic")])
        let dir = TestData.scratchDirectory("hostile-media")
        let out = dir.appendingPathComponent("\(command)-\(path.replacingOccurrences(of: "/", with: "_")).out").path
        let started = Date()
        let r = try Shell.lapse([
            command, "\(server.baseURL)/\(path)?sig=TOPSECRET", "--start", "1", "--duration", "1", "--timeout", "2",
            "-o", out + (command == "gif" ? ".gif" : ".mp4")
        ])
        let elapsed = Date().timeIntervalSince(started)
        #expect(r.status == 1, "\(r.stderr)")
        // The same 100 bytes again and again read as a stall; served from where each reconnection asks (100 new
        // bytes a time), they can also end the probe before a stream is found.
        let reasons = ["timed out: no data for 2 s"] + (path.hasPrefix("__again") ? ["no video stream"] : [])
        #expect(reasons.contains { r.stderr.contains($0) }, "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        #expect(!r.stderr.contains("TOPSECRET"))
        // Not a speed limit: the runs this guards against went on for minutes.
        #expect(elapsed < 60, "\(elapsed) s")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(command) }.isEmpty)
    }
}

extension HostileMediaServerCLITests {
    /// An HLS master playlist that leads back to a master playlist — itself, or through a variant that names it —
    /// is refused before libavformat opens it, which would load it for ever (4085 times in one run); a master
    /// playlist whose variant is a media playlist is clipped.
    @Test func anHLSPlaylistLoopIsRefused() throws {
        let server = try LocalServer(
            script: "http_file_server.py", arguments: ["--root", TestData.path("video/synthetic")])
        let dir = TestData.scratchDirectory("hostile-hls")
        for (path, reason) in [
            ("__selfref.m3u8", "the HLS master playlist names itself as a variant (it would loop)"),
            // Signed: the variant named (no query) is another URL, read and found to be a master playlist.
            ("__selfref.m3u8?sig=TOPSECRET", "variant \(server.baseURL)/__selfref.m3u8 is a master playlist too"),
            ("__loop-a.m3u8?sig=TOPSECRET", "variant \(server.baseURL)/__loop-b.m3u8 is a master playlist too")
        ] {
            let out = dir.appendingPathComponent("loop.mp4").path
            let r = try Shell.lapse([
                "clip", "\(server.baseURL)/\(path)", "--duration", "1", "--timeout", "30", "-o", out
            ])
            #expect(r.status == 1, "\(r.stderr)")
            #expect(r.stderr.contains(reason) && !r.stderr.contains("TOPSECRET"), "\(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
        let out = dir.appendingPathComponent("master.mp4").path
        let r = try Shell.lapse(["clip", "\(server.baseURL)/__master.m3u8", "--duration", "3", "-o", out, "-y"])
        #expect(r.status == 0, "\(r.stderr)")
        let probe = try Shell.run(
            "ffprobe",
            [
                "-v", "error", "-count_packets", "-select_streams", "v:0", "-show_entries",
                "stream=nb_read_packets", "-of", "csv=p=0", out
            ])
        #expect(Int(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 > 0, "\(probe.stdout)")
    }

    /// A live stream has no end of its own: `gif` without `--end`/`--duration` refuses it at once (before, the GIF
    /// grew until the stream stopped or the user killed it); with a range it is made.
    @Test func aLiveStreamNeedsAnEnd() throws {
        let server = try LocalServer(
            script: "http_file_server.py", arguments: ["--root", TestData.path("video/synthetic")])
        let out = TestData.scratchDirectory("hostile-live").appendingPathComponent("live.gif").path
        let r = try Shell.lapse(["gif", "\(server.baseURL)/__live.m3u8", "-o", out, "--width", "80"])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("its duration is unknown (a live stream?): give the end of the range"), "\(r.stderr)")
        let ranged = try Shell.lapse([
            "gif", "\(server.baseURL)/__live.m3u8", "-o", out, "--width", "80", "--duration", "1"
        ])
        #expect(ranged.status == 0, "\(ranged.stderr)")
    }
}

extension HostileServerCLITests {
    /// Foundation's URLCache and cookie store keep nothing of Lapse's, and no folder is left for them in the user's
    /// home (issue #42: `~/.cache/org.swift.foundation.URLCache/lapse` appeared after any network command).
    @Test func noURLCacheFolderIsMade() throws {
        let server = try LocalServer(script: "net_standin.py")
        let home = TestData.scratchDirectory("hostile-home")
        let r = try Shell.lapse(
            [
                "route", "--from", "48.8584,2.2945", "--to", "48.8606,2.3376", "--provider", "osrm", "--osrm-url",
                server.baseURL, "-o", home.appendingPathComponent("r.gpx").path
            ], environment: ["HOME": home.path, "XDG_CACHE_HOME": ""])
        #expect(r.status == 1, "\(r.stderr)") // the stand-in has no OSRM: a request was sent and answered
        #expect(r.stderr.contains("HTTP 404"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent(".cache").path))
        // Nor for Foundation's cookie store (`~/.local/share/release`, named after the executable's folder).
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.path).isEmpty)
    }
}
