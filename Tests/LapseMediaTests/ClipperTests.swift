// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import TestSupport
import Testing

@testable import LapseMedia

/// Cuts with ``Clipper`` checked against ffprobe/ffmpeg (independent reference): frame counts, timestamps,
/// edit lists, first-frame equality with the source, rotation, languages, audio sync — for local files,
/// HTTP with and without Range support (moov first and last) and HLS.
@Suite(.serialized)
struct ClipperTests {
    static let synthetic = TestData.path("video/synthetic")
    static let gop = TestData.path("video/synthetic/gop4s_bframes_av_10s.mp4")

    // MARK: helpers

    static func streams(_ path: String) throws -> [[String: Any]] {
        (try FFmpegReference.probeJSON(path)["streams"] as? [[String: Any]]) ?? []
    }
    static func stream(_ path: String, _ type: String) throws -> [String: Any]? {
        try streams(path).first { $0["codec_type"] as? String == type }
    }
    static func double(_ v: Any?) -> Double? { (v as? String).flatMap(Double.init) ?? (v as? Double) }

    /// The first video packet's flags as ffprobe reads them (raw, edit list aside): "K" marks a keyframe.
    static func firstVideoPacketIsKeyframe(_ path: String) throws -> Bool {
        let s = try FFmpegReference.probe(
            path,
            [
                "-select_streams", "v:0", "-show_entries", "packet=flags",
                "-read_intervals", "%+#1", "-of", "csv=p=0"
            ])
        return s.hasPrefix("K")
    }

    /// Frame `n` (0-based, in presentation order as the ffmpeg CLI decodes it, edit lists honoured) as RGBA.
    /// Written to a file rather than a pipe: `Shell.run` decodes stdout as UTF-8, which is very slow for
    /// megabytes of binary under Swift Testing.
    static func frame(_ path: String, _ n: Int) throws -> PixelBuffer {
        let (w, h) = try FFmpegReference.dimensions(path)
        let out = TestData.scratchDirectory().appendingPathComponent("frame.rgba").path
        let r = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-nostdin", "-i", path, "-vf", "select=eq(n\\,\(n))",
                "-vsync", "passthrough", "-frames:v", "1", "-f", "rawvideo",
                "-pix_fmt", "rgba", out
            ])
        try #require(r.status == 0, "\(r.stderr)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        try #require(bytes.count == w * h * 4)
        return PixelBuffer(width: w, height: h, bytes: bytes)
    }
    static func sourceFrame(_ path: String, _ n: Int) throws -> PixelBuffer { try frame(path, n) }

    static func clip(
        _ location: String, _ start: Double, _ end: Double, accurate: Bool = false,
        ext: String = "mp4", audio: ClipAudio = .original
    ) throws -> (String, ClipResult) {
        let out = TestData.scratchDirectory().appendingPathComponent("clip.\(ext)").path
        var options = ClipOptions(start: start, end: end)
        options.accurate = accurate
        options.audio = audio
        options.input.readTimeout = 10
        let result = try Clipper.clip(URL(location: location), to: URL(fileURLWithPath: out), options: options)
        return (out, result)
    }

    /// The checks of the first test line, for any location of the gop4s file.
    static func checkGOPCut(_ location: String) throws {
        // Copy mode: keyframe 4 s used, edit list hides 4–5 s; plays 5→7 s.
        let (copy, r) = try clip(location, 5, 7)
        #expect(abs(r.keyframeTime - 4) < 0.001, "\(location)")
        #expect(r.usesEditList)
        let times = try FFmpegReference.frameTimes(copy)
        #expect(times.count == 60, "\(location): \(times.count) frames shown")
        #expect(abs((times.first ?? -1) - 0) < 0.001)
        #expect(abs((times.last ?? -1) - 59.0 / 30) < 0.002)
        #expect(try Self.firstVideoPacketIsKeyframe(copy))
        let shown = try Self.frame(copy, 0)
        let source150 = try sourceFrame(gop, 150)
        #expect(ImageMetrics.psnr(shown, source150) == .infinity, "first frame shown is source frame 150")
        let v = try #require(try stream(copy, "video"))
        let a = try #require(try stream(copy, "audio"))
        #expect(abs((double(v["start_time"]) ?? 9) - (double(a["start_time"]) ?? 9)) < 1.0 / 30)
        #expect(abs((double(a["duration"]) ?? 0) - 2) < 0.05)

        // Accurate mode: exactly the 60 frames 150…209, first equal to source frame 150.
        let (exact, e) = try clip(location, 5, 7, accurate: true)
        #expect(!e.usesEditList)
        let etimes = try FFmpegReference.frameTimes(exact)
        #expect(abs(etimes.count - 60) <= 1, "\(location): \(etimes.count) frames")
        #expect(abs((etimes.first ?? -1)) < 0.001)
        let first = try Self.frame(exact, 0)
        #expect(ImageMetrics.ssim(first, source150) > 0.95) // testsrc's sharp text at CRF 18 gives ~0.965
        #expect(ImageMetrics.ssim(first, try sourceFrame(gop, 149)) < ImageMetrics.ssim(first, source150))
        let ev = try #require(try stream(exact, "video"))
        let ea = try #require(try stream(exact, "audio"))
        #expect(abs((double(ev["start_time"]) ?? 9) - (double(ea["start_time"]) ?? 9)) < 1.0 / 30)
        #expect(abs((double(ea["duration"]) ?? 0) - 2) < 0.03)
        // The re-encoded soundtrack keeps the source's mono at its level (it was made stereo, 3 dB quieter).
        #expect(ea["channels"] as? Int == 1, "\(ea)")
        let level = try Self.meanVolume(exact, from: 0, duration: 2)
        let sourceLevel = try Self.meanVolume(gop, from: 5, duration: 2)
        #expect(abs(level - sourceLevel) < 0.5, "\(level) dB against the source's \(sourceLevel) dB")
    }

    /// The mean level (dBFS) of the audio of `path` from `from` for `duration` seconds, by ffmpeg's `volumedetect`.
    static func meanVolume(_ path: String, from: Double, duration: Double) throws -> Double {
        let r = try Shell.run(
            "ffmpeg",
            [
                "-v", "info", "-nostdin", "-ss", "\(from)", "-t", "\(duration)", "-i", path, "-vn", "-af",
                "volumedetect", "-f", "null", "-"
            ])
        try #require(r.status == 0, "\(r.stderr)")
        let line = try #require(r.stderr.split(separator: "\n").first { $0.contains("mean_volume:") })
        let value = line.split(separator: ":").last?.replacingOccurrences(of: "dB", with: "")
        return try #require(value.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) })
    }

    // MARK: the test lines

    @Test func localFile() throws {
        try Self.checkGOPCut(Self.gop)
    }

    @Test(arguments: [
        ("gop4s_bframes_av_10s.mp4", false), ("gop4s_bframes_av_10s_faststart.mp4", false),
        ("gop4s_bframes_av_10s.mp4", true), ("gop4s_bframes_av_10s_faststart.mp4", true),
        ("hls/index.m3u8", false)
    ])
    func overHTTP(_ name: String, _ noRange: Bool) throws {
        let server = try LocalServer(
            script: "http_file_server.py",
            arguments: ["--root", Self.synthetic] + (noRange ? ["--no-range"] : []))
        try Self.checkGOPCut("\(server.baseURL)/\(name)?token=SECRET")
    }

    @Test func localHLS() throws {
        try Self.checkGOPCut(TestData.path("video/synthetic/hls/index.m3u8"))
    }

    /// The gop4s file in an MPEG transport stream (`.ts`; camcorders' `.mts`): no index, timestamps from 1.467 s,
    /// seeks that land on any packet, or past the first keyframe when asked for the start (where a cut from 0 s
    /// failed, "no video keyframe found", and one from 1 s found no frames). The same cuts as from the MP4, and
    /// cuts from its first keyframe: frame for frame the source's.
    @Test func transportStream() throws {
        let ts = TestData.scratchDirectory("ts-clip").appendingPathComponent("gop.ts").path
        let r = try Shell.run("ffmpeg", ["-v", "error", "-nostdin", "-y", "-i", Self.gop, "-c", "copy", ts])
        try #require(r.status == 0, "\(r.stderr)")
        try Self.checkGOPCut(ts)
        for (start, first) in [(0.0, 0), (1.0, 30)] {
            let (copy, result) = try Self.clip(ts, start, start + 1)
            #expect(abs(result.keyframeTime) < 0.001, "\(start) s")
            #expect(try FFmpegReference.frameTimes(copy).count == 30, "\(start) s")
            #expect(ImageMetrics.psnr(try Self.frame(copy, 0), try Self.sourceFrame(Self.gop, first)) == .infinity)
        }
    }

    @Test func readsOnlyWhatItNeeds() throws {
        // A 1 s cut at the start of a moov-first file needs the index and about a tenth of the samples.
        let path = TestData.path("video/synthetic/gop4s_bframes_av_10s_faststart.mp4")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let (_, r) = try Self.clip(path, 0, 1)
        #expect(r.bytesRead > 0)
        #expect(Double(r.bytesRead) < 0.5 * Double(size), "read \(r.bytesRead) of \(size) bytes")
    }

    @Test func variableFrameRateTimestampsSurvive() throws {
        let source = TestData.path("video/regift-test-file.mov")
        let all = try FFmpegReference.frameTimes(source)
        // Copy: every source frame shown in 1…2.5 s, at its own time minus 1 s.
        let (copy, r) = try Self.clip(source, 1, 2.5, ext: "mov")
        #expect(abs(r.keyframeTime - 1) < 0.001)
        let expected = all.filter { $0 >= 1 - 1e-6 && $0 < 2.5 - 1e-6 }.map { $0 - 1 }
        let got = try FFmpegReference.frameTimes(copy)
        // Copy mode may keep a frame or two past the end: references of B-frames inside the range.
        #expect(got.count >= expected.count && got.count <= expected.count + 2, "\(got.count) vs \(expected.count)")
        for (g, e) in zip(got, expected) { #expect(abs(g - e) < 0.001) }
        // Accurate, from a time between keyframes (1.5 s): the same frames, re-encoded.
        let (exact, _) = try Self.clip(source, 1.5, 2.5, accurate: true, ext: "mov")
        let expected2 = all.filter { $0 >= 1.5 - 1e-6 && $0 < 2.5 - 1e-6 }.map { $0 - 1.5 }
        let got2 = try FFmpegReference.frameTimes(exact)
        #expect(got2.count == expected2.count)
        for (g, e) in zip(got2, expected2) { #expect(abs(g - e) < 0.001) }
    }

    @Test(arguments: [false, true])
    func rotationAndAudioSurvive(_ accurate: Bool) throws {
        let source = TestData.path("video/iphone_rotated.mov")
        let (out, _) = try Self.clip(source, 0.5, 1.5, accurate: accurate, ext: "mov")
        let text = try FFmpegReference.probe(
            out,
            [
                "-select_streams", "v:0", "-show_entries",
                "stream_side_data=rotation", "-of", "csv=p=0"
            ])
        #expect(text.contains("-90"), "rotation: \(text)")
        let a = try #require(try Self.stream(out, "audio"))
        #expect(abs((Self.double(a["duration"]) ?? 0) - 1) < 0.05)
        let times = try FFmpegReference.frameTimes(out)
        let all = try FFmpegReference.frameTimes(source).filter { $0 >= 0.5 - 1e-6 && $0 < 1.5 - 1e-6 }
        #expect(times.count == all.count)
    }

    @Test func languagesAndMatroska() throws {
        let dir = TestData.scratchDirectory()
        let tagged = dir.appendingPathComponent("tagged.mp4").path
        let r = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-i", Self.gop, "-c", "copy", "-metadata:s:v:0", "language=fra",
                "-metadata:s:a:0", "language=eng", tagged
            ])
        try #require(r.status == 0)
        for ext in ["mp4", "mov", "m4v", "mkv"] {
            let (out, result) = try Self.clip(tagged, 5, 7, ext: ext)
            #expect(
                try Self.stream(out, "video")?["tags"].flatMap { ($0 as? [String: Any])?["language"] as? String }
                    == "fra")
            #expect(
                try Self.stream(out, "audio")?["tags"].flatMap { ($0 as? [String: Any])?["language"] as? String }
                    == "eng")
            if ext == "mkv" {
                // No edit list: playback starts at the keyframe (4 s), 3 s of video.
                #expect(!result.usesEditList)
                let times = try FFmpegReference.frameTimes(out)
                #expect(times.count == 90)
            }
        }
    }

    @Test func faststartLayout() throws {
        let (out, _) = try Self.clip(Self.gop, 5, 7)
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        let moov = try #require(data.range(of: Data("moov".utf8)))
        let mdat = try #require(data.range(of: Data("mdat".utf8)))
        #expect(moov.lowerBound < mdat.lowerBound)
    }

    @Test func noAudioAndSoundtracks() throws {
        let (none, r0) = try Self.clip(Self.gop, 5, 7, audio: .none)
        #expect(!r0.hasAudio)
        #expect(try Self.stream(none, "audio") == nil)

        let song = TestData.path("video/iphone_rotated.mov") // 2.2 s of AAC: padded with silence to the length
        for mode in [ClipAudio.replace(path: URL(fileURLWithPath: song)), .mix(path: URL(fileURLWithPath: song))] {
            for accurate in [false, true] {
                let (out, r) = try Self.clip(Self.gop, 5, 8, accurate: accurate, audio: mode)
                #expect(r.hasAudio)
                let a = try #require(try Self.stream(out, "audio"))
                #expect(a["codec_name"] as? String == "aac")
                #expect(abs((Self.double(a["duration"]) ?? 0) - 3) < 0.03, "\(mode) accurate=\(accurate)")
                #expect(abs(Self.double(a["start_time"]) ?? 9) < 1.0 / 30)
            }
        }
    }

    @Test func rangeWithoutKeyframeStillHasVideo() throws {
        // 5.2–5.5 s: no keyframe inside; the copy starts at the 4 s keyframe and shows 9 frames from 5.2 s.
        let (out, r) = try Self.clip(Self.gop, 5.2, 5.5)
        #expect(abs(r.keyframeTime - 4) < 0.001)
        let times = try FFmpegReference.frameTimes(out)
        #expect(times.count >= 9 && times.count <= 11, "\(times.count)") // + B-frame references past the end
        let shown = try Self.frame(out, 0)
        #expect(ImageMetrics.psnr(shown, try Self.sourceFrame(Self.gop, 156)) == .infinity)
    }

    @Test func endIsClampedToTheMedia() throws {
        let (out, r) = try Self.clip(Self.gop, 9, 30)
        #expect(abs(r.end - 10) < 0.001)
        #expect(try FFmpegReference.frameTimes(out).count == 30)
        // Said, as `lapse gif` says it: the clip is shorter than asked for.
        #expect(r.warnings.contains { $0.contains("0:30.000 runs past the end") && $0.contains("the clip is 0:01.0") })
        let (_, within) = try Self.clip(Self.gop, 8, 10)
        #expect(within.warnings.isEmpty, "\(within.warnings)")
    }

    @Test func startBeyondTheEnd() throws {
        let dir = TestData.scratchDirectory()
        let out = dir.appendingPathComponent("x.mp4").path
        #expect {
            try Clipper.clip(
                URL(fileURLWithPath: Self.gop), to: URL(fileURLWithPath: out), options: ClipOptions(start: 12, end: 14))
        } throws: { e in
            (e as? LapseError)?.code == .notFound && "\(e)".contains("duration is 0:10.000")
        }
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }
}
