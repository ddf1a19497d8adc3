// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import TestSupport
import Testing

@testable import LapseMedia

/// Opens media with ``MediaInput``: local files, HTTP (with and without Range), HLS, and every error case.
@Suite(.serialized)
struct ClipMediaInputTests {
    static let gop = TestData.path("video/synthetic/gop4s_bframes_av_10s.mp4")
    static let synthetic = TestData.path("video/synthetic")

    /// Reads every packet; returns (video packets, audio packets, first video keyframe time after the seek).
    static func countPackets(_ input: MediaInput) throws -> (video: Int, audio: Int) {
        let packet = try Packet()
        var v = 0
        var a = 0
        while try input.read(into: packet) {
            if Int(packet.pointer.pointee.stream_index) == input.videoStreamIndex { v += 1 }
            if Int(packet.pointer.pointee.stream_index) == input.audioStreamIndex { a += 1 }
        }
        return (v, a)
    }

    @Test func localFileStreams() throws {
        let input = try MediaInput(location: URL(fileURLWithPath: Self.gop))
        #expect(abs((input.duration ?? 0) - 10) < 0.01)
        #expect(input.startTime == 0)
        let v = try #require(input.videoStream)
        #expect(v.codecName == "h264" && v.width == 320 && v.height == 240)
        #expect(abs((v.frameRate ?? 0) - 30) < 0.01)
        #expect(input.audioStream?.codecName == "aac")
        let counts = try Self.countPackets(input)
        #expect(counts.video == 300 && counts.audio == 432)
    }

    @Test func rotationIsRead() throws {
        let input = try MediaInput(location: URL(fileURLWithPath: TestData.path("video/iphone_rotated.mov")))
        #expect(input.videoStream?.rotation == -90)
        #expect(input.videoStream?.width == 568)
        #expect(input.audioStream != nil)
    }

    @Test func seekLandsOnKeyframeAtOrBefore() throws {
        let input = try MediaInput(location: URL(fileURLWithPath: Self.gop))
        try input.seek(to: 5)
        let packet = try Packet()
        var first: Double?
        while try input.read(into: packet) {
            if Int(packet.pointer.pointee.stream_index) == input.videoStreamIndex {
                #expect(packet.pointer.pointee.flags & 1 != 0) // AV_PKT_FLAG_KEY
                first = input.time(of: packet.pointer)
                break
            }
        }
        #expect(try abs(#require(first) - 4) < 0.001)
    }

    @Test(arguments: ["gop4s_bframes_av_10s.mp4", "gop4s_bframes_av_10s_faststart.mp4", "hls/index.m3u8"])
    func overHTTPWithRange(_ name: String) throws {
        let server = try LocalServer(script: "http_file_server.py", arguments: ["--root", Self.synthetic])
        let input = try MediaInput(location: URL(location: "\(server.baseURL)/\(name)?key=SECRET"))
        #expect(input.displayName == "\(server.baseURL)/\(name)?…")
        #expect(abs((input.duration ?? 0) - 10) < 0.05)
        #expect(input.videoStream?.width == 320)
        let counts = try Self.countPackets(input)
        #expect(counts.video == 300)
        #expect(!input.downloadedFirst)
    }

    @Test(arguments: ["gop4s_bframes_av_10s.mp4", "gop4s_bframes_av_10s_faststart.mp4"])
    func overHTTPWithoutRange(_ name: String) throws {
        let server = try LocalServer(script: "http_file_server.py", arguments: ["--root", Self.synthetic, "--no-range"])
        let input = try MediaInput(location: URL(location: "\(server.baseURL)/\(name)"))
        #expect(input.downloadedFirst == !name.contains("faststart")) // moov at the end must be downloaded
        let counts = try Self.countPackets(input)
        #expect(counts.video == 300 && counts.audio == 432)
    }

    // MARK: - Errors: one line, naming the input (without its query string)

    static func openError(_ location: String, options: MediaInput.Options = .init()) -> LapseError? {
        do {
            let input = try MediaInput(location: URL(location: location), options: options)
            _ = try countPackets(input)
            return nil
        } catch let e as LapseError {
            return e
        } catch {
            return LapseError(.other, nil, "\(error)")
        }
    }

    @Test func missingFile() throws {
        let e = try #require(Self.openError("/nonexistent/clip.mp4"))
        #expect(e.description == "/nonexistent/clip.mp4: no such file")
        #expect(e.code == .invalidInput)
    }

    @Test func notAMediaFile() throws {
        let dir = TestData.scratchDirectory()
        let path = dir.appendingPathComponent("notes.mp4").path
        try Data(String(repeating: "hello, not a video\n", count: 200).utf8).write(to: URL(fileURLWithPath: path))
        let e = try #require(Self.openError(path))
        #expect(e.code == .invalidInput)
        #expect(e.description.contains("not a media file"))
        #expect(!e.description.contains("\n"))
    }

    @Test func noVideoStream() throws {
        let dir = TestData.scratchDirectory()
        let path = dir.appendingPathComponent("tone.m4a").path
        let r = try Shell.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=f=440:d=1", "-c:a", "aac", path])
        try #require(r.status == 0)
        let e = try #require(Self.openError(path))
        #expect(e.description == "\(path): no video stream (only audio)")
    }

    @Test(arguments: [0.3, 0.8])
    func truncatedFile(_ fraction: Double) throws {
        // Cut the faststart file (moov first), so the index promises samples that are missing; and the
        // moov-at-end file, whose index is gone.
        for name in ["gop4s_bframes_av_10s_faststart.mp4", "gop4s_bframes_av_10s.mp4"] {
            let data = try Data(contentsOf: URL(fileURLWithPath: "\(Self.synthetic)/\(name)"))
            let dir = TestData.scratchDirectory()
            let path = dir.appendingPathComponent("cut.mp4").path
            try data.prefix(Int(Double(data.count) * fraction)).write(to: URL(fileURLWithPath: path))
            let e = try #require(Self.openError(path), "\(name) cut at \(fraction) opened and read fully")
            #expect(e.code == .invalidInput)
            #expect(e.description.contains("truncated"), "\(e)")
        }
    }

    @Test(arguments: [(404, "HTTP 404 not found"), (403, "HTTP 403 forbidden")])
    func httpStatus(_ status: Int, _ message: String) throws {
        let server = try LocalServer(script: "http_file_server.py", arguments: ["--root", Self.synthetic])
        let e = try #require(Self.openError("\(server.baseURL)/__status/\(status)/a.mp4?token=SECRET"))
        #expect(e.description == "\(server.baseURL)/__status/\(status)/a.mp4?…: \(message)")
        #expect(e.code == (status == 404 ? .notFound : .denied))
    }

    @Test func missingOnServerIs404() throws {
        let server = try LocalServer(script: "http_file_server.py", arguments: ["--root", Self.synthetic])
        let e = try #require(Self.openError("\(server.baseURL)/nothere.mp4"))
        #expect(e.description.hasSuffix("HTTP 404 not found"))
    }

    @Test func connectionRefused() throws {
        // Find a port nobody listens on: start a server, note its port, stop it.
        let server = try LocalServer(script: "http_file_server.py", arguments: ["--root", Self.synthetic])
        let url = "\(server.baseURL)/gop4s_bframes_av_10s.mp4?sig=SECRET"
        server.stop()
        let e = try #require(Self.openError(url))
        #expect(e.description.hasSuffix("connection refused (is the server running and the URL right?)"))
        #expect(!e.description.contains("SECRET"))
    }

    @Test func stalledServerTimesOut() throws {
        let server = try LocalServer(script: "http_file_server.py", arguments: ["--root", Self.synthetic])
        var options = MediaInput.Options()
        options.readTimeout = 1
        let e = try #require(
            Self.openError(
                "\(server.baseURL)/__stall/gop4s_bframes_av_10s_faststart.mp4?k=SECRET",
                options: options))
        #expect(e.code == .network)
        #expect(e.description.contains("timed out"), "\(e)")
        #expect(!e.description.contains("SECRET"))
    }

    @Test func overallDeadline() throws {
        let server = try LocalServer(script: "http_file_server.py", arguments: ["--root", Self.synthetic])
        var options = MediaInput.Options()
        options.readTimeout = 30
        options.deadline = 1
        let started = Date()
        let e = try #require(
            Self.openError(
                "\(server.baseURL)/__stall/gop4s_bframes_av_10s_faststart.mp4",
                options: options))
        #expect(e.description.hasSuffix("timed out after 1 s"))
        #expect(Date().timeIntervalSince(started) < 20)
    }
}
