// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit
import Synchronization
import TestSupport
import Testing

@Suite struct VideoJobTests {
    let dir = TestData.scratchDirectory("videojob")

    func colour(_ name: String, _ c: String, _ size: String = "64x48") throws -> String {
        try GeneratedMedia.image("color=c=\(c):s=\(size)", to: dir.appendingPathComponent(name).path)
    }

    /// Decodes the output with the ffmpeg CLI, reading it as BT.709 limited range explicitly.
    func frames(_ path: String, _ w: Int, _ h: Int) throws -> [PixelBuffer] {
        try FFmpegReference.frames(
            path, filters: "scale=in_color_matrix=bt709:in_range=limited:flags=accurate_rnd+full_chroma_int",
            size: (w, h))
    }

    /// A list file's durations are checked as `--image-duration` is (0.001…86400 s), naming the file and line,
    /// before anything is decoded: 1e12 s (that would encode for ever), 0, a negative or non-numeric one.
    @Test(arguments: ["1e12", "0", "-2", "0.0001", "inf", "two"])
    func listDurationsOutOfRangeAreRefused(_ duration: String) throws {
        let list = dir.appendingPathComponent("bad-\(duration).txt")
        try "\(try colour("d.png", "red"))\t1\n\(try colour("e.png", "blue"))\t\(duration)\n".write(
            to: list, atomically: true, encoding: .utf8)
        #expect {
            try ImageInputs.expand(["@" + list.path])
        } throws: { error in
            guard let e = error as? LapseError else { return false }
            return e.code == .invalidInput && e.subject == list.path + ":2"
        }
        try "\(try colour("d.png", "red"))\t86400\n".write(to: list, atomically: true, encoding: .utf8)
        #expect(try ImageInputs.expand(["@" + list.path]).first?.duration == 86400)
    }

    /// Without a size, a first image larger than 4K players take gives the largest frame they do (aspect kept,
    /// with a warning naming the image), and the photos are decoded at half size for it; the frames look like
    /// the full photos scaled down.
    @Test func largePhotosGiveAFrameFourKPlayersTake() async throws {
        #expect(VideoJob.defaultSize(displayWidth: 16000, displayHeight: 8000) == (4096, 2048))
        #expect(VideoJob.defaultSize(displayWidth: 3000, displayHeight: 4000) == (2585, 3447))
        #expect(VideoJob.defaultSize(displayWidth: 3840, displayHeight: 2160) == (3840, 2160))
        let photos = ["GSAG2002.JPG", "R0014760.JPG"].map { TestData.path("pano360/trekview_360/\($0)") }
        let out = dir.appendingPathComponent("large.mp4").path
        var job = VideoJob(
            inputs: photos.map { ImageInput(url: URL(fileURLWithPath: $0)) }, output: URL(fileURLWithPath: out))
        job.overwrite = true
        let warnings = Mutex<[String]>([])
        let summary = try await job.run(warning: { message in warnings.withLock { $0.append(message) } })
        #expect(summary.width == 4096 && summary.height == 2048)
        #expect(
            warnings.withLock { $0 } == [
                """
                \(photos[0]) is 5760x2880: the video is 4096x2048, the largest frame 4K players take (set a size \
                for another)
                """
            ])
        let frames = try self.frames(out, 1024, 512)
        #expect(frames.count == 60)
        for (i, photo) in photos.enumerated() {
            let source = try #require(
                FFmpegReference.frames(photo, filters: "scale=1024:512:flags=area", size: (1024, 512)).first)
            let ssim = ImageMetrics.ssim(frames[30 * i + 15], source)
            #expect(ssim >= 0.9, "\(photo): SSIM \(ssim)")
        }
    }

    @Test func durationsAddUpAndTheLastImageLastsItsWholeTime() async throws {
        let list = dir.appendingPathComponent("list.txt")
        try """
        \(try colour("a.png", "red"))\t1.0\n\(try colour("b.png", "lime"))\t0.5\n# \
        comment\n\n\(try colour("c.png", "blue"))\t2\n
        """
        .write(to: list, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("t.mp4").path
        let job = VideoJob(inputs: try ImageInputs.expand(["@" + list.path]), output: URL(fileURLWithPath: out))
        let summary = try await job.run()
        #expect(summary.frames == 105)
        let times = try FFmpegReference.frameTimes(out)
        #expect(times.count == 105)
        #expect(times.first == 0)
        // Constant frame rate: every frame at i/30 s.
        for (i, t) in times.enumerated() { #expect(abs(t - Double(i) / 30) < 0.0005) }
        let probe = try FFmpegReference.probeJSON(out)
        let format = try #require(probe["format"] as? [String: Any])
        let duration = try #require(Double(format["duration"] as? String ?? ""))
        #expect(abs(duration - 3.5) <= 1.0 / 30 + 1e-6)
        // Frames 0–29 red, 30–44 green, 45–104 blue: the last image fills its whole 2 s.
        let decoded = try frames(out, 64, 48)
        #expect(decoded.count == 105)
        let expected: [(Range<Int>, RGBA)] = [
            (0..<30, RGBA(255, 0, 0)), (30..<45, RGBA(0, 255, 0)), (45..<105, RGBA(0, 0, 255))
        ]
        for (range, c) in expected {
            for i in range {
                let p = decoded[i][32, 24]
                #expect(
                    abs(Int(p.r) - Int(c.r)) < 8 && abs(Int(p.g) - Int(c.g)) < 8 && abs(Int(p.b) - Int(c.b)) < 8,
                    "frame \(i): \(p)")
            }
        }
    }

    @Test func outputPlaysEverywhere() async throws {
        let out = dir.appendingPathComponent("p.mp4").path
        let src = try GeneratedMedia.image("testsrc2=s=1281x721", to: dir.appendingPathComponent("odd.png").path)
        _ = try await VideoJob(inputs: [ImageInput(url: URL(fileURLWithPath: src))], output: URL(fileURLWithPath: out))
            .run()
        let probe = try FFmpegReference.probeJSON(out)
        let stream = try #require((probe["streams"] as? [[String: Any]])?.first)
        #expect(stream["pix_fmt"] as? String == "yuv420p")
        #expect(["High", "Main"].contains(stream["profile"] as? String ?? ""))
        #expect(stream["color_space"] as? String == "bt709")
        #expect(stream["color_primaries"] as? String == "bt709")
        #expect(stream["color_transfer"] as? String == "bt709")
        #expect(stream["color_range"] as? String == "tv")
        #expect(stream["width"] as? Int == 1280)
        #expect(stream["height"] as? Int == 720)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: out))
        let moov = try #require(bytes.range(of: Data("moov".utf8)))
        let mdat = try #require(bytes.range(of: Data("mdat".utf8)))
        #expect(moov.lowerBound < mdat.lowerBound)
    }

    /// Fidelity at CRF 18, including SMPTE bars, which show a BT.601/BT.709 mix-up as a colour shift.
    @Test(arguments: [
        "images/generated/smptehdbars_1280x720.png", "images/generated/testsrc2_1281x721_odd.png",
        "images/pillow/hopper.png", "images/exif-orientation-examples/Landscape_6.jpg"
    ])
    func framesMatchTheirSources(file: String) async throws {
        let out = dir.appendingPathComponent("f.mp4").path
        var job = VideoJob(
            inputs: [ImageInput(url: URL(fileURLWithPath: TestData.path(file)))], output: URL(fileURLWithPath: out))
        job.crf = 18
        job.imageDuration = 0.2
        job.overwrite = true
        let summary = try await job.run()
        let image = try DecodedImage(url: URL(fileURLWithPath: TestData.path(file)))
        let source = try FrameFitter(
            width: summary.width, height: summary.height, mode: .contain, background: RGBA(0, 0, 0)
        ).frame(for: image)
        let decoded = try frames(out, summary.width, summary.height)
        #expect(decoded.count == 6)
        for frame in decoded {
            #expect(ImageMetrics.ssim(frame, source) >= 0.98, "\(file)")
            #expect(ImageMetrics.psnr(frame, source) >= 30, "\(file)")
        }
        if file.contains("smpte") {
            // Bar centres keep their colours channel by channel (a BT.601/BT.709 mix-up moves saturated
            // colours by 10–30 levels; SSIM on luma alone could miss it).
            var worst = 0
            for x in stride(from: 40, to: 1280, by: 80) {
                for y in [200, 520, 650] {
                    let s = source[x, y]
                    let d = decoded[0][x, y]
                    worst = max(worst, abs(Int(s.r) - Int(d.r)), abs(Int(s.g) - Int(d.g)), abs(Int(s.b) - Int(d.b)))
                }
            }
            #expect(worst <= 8, "largest channel error at bar centres: \(worst)")
        }
    }

    @Test(arguments: [
        ("images/pngsuite/s01n3p01.png", 2, 2), ("images/pngsuite/s39n3p04.png", 38, 38),
        ("images/generated/testsrc2_1281x721_odd.png", 1280, 720)
    ])
    func oddSizesGiveEvenFrames(file: String, width: Int, height: Int) async throws {
        let out = dir.appendingPathComponent("o.mp4").path
        var job = VideoJob(
            inputs: [ImageInput(url: URL(fileURLWithPath: TestData.path(file)))], output: URL(fileURLWithPath: out))
        job.overwrite = true
        job.imageDuration = 0.1
        let summary = try await job.run()
        #expect(summary.width == width && summary.height == height)
        #expect(try FFmpegReference.frames(out).count == 3)
    }

    @Test func mixedShapesAreFittedWithoutDistortion() async throws {
        // A portrait red image into a landscape frame: pillarboxed, red area keeps the 1:2 shape.
        let portrait = try colour("portrait.png", "red", "100x200")
        let landscape = try colour("landscape.png", "blue", "400x200")
        let out = dir.appendingPathComponent("m.mp4").path
        var job = VideoJob(
            inputs: [ImageInput(url: URL(fileURLWithPath: landscape)), ImageInput(url: URL(fileURLWithPath: portrait))],
            output: URL(fileURLWithPath: out))
        job.imageDuration = 0.1
        job.background = RGBA(0, 255, 0)
        let summary = try await job.run()
        #expect(summary.width == 400 && summary.height == 200)
        let decoded = try frames(out, 400, 200)
        let last = try #require(decoded.last)
        // Red spans columns 150..<250 (100 px wide for 200 px high), green outside.
        #expect(last[200, 100].r > 200 && last[200, 100].g < 40)
        #expect(last[155, 100].r > 200)
        #expect(last[144, 100].g > 200 && last[144, 100].r < 40)
        #expect(last[256, 100].g > 200 && last[256, 100].r < 40)
        // Cover fills the frame with red, stretch too.
        for mode in [FitMode.cover, .stretch] {
            var j = VideoJob(
                inputs: [ImageInput(url: URL(fileURLWithPath: portrait))], output: URL(fileURLWithPath: out))
            j.size = (400, 200)
            j.fit = mode
            j.imageDuration = 0.1
            j.overwrite = true
            _ = try await j.run()
            let f = try frames(out, 400, 200)[0]
            #expect(f[5, 100].r > 200 && f[395, 100].r > 200, "\(mode)")
        }
    }

    @Test func transparencyIsCompositedOverTheBackground() async throws {
        let out = dir.appendingPathComponent("a.mp4").path
        var job = VideoJob(
            inputs: [ImageInput(url: URL(fileURLWithPath: TestData.path("images/pillow/transparent.png")))],
            output: URL(fileURLWithPath: out)
        )
        job.background = RGBA(255, 0, 255)
        job.imageDuration = 0.1
        job.crf = 10
        _ = try await job.run()
        let source = try DecodedImage(url: URL(fileURLWithPath: TestData.path("images/pillow/transparent.png")))
            .pixels()
        let frame = try frames(out, 200, 150)[0]
        // Pick a fully transparent and a fully opaque source pixel away from edges.
        var checkedTransparent = false
        var checkedOpaque = false
        for y in stride(from: 10, to: 140, by: 7) {
            for x in stride(from: 10, to: 190, by: 7) {
                let s = source[x, y]
                let d = frame[x, y]
                if s.a == 0 && !checkedTransparent {
                    #expect(d.r > 230 && d.g < 30 && d.b > 230, "transparent pixel at \(x),\(y) shows \(d)")
                    checkedTransparent = true
                } else if s.a == 255 && !checkedOpaque {
                    #expect(abs(Int(d.g) - Int(s.g)) < 20)
                    checkedOpaque = true
                }
            }
        }
        #expect(checkedTransparent && checkedOpaque)
    }

    /// Images are decoded several at once, but a bad image is reported in input order: of two unreadable images
    /// among real photos, the error names the first, whichever decode failed first; with `skipInvalid` both are
    /// skipped and the rest encoded.
    @Test func theFirstBadImageIsNamed() async throws {
        let photos = try FileManager.default.contentsOfDirectory(atPath: TestData.path("images/opensfm_lund/images"))
            .filter { $0.lowercased().hasSuffix(".jpg") }.sorted().prefix(4)
            .map { TestData.path("images/opensfm_lund/images/\($0)") }
        try #require(photos.count == 4)
        // A JPEG cut to its first kilobyte, and a text file named .jpg.
        let cut = dir.appendingPathComponent("cut.jpg")
        let text = dir.appendingPathComponent("text.jpg")
        try FileManager.default.contents(atPath: photos[0])!.prefix(1024).write(to: cut)
        try Data("not a picture".utf8).write(to: text)
        let inputs = [photos[0], photos[1], cut.path, photos[2], text.path, photos[3]]
        var job = VideoJob(
            inputs: inputs.map { ImageInput(url: URL(fileURLWithPath: $0), duration: 0.2) },
            output: dir.appendingPathComponent("bad.mp4"))
        job.size = (160, 120)
        job.overwrite = true
        for _ in 0..<3 {
            do {
                _ = try await job.run()
                Issue.record("a job with unreadable images succeeded")
            } catch let error as LapseError {
                #expect(error.subject == cut.path, "\(error)")
            }
        }
        job.skipInvalid = true
        let summary = try await job.run()
        #expect(summary.images == 4 && summary.skipped == 2)
    }

    @Test func cancellationLeavesNoFile() async throws {
        let out = dir.appendingPathComponent("c.mp4").path
        let src = try colour("c.png", "red", "320x240")
        var job = VideoJob(
            inputs: Array(repeating: ImageInput(url: URL(fileURLWithPath: src)), count: 200),
            output: URL(fileURLWithPath: out))
        job.imageDuration = 1
        let task = Task { try await job.run() }
        task.cancel()
        await #expect(throws: (any Error).self) { try await task.value }
        #expect(!FileManager.default.fileExists(atPath: out))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains("partial") }
        #expect(leftovers.isEmpty)
    }

    @Test func audioIsAddedAsAACCutToTheVideo() async throws {
        let out = dir.appendingPathComponent("au.mp4").path
        var job = VideoJob(
            inputs: [ImageInput(url: URL(fileURLWithPath: try colour("au.png", "navy")))],
            output: URL(fileURLWithPath: out))
        job.imageDuration = 3
        job.audio = URL(fileURLWithPath: TestData.path("video/synthetic/gop4s_bframes_av_10s.mp4")) // 10 s of beeps
        _ = try await job.run()
        let streams = try #require(try FFmpegReference.probeJSON(out)["streams"] as? [[String: Any]])
        let audio = try #require(streams.first { $0["codec_type"] as? String == "audio" })
        #expect(audio["codec_name"] as? String == "aac")
        let audioDuration = try #require(Double(audio["duration"] as? String ?? ""))
        #expect(abs(audioDuration - 3) <= 1.0 / 30 + 0.025) // one video frame plus one AAC frame

        // A file without audio is a clear error, and no output is left.
        var silent = VideoJob(
            inputs: [ImageInput(url: URL(fileURLWithPath: try colour("s.png", "navy")))],
            output: dir.appendingPathComponent("s.mp4"))
        silent.audio = URL(fileURLWithPath: TestData.path("images/pillow/hopper.png"))
        await #expect(throws: LapseError.self) { try await silent.run() }
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("s.mp4").path))
    }
}
