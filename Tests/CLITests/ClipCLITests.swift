// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// `lapse clip` end to end: the printed keyframe, exit codes, one-line errors, no output left on failure,
/// URLs printed without their query string.
@Suite(.serialized)
struct ClipCLITests {
    static let synthetic = TestData.path("video/synthetic")
    static let gop = TestData.path("video/synthetic/gop4s_bframes_av_10s.mp4")

    @Test func cutPrintsTheKeyframe() throws {
        let dir = TestData.scratchDirectory()
        let out = dir.appendingPathComponent("cut.mp4").path
        let r = try Shell.lapse(["clip", Self.gop, "-o", out, "--start", "0:05", "--duration", "2"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("keyframe used: 0:04.000"))
        #expect(r.stdout.contains("60 video frames (+30 before the start, hidden by the edit list)"), "\(r.stdout)")
        #expect(try FFmpegReference.frameTimes(out).count == 60)
        // Exists now: a second run without --overwrite fails, with it succeeds.
        let again = try Shell.lapse(["clip", Self.gop, "-o", out, "--start", "5", "--end", "7"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("--overwrite"))
        let over = try Shell.lapse(["clip", Self.gop, "-o", out, "--start", "5", "--end", "7", "--overwrite", "--json"])
        #expect(over.status == 0)
        let json = try JSONSummary.parse(over.stdoutData)
        #expect(json?["keyframe_time"] as? Double == 4)
        // The frames shown, as the text counts them; the run-in from the keyframe at 4 s is written but hidden.
        #expect(json?["video_frames"] as? Int == 60)
        #expect(json?["hidden_frames"] as? Int == 30)
        #expect(over.stderr.contains("60 video frames (+30 before the start"), "\(over.stderr)")
        // A cut of that cut, whose keyframe lies before its start (hidden by its own edit list): said so, not as a
        // negative time.
        let twice = dir.appendingPathComponent("twice.mp4").path
        let t = try Shell.lapse(["clip", out, "-o", twice, "--start", "0.5", "--duration", "1"])
        #expect(t.status == 0, "\(t.stderr)")
        #expect(
            t.stdout.contains("keyframe used: 1.000 s before the media's start (hidden by its edit list)"),
            "\(t.stdout)")
        #expect(!t.stdout.contains("-0:"), "\(t.stdout)")
    }

    /// As ffmpeg's -ss and -to: without --end the clip runs to the end of the media, without --start from its
    /// start (both were required; `lapse gif` already took the whole video).
    @Test func theRangeDefaultsToTheWholeMedia() throws {
        let dir = TestData.scratchDirectory()
        let tail = dir.appendingPathComponent("tail.mp4").path
        let head = dir.appendingPathComponent("head.mp4").path
        let whole = dir.appendingPathComponent("whole.mp4").path
        let a = try Shell.lapse(["clip", Self.gop, "-o", tail, "--start", "8", "--json"])
        #expect(a.status == 0, "\(a.stderr)")
        let json = try #require(try JSONSummary.parse(a.stdoutData))
        #expect(json["keyframe_time"] as? Double == 8 && abs((json["end"] as? Double ?? 0) - 10) < 0.05, "\(json)")
        #expect(try FFmpegReference.frameTimes(tail).count == 60) // 8 s to 10 s at 30 fps
        let b = try Shell.lapse(["clip", Self.gop, "-o", head, "--end", "2"])
        #expect(b.status == 0, "\(b.stderr)")
        #expect(try FFmpegReference.frameTimes(head).count == 60)
        let c = try Shell.lapse(["clip", Self.gop, "-o", whole])
        #expect(c.status == 0, "\(c.stderr)")
        #expect(try FFmpegReference.frameTimes(whole).count == 300)
        // Without --start, an end of 0 is named as what it is; an absurd time is refused, not a crash (1e300
        // overflowed where the time was printed: signal 4).
        let zero = try Shell.lapse(["clip", Self.gop, "-o", whole, "-y", "--end", "0"])
        #expect(zero.status == 64 && zero.stderr.contains("error: --end must be more than 0"), "\(zero.stderr)")
        let absurd = try Shell.lapse(["clip", Self.gop, "-o", whole, "-y", "--start", "1e300"])
        #expect(absurd.status == 64 && absurd.stderr.contains("not '1e300'"), "\(absurd.stderr)")
    }

    /// A stream copy ending inside a group of B-frames (H.265 and H.264 with B-pyramids): the frames after the
    /// end that the last ones reference are written but hidden by the edit list, so a player shows exactly the
    /// source's frames from the start to the end — the same pictures, none past the end, none left out — and the
    /// video lasts the duration asked for (it showed 1.14 s and two frames past the end of a 1 s HEVC cut).
    @Test(arguments: [("hdr10_pq_hevc10_320x180.mp4", 0.5, 1.0), ("gop4s_bframes_av_10s.mp4", 5.0, 1.9)])
    func streamCopyShowsExactlyTheRange(file: String, start: Double, duration: Double) throws {
        let source = Self.synthetic + "/" + file
        let out = TestData.scratchDirectory().appendingPathComponent("range.mp4").path
        let r = try Shell.lapse([
            "clip", source, "-o", out, "--start", String(start), "--duration", String(duration), "--json"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        /// (seconds, picture checksum) of every frame a player shows, as ffmpeg decodes it.
        func shown(_ path: String) throws -> [(Double, String)] {
            let md5 = try Shell.run("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v", "-f", "framemd5", "-"])
            let timeBase =
                md5.stdout.split(separator: "\n").first { $0.hasPrefix("#tb 0:") }.map { line -> Double in
                    let parts = line.split(separator: " ").last!.split(separator: "/")
                    return Double(parts[0])! / Double(parts[1])!
                } ?? 1
            return md5.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
                let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                return (Double(f[2])! * timeBase, f[5])
            }
        }
        let expected = try shown(source).filter { $0.0 >= start - 1e-6 && $0.0 < start + duration - 1e-6 }.map(\.1)
        let got = try shown(out)
        #expect(got.map(\.1) == expected, "\(got.count) frames shown, \(expected.count) in the range")
        // The summary counts the frames shown (it counted the hidden ones past the end too).
        #expect(try JSONSummary.parse(r.stdoutData)?["video_frames"] as? Int == got.count, "\(r.stdout)")
        #expect(abs((got.first?.0 ?? -1)) < 1e-6)
        let length = try FFmpegReference.probe(
            out, ["-select_streams", "v", "-show_entries", "stream=duration", "-of", "csv=p=0"])
        #expect(
            abs((Double(length.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) - duration) < 0.002, "\(length)")
    }

    @Test func accurateCut() throws {
        let dir = TestData.scratchDirectory()
        let out = dir.appendingPathComponent("exact.mkv").path
        let r = try Shell.lapse(["clip", Self.gop, "-o", out, "--start", "5", "--end", "7", "--accurate", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        let n = try FFmpegReference.frameTimes(out).count
        #expect(abs(n - 60) <= 1)
    }

    /// Runs a failing clip and checks: exit code, one line on stderr, no file at the output and no leftovers.
    static func expectFailure(
        _ args: [String], status: Int32, contains text: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let dir = TestData.scratchDirectory()
        let out = dir.appendingPathComponent("out.mp4").path
        let r = try Shell.lapse(["clip"] + args + ["-o", out, "--timeout", "1"])
        #expect(r.status == status, "\(r.stderr)", sourceLocation: sourceLocation)
        let errorLines = r.stderr.split(separator: "\n").filter { $0.hasPrefix("error:") }
        #expect(errorLines.count == 1, "\(r.stderr)", sourceLocation: sourceLocation)
        if status != 64 {
            #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)", sourceLocation: sourceLocation)
        }
        #expect(r.stderr.contains(text), "\(r.stderr)", sourceLocation: sourceLocation)
        #expect(
            (try? FileManager.default.contentsOfDirectory(atPath: dir.path))?.isEmpty == true,
            sourceLocation: sourceLocation)
        return r.stderr
    }

    @Test func startBeyondTheEndGivesTheDuration() throws {
        _ = try Self.expectFailure(
            [Self.gop, "--start", "12", "--end", "14"], status: 1,
            contains: "its duration is 0:10.000")
    }

    @Test func endBeforeStartIsAUsageError() throws {
        _ = try Self.expectFailure([Self.gop, "--start", "7", "--end", "5"], status: 64, contains: "must come after")
        _ = try Self.expectFailure([Self.gop, "--start", "xx", "--end", "5"], status: 64, contains: "--start takes")
        _ = try Self.expectFailure(
            [Self.gop, "--start", "1", "--end", "5", "--duration", "2"], status: 64, contains: "not both")
    }

    @Test func noVideoStream() throws {
        let dir = TestData.scratchDirectory()
        let audio = dir.appendingPathComponent("tone.m4a").path
        let r = try Shell.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=f=440:d=2", "-c:a", "aac", audio])
        try #require(r.status == 0)
        _ = try Self.expectFailure([audio, "--start", "0", "--end", "1"], status: 1, contains: "no video stream")
    }

    @Test func notAMediaFile() throws {
        let dir = TestData.scratchDirectory()
        let text = dir.appendingPathComponent("readme.mp4").path
        try Data(String(repeating: "just text\n", count: 100).utf8).write(to: URL(fileURLWithPath: text))
        _ = try Self.expectFailure([text, "--start", "0", "--end", "1"], status: 1, contains: "not a media file")
        _ = try Self.expectFailure(
            [dir.appendingPathComponent("missing.mp4").path, "--start", "0", "--end", "1"],
            status: 1, contains: "no such file")
    }

    @Test func truncatedFile() throws {
        let dir = TestData.scratchDirectory()
        let cut = dir.appendingPathComponent("cut.mp4").path
        let data = try Data(
            contentsOf: URL(fileURLWithPath: TestData.path("video/synthetic/gop4s_bframes_av_10s_faststart.mp4")))
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: cut))
        _ = try Self.expectFailure([cut, "--start", "1", "--end", "2"], status: 1, contains: "truncated")
    }

    @Test(arguments: [
        ("__status/404/", "HTTP 404"), ("__status/403/", "HTTP 403"), ("nothere/", "HTTP 404"),
        ("__stall/", "timed out")
    ])
    func httpErrors(_ prefix: String, _ message: String) throws {
        let server = try LocalServer(script: "http_file_server.py", arguments: ["--root", Self.synthetic])
        let url = "\(server.baseURL)/\(prefix)gop4s_bframes_av_10s_faststart.mp4?api_key=TOPSECRET&x=1"
        let err = try Self.expectFailure([url, "--start", "1", "--end", "2"], status: 1, contains: message)
        #expect(!err.contains("TOPSECRET"))
        #expect(err.contains("\(server.baseURL)/\(prefix)gop4s_bframes_av_10s_faststart.mp4?…"))
    }

    @Test func connectionRefused() throws {
        let server = try LocalServer(script: "http_file_server.py", arguments: ["--root", Self.synthetic])
        let url = "\(server.baseURL)/gop4s_bframes_av_10s.mp4?key=TOPSECRET"
        server.stop()
        let err = try Self.expectFailure([url, "--start", "1", "--end", "2"], status: 1, contains: "connection refused")
        #expect(!err.contains("TOPSECRET"))
    }

    @Test func overHTTPPrintsTheKeyframe() throws {
        let server = try LocalServer(script: "http_file_server.py", arguments: ["--root", Self.synthetic])
        let dir = TestData.scratchDirectory()
        let out = dir.appendingPathComponent("net.mov").path
        let r = try Shell.lapse([
            "clip", "\(server.baseURL)/hls/index.m3u8?sig=TOPSECRET", "-o", out,
            "--start", "5", "--end", "7"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("keyframe used: 0:04.000"))
        #expect(r.stdout.contains("60 video frames (+30 before the start, hidden by the edit list)"), "\(r.stdout)")
        #expect(!(r.stdout + r.stderr).contains("TOPSECRET"))
        #expect(try FFmpegReference.frameTimes(out).count == 60)
    }
}
