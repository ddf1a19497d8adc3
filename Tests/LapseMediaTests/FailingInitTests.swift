// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Foundation
import LapseCore
import TestSupport
import Testing

@testable import LapseMedia

/// Every way the media types' initialisers fail, each with the error it must give. `make leakcheck` runs these
/// (and FailingInitGIFTests) under AddressSanitizer with LeakSanitizer: each FFmpeg handle allocated before the
/// failure must be freed, and no freed filter may be used again.
@Suite struct FailingInitMediaTests {
    static let scratch = TestData.scratchDirectory("lapse-failing-init")
    static let video = TestData.path("video/synthetic/quadrants_320x180.mp4")
    static let silent = TestData.path("video/synthetic/short_0.2s_5frames.mp4")
    static let audio = TestData.path("video/synthetic/gop4s_bframes_av_10s.mp4")

    /// The encoder fails after its format context, stream and codec context exist: a bad preset (x264 refuses
    /// to open), a folder that does not exist (the file cannot be created), a container FFmpeg does not know.
    @Test func videoEncoder() throws {
        let good = Self.scratch.appendingPathComponent("ok.mp4").path
        var settings = VideoEncoderSettings(width: 64, height: 48, fps: 25)
        settings.presetName = "no-such-preset"
        let preset = try #require(throws: LapseError.self) {
            try VideoEncoder(url: URL(fileURLWithPath: good), container: .mp4, settings: settings)
        }
        #expect(preset.code == .usage && preset.reason.contains("preset 'no-such-preset'"))
        settings.presetName = nil
        settings.preset = .ultrafast
        let missing = Self.scratch.appendingPathComponent("no/such/folder/out.mp4").path
        let folder = try #require(throws: LapseError.self) {
            try VideoEncoder(url: URL(fileURLWithPath: missing), container: .mp4, settings: settings)
        }
        #expect(folder.code == .output && folder.subject == missing)
        let container = try #require(throws: LapseError.self) {
            try VideoEncoder(path: good, muxer: "no-such-muxer", settings: settings, audio: [])
        }
        #expect(container.code == .output)
        settings.width = 63
        #expect(throws: LapseError.self) {
            try VideoEncoder(url: URL(fileURLWithPath: good), container: .mp4, settings: settings)
        }
        // After the audio stream was added (its parameters copied), the file cannot be created.
        let track = try AudioTrack(sources: [.init(location: URL(fileURLWithPath: Self.audio))], duration: 1)
        settings.width = 64
        let withAudio = try #require(throws: LapseError.self) {
            try VideoEncoder(
                path: missing, muxer: "mp4", settings: settings, audio: [track.streamParameters])
        }
        #expect(withAudio.code == .output)
    }

    /// The audio track fails with its first source's decoder open: a second source that does not exist, one
    /// without sound; a track whose only source has no sound.
    @Test func audioTrack() throws {
        let missing = Self.scratch.appendingPathComponent("none.m4a").path
        let absent = try #require(throws: LapseError.self) {
            try AudioTrack(
                sources: [
                    .init(location: URL(fileURLWithPath: Self.audio)), .init(location: URL(fileURLWithPath: missing))
                ], duration: 2)
        }
        #expect(absent.subject == missing)
        let silent = try #require(throws: LapseError.self) {
            try AudioTrack(
                sources: [
                    .init(location: URL(fileURLWithPath: Self.audio)),
                    .init(location: URL(fileURLWithPath: Self.silent))
                ], duration: 2)
        }
        #expect(silent.code == .invalidInput && silent.reason == "no audio stream")
        #expect(throws: LapseError.self) {
            try AudioTrack(sources: [.init(location: URL(fileURLWithPath: Self.silent))], duration: 2)
        }
    }

    /// Readers fail at each step: no file, not media, no video stream, truncated, an HTTP server that is not there.
    @Test func readersAndInputs() throws {
        let text = Self.scratch.appendingPathComponent("notes.mp4")
        try Data("not a video".utf8).write(to: text)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.video))
        let truncated = Self.scratch.appendingPathComponent("cut.mp4")
        try bytes.prefix(bytes.count / 3).write(to: truncated)
        let music = Self.scratch.appendingPathComponent("sine.m4a").path
        let made = try Shell.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=0.5", music])
        #expect(made.status == 0)
        for location in [Self.scratch.appendingPathComponent("none.mp4").path, text.path, "http://127.0.0.1:9/v.mp4"] {
            #expect(throws: LapseError.self, "\(location)") { try VideoFrameReader(URL(location: location)) }
        }
        // A cut file opens (its index is whole) and then runs out of frames: the reader and its decoder go.
        if let reader = try? VideoFrameReader(truncated) {
            var frames = 0
            while (try? reader.nextFrame()) != nil, frames < 1000 { frames += 1 }
            #expect(frames < 1000)
        }
        let noVideo = try #require(throws: LapseError.self) { try VideoFrameReader(URL(fileURLWithPath: music)) }
        #expect(noVideo.subject == music, "\(noVideo)")
    }

    /// Still images fail at each step (and from memory); one of more pixels than allowed fails before decoding.
    @Test func images() throws {
        let jpeg = [UInt8](try Data(contentsOf: URL(fileURLWithPath: TestData.path("images/pillow/hopper.jpg"))))
        let cases: [(String, [UInt8])] = [
            ("empty.png", []), ("text.jpg", Array("hello".utf8)), ("half.jpg", Array(jpeg.prefix(jpeg.count / 2))),
            ("head.jpg", Array(jpeg.prefix(600))), ("huge.png", CraftedImages.png(width: 40000, height: 40000)),
            ("rows.png", CraftedImages.png(width: 64, height: 64))
        ]
        for (name, data) in cases {
            let path = Self.scratch.appendingPathComponent(name).path
            try Data(data).write(to: URL(fileURLWithPath: path))
            #expect(throws: LapseError.self, "\(name)") { try DecodedImage(url: URL(fileURLWithPath: path)) }
            if !data.isEmpty {
                #expect(throws: LapseError.self, "\(name)") { try DecodedImage(data: data, name: name) }
            }
        }
    }

    /// A filter graph that cannot be built (a filter that does not exist) fails every frame, freeing each graph
    /// it began and keeping none of its filters.
    @Test func frameConverter() throws {
        let converter = try VideoFrameConverter(
            width: 32, height: 24, rotationFilters: ["no_such_filter"], swapsAxes: false, toneMap: true)
        let frame = try Frame()
        try frame.allocate(width: 64, height: 48, format: AV_PIX_FMT_YUV420P)
        for _ in 0..<3 {
            let error = try #require(throws: LapseError.self) { try converter.convert(frame) }
            #expect(error.reason.contains("cannot set up the video filters"))
        }
    }
}
