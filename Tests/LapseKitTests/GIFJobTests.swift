// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit
import TestSupport
import Testing

/// The RGBA conversion the reader uses, as the last ffmpeg CLI filter of a reference decode.
private let toRGBA = "scale=flags=bicubic+accurate_rnd+full_chroma_int,format=rgba"

/// Runs a job and reads the GIF back with giflib.
private func makeGIF(_ source: GIFJob.Source, _ configure: (inout GIFJob) -> Void = { _ in }) async throws
    -> (GIFJob.Summary, GIFFile, String)
{
    let path = TestData.scratchDirectory("gif-job").appendingPathComponent("out.gif").path
    var job = GIFJob(source: source, output: URL(fileURLWithPath: path))
    configure(&job)
    let summary = try await job.run()
    return (summary, try GIFFile(url: URL(fileURLWithPath: path)), path)
}

/// The composited GIF frame shown at `centiseconds` after the start.
private func shown(_ gif: GIFFile, _ frames: [PixelBuffer], at centiseconds: Int) -> PixelBuffer {
    var t = 0
    for (i, d) in gif.delays.enumerated() {
        if centiseconds < t + d { return frames[i] }
        t += d
    }
    return frames[frames.count - 1]
}

/// A source video's frames as the ffmpeg CLI decodes them (through `filters`, ending in RGBA), by time.
private struct SourceFrames {
    let frames: [PixelBuffer]
    let times: [Double]

    init(_ path: String, filters: String, size: (Int, Int)) throws {
        frames = try FFmpegReference.frames(path, filters: filters, size: size)
        times = try FFmpegReference.frameTimes(path)
    }

    /// Index of the frame on screen `t` seconds after the first (the last one whose time is ≤ t).
    func index(at t: Double) -> Int { times.lastIndex { $0 - times[0] <= t + 1e-6 } ?? 0 }

    /// The frame on screen `t` seconds after the first.
    func frame(at t: Double) -> PixelBuffer { frames[index(at: t)] }
}

private func mean(_ p: PixelBuffer, _ x: Int, _ y: Int) -> (Int, Int, Int) {
    var r = 0
    var g = 0
    var b = 0
    var n = 0
    for yy in max(0, y - 3)...min(p.height - 1, y + 3) {
        for xx in max(0, x - 3)...min(p.width - 1, x + 3) {
            let c = p[xx, yy]
            r += Int(c.r)
            g += Int(c.g)
            b += Int(c.b)
            n += 1
        }
    }
    return (r / n, g / n, b / n)
}

private func colourName(_ c: (Int, Int, Int)) -> String {
    switch (c.0 > 128, c.1 > 100, c.2 > 128) {
    case (true, false, false): return "red"
    case (false, true, false): return "green"
    case (false, false, true): return "blue"
    case (true, true, false): return "yellow"
    default: return "other \(c)"
    }
}

@Suite struct GIFJobTests {
    @Test func outputSizeRules() {
        #expect(GIFJob.outputSize(displayWidth: 1920, displayHeight: 1080, rule: .auto) == (384, 216))
        #expect(GIFJob.outputSize(displayWidth: 816, displayHeight: 434, rule: .auto) == (245, 130))
        #expect(GIFJob.outputSize(displayWidth: 320, displayHeight: 568, rule: .auto) == (160, 284))
        #expect(GIFJob.outputSize(displayWidth: 320, displayHeight: 180, rule: .auto) == (224, 126))
        #expect(GIFJob.outputSize(displayWidth: 320, displayHeight: 180, rule: .width(100)) == (100, 56))
        #expect(GIFJob.outputSize(displayWidth: 320, displayHeight: 180, rule: .height(90)) == (160, 90))
        #expect(GIFJob.outputSize(displayWidth: 320, displayHeight: 180, rule: .scale(0.25)) == (80, 45))
    }

    /// A rotated phone video gives a portrait GIF whose every frame matches the autorotated source.
    /// A phone video of a grey wall (smooth, faint sensor noise), halved: the GIF keeps the texture, as smooth
    /// frames get more colours (measured: mean luma SSIM 0.996; 0.95 before, with the 11 or so colours an MSE
    /// target gave). Against ffmpeg's Lanczos downscale of each source frame.
    @Test func phoneVideoOfAWallKeepsItsTexture() async throws {
        let path = TestData.path("video/iphone_rotated.mov")
        let (_, gif, _) = try await makeGIF(.video(URL(fileURLWithPath: path)))
        let frames = gif.compositedFrames()
        let source = try SourceFrames(
            path, filters: "scale=160:284:flags=lanczos+accurate_rnd+full_chroma_int,format=rgba",
            size: (160, 284))
        let ssim = (0..<22).map {
            ImageMetrics.ssim(shown(gif, frames, at: $0 * 10), source.frame(at: Double($0) / 10))
        }
        #expect(ssim.reduce(0, +) / 22 >= 0.99)
    }

    @Test func iPhoneVideoGivesAPortraitGIF() async throws {
        let path = TestData.path("video/iphone_rotated.mov")
        let (summary, gif, _) = try await makeGIF(.video(URL(fileURLWithPath: path)))
        #expect(gif.width == 160 && gif.height == 284)
        #expect(gif.delays.reduce(0, +) == 220)
        #expect(summary.gif.frameCount == gif.images.count)
        let frames = gif.compositedFrames()
        let source = try SourceFrames(path, filters: "scale=160:284,\(toRGBA)", size: (160, 284))
        for i in 0..<22 {
            let psnr = ImageMetrics.psnr(shown(gif, frames, at: i * 10), source.frame(at: Double(i) / 10))
            #expect(psnr >= 30, "frame \(i): \(psnr) dB")
        }
    }

    @Test(arguments: [
        ("quadrants_dm_rot+90.mp4", ["green", "yellow", "red", "blue"]),
        ("quadrants_dm_rot-90.mp4", ["blue", "red", "yellow", "green"]),
        ("quadrants_dm_rot180.mp4", ["yellow", "blue", "green", "red"])
    ])
    func rotatedQuadrants(file: String, corners: [String]) async throws {
        let (_, gif, _) = try await makeGIF(.video(URL(fileURLWithPath: TestData.path("video/synthetic/\(file)")))) {
            $0.duration = 0.3
        }
        let f = gif.compositedFrames()[0]
        let w = gif.width
        let h = gif.height
        #expect((file.contains("180") ? (224, 126) : (126, 224)) == (w, h))
        let got = [mean(f, 5, 5), mean(f, w - 6, 5), mean(f, 5, h - 6), mean(f, w - 6, h - 6)].map(colourName)
        #expect(got == corners)
    }

    /// Regift's own expectation: 5 fps for 3.2 s → 16 frames of 0.2 s (fewer when neighbours are identical),
    /// delays summing to 320 cs, each a multiple of 20, looping forever.
    @Test func regiftTiming() async throws {
        let path = TestData.path("video/regift-test-file.mov")
        let (_, gif, _) = try await makeGIF(.video(URL(fileURLWithPath: path))) {
            $0.frameRate = FrameRate(5)
            $0.duration = 3.2
        }
        #expect(gif.version == "GIF89a")
        #expect(gif.delays.reduce(0, +) == 320)
        #expect(gif.delays.allSatisfy { $0 % 20 == 0 })
        #expect(gif.images.count <= 16 && gif.images.count >= 8)
        #expect(gif.loopCount == 0)
        #expect(gif.width == 245 && gif.height == 130)
        let frames = gif.compositedFrames()
        let source = try SourceFrames(path, filters: "scale=245:130,\(toRGBA)", size: (245, 130))
        for i in 0..<16 {
            let psnr = ImageMetrics.psnr(shown(gif, frames, at: i * 20), source.frame(at: Double(i) / 5))
            #expect(psnr >= 30, "frame \(i): \(psnr) dB")
        }
    }

    /// Progress counts up to exactly its total (the frames sampled), for whole videos and ranges alike.
    @Test(arguments: [(10.0, nil as Double?), (3, nil), (10, 1.234), (7, 2.0)])
    func progressReachesItsTotal(fps: Double, duration: Double?) async throws {
        let events = Events()
        var job = GIFJob(
            source: .video(URL(fileURLWithPath: TestData.path("video/regift-test-file.mov"))),
            output: URL(fileURLWithPath: TestData.scratchDirectory("gifprogress").appendingPathComponent("p.gif").path))
        job.frameRate = try #require(FrameRate.parse(String(fps)))
        job.duration = duration
        let summary = try await job.run(progress: { events.append($0) })
        let last = try #require(events.all.last)
        #expect(last.total == summary.framesSampled && last.completed == summary.framesSampled, "\(last)")
    }

    final class Events: @unchecked Sendable {
        private let lock = NSLock()
        private var events: [ProgressEvent] = []
        func append(_ e: ProgressEvent) { lock.withLock { events.append(e) } }
        var all: [ProgressEvent] { lock.withLock { events } }
    }

    /// Variable frame rate: GIF frame i shows the source frame on screen at i/fps.
    @Test func variableFrameRate() async throws {
        let path = TestData.path("video/synthetic/vfr_60_30_gaps_320x180.mp4")
        let (_, gif, _) = try await makeGIF(.video(URL(fileURLWithPath: path))) { $0.size = .scale(1) }
        #expect(gif.delays.reduce(0, +) == 300)
        let frames = gif.compositedFrames()
        let source = try SourceFrames(path, filters: toRGBA, size: (320, 180))
        for i in 0..<30 {
            let expected = source.index(at: Double(i) / 10)
            let f = shown(gif, frames, at: i * 10)
            let psnr = ImageMetrics.psnr(f, source.frames[expected])
            #expect(psnr >= 30, "frame \(i): \(psnr) dB against source frame \(expected)")
            if expected + 1 < source.frames.count { #expect(ImageMetrics.psnr(f, source.frames[expected + 1]) < psnr) }
        }
    }

    @Test(arguments: [("single_frame_0.04s.mp4", [4]), ("short_0.2s_5frames.mp4", [10, 10])])
    func veryShortVideosGiveValidGIFs(file: String, delays: [Int]) async throws {
        let (_, gif, _) = try await makeGIF(.video(URL(fileURLWithPath: TestData.path("video/synthetic/\(file)"))))
        #expect(gif.delays == delays)
        #expect(gif.width == 224 && gif.height == 126)
    }

    @Test func hdr10IsToneMapped() async throws {
        let path = TestData.path("video/synthetic/hdr10_pq_hevc10_320x180.mp4")
        let (_, gif, _) = try await makeGIF(.video(URL(fileURLWithPath: path))) { $0.size = .scale(1) }
        let chain =
            "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=hable:desat=0,"
            + "zscale=t=bt709:m=bt709:r=pc,format=gbrp,\(toRGBA)"
        let reference = try FFmpegReference.frames(path, filters: chain, size: (320, 180))
        let frames = gif.compositedFrames()
        for i in stride(from: 0, to: 20, by: 4) {
            let psnr = ImageMetrics.psnr(shown(gif, frames, at: i * 10), reference[i * 25 / 10])
            #expect(psnr >= 30, "frame \(i): \(psnr) dB")
        }
    }

    /// A VP9 video with alpha (a disc, opaque within a half-transparent ring, coded lossily: the ring's alpha
    /// wobbles around 128) gives the transparency of the same content as lossless PNGs: no see-through hairline
    /// or holes inside the shape (a pixel whose neighbours are all opaque in the PNG is opaque), and at most 0.3 %
    /// of the pixels differ, on the shape's outer edge.
    @Test func vp9AlphaBecomesTransparent() async throws {
        let path = TestData.path("video/synthetic/alpha_vp9_160x120.webm")
        let (_, gif, _) = try await makeGIF(.video(URL(fileURLWithPath: path))) { $0.size = .scale(1) }
        let dir = TestData.path("video/synthetic/rgba_png_seq")
        let frames = gif.compositedFrames()
        #expect(gif.delays.reduce(0, +) == 100)
        for i in 0..<10 {
            let f = shown(gif, frames, at: i * 10)
            let png = try DecodedImage(url: URL(fileURLWithPath: "\(dir)/frame\(String(format: "%03d", i + 1)).png"))
                .pixels()
            let (mismatches, inside) = TransparencyCheck.compare(f, against: png)
            #expect(inside == 0, "frame \(i): \(inside) see-through pixels inside the shape")
            #expect(mismatches <= 160 * 120 * 3 / 1000, "frame \(i): \(mismatches) pixels")
        }
    }

    @Test func pngSequenceKeepsTransparency() async throws {
        let dir = TestData.path("video/synthetic/rgba_png_seq")
        let (_, gif, _) = try await makeGIF(.images(try ImageInputs.expand([dir]))) { $0.size = .scale(1) }
        // Frames 3 and 4 (and 8 and 9) are identical (the circle moves with sin 2πt): merged, delays summed.
        #expect(gif.delays == [10, 10, 20, 10, 10, 10, 20, 10])
        let frames = (0..<10).map { shown(gif, gif.compositedFrames(), at: $0 * 10) }
        for i in 0..<10 {
            let source = try DecodedImage(url: URL(fileURLWithPath: "\(dir)/frame\(String(format: "%03d", i + 1)).png"))
                .pixels()
            var mismatches = 0
            for p in stride(from: 3, to: source.bytes.count, by: 4)
            where (frames[i].bytes[p] == 0) != (source.bytes[p] < 128) {
                mismatches += 1
            }
            #expect(mismatches == 0, "frame \(i)")
            var opaque = source
            for p in stride(from: 3, to: opaque.bytes.count, by: 4) where opaque.bytes[p] < 128 {
                opaque.bytes[p - 3] = 0
                opaque.bytes[p - 2] = 0
                opaque.bytes[p - 1] = 0
            }
            var shownOpaque = frames[i]
            for p in stride(from: 3, to: shownOpaque.bytes.count, by: 4) where shownOpaque.bytes[p] == 0 {
                shownOpaque.bytes[p - 3] = 0
                shownOpaque.bytes[p - 2] = 0
                shownOpaque.bytes[p - 1] = 0
            }
            #expect(ImageMetrics.psnr(shownOpaque, opaque) >= 30)
        }
    }

    @Test func globalPaletteAndNoLoop() async throws {
        let path = TestData.path("video/regift-test-file.mov")
        let (_, gif, _) = try await makeGIF(.video(URL(fileURLWithPath: path))) {
            $0.frameRate = FrameRate(5)
            $0.duration = 2
            $0.options.palette = .global
            $0.options.loopCount = nil
        }
        #expect(gif.loopCount == nil)
        #expect(gif.delays.reduce(0, +) == 200)
        #expect(gif.images.filter(\.hasLocalColorMap).count <= 1)
    }

    /// The same file served over HTTP gives the same GIF as the local file.
    @Test func onlineVideo() async throws {
        let server = try LocalServer(script: "http_file_server.py", arguments: ["--root", TestData.path("video")])
        defer { server.stop() }
        let (_, local, localPath) = try await makeGIF(
            .video(URL(fileURLWithPath: TestData.path("video/regift-test-file.mov")))
        ) {
            $0.duration = 1
        }
        let (_, online, onlinePath) = try await makeGIF(
            .video(URL(location: "\(server.baseURL)/regift-test-file.mov?token=secret"))
        ) {
            $0.duration = 1
        }
        #expect(online.delays == local.delays)
        #expect(FileManager.default.contents(atPath: onlinePath) == FileManager.default.contents(atPath: localPath))
    }

    @Test func startBeyondTheEndIsAnError() async throws {
        let path = TestData.scratchDirectory("gif-job").appendingPathComponent("x.gif").path
        var job = GIFJob(
            source: .video(URL(fileURLWithPath: TestData.path("video/iphone_rotated.mov"))),
            output: URL(fileURLWithPath: path))
        job.start = 5
        await #expect(throws: LapseError.self) { _ = try await job.run() }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
