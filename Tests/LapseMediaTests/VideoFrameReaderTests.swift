// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia
import TestSupport
import Testing

/// Mean colour of a small square around (x, y).
private func mean(_ p: PixelBuffer, _ x: Int, _ y: Int, radius: Int = 4) -> (r: Int, g: Int, b: Int) {
    var r = 0
    var g = 0
    var b = 0
    var n = 0
    for yy in max(0, y - radius)...min(p.height - 1, y + radius) {
        for xx in max(0, x - radius)...min(p.width - 1, x + radius) {
            let c = p[xx, yy]
            r += Int(c.r)
            g += Int(c.g)
            b += Int(c.b)
            n += 1
        }
    }
    return (r / n, g / n, b / n)
}

/// The last filter for ffmpeg CLI references: the RGBA conversion with the flags the reader uses (full chroma
/// interpolation), so the two decodes agree.
private let toRGBA = "scale=flags=bicubic+accurate_rnd+full_chroma_int,format=rgba"

private func named(_ c: (r: Int, g: Int, b: Int)) -> String {
    switch (c.r > 128, c.g > 100, c.b > 128) {
    case (true, false, false): return "red"
    case (false, true, false): return "green"
    case (false, false, true): return "blue"
    case (true, true, false): return "yellow"
    default: return "other \(c)"
    }
}

@Suite struct VideoFrameReaderTests {
    /// The frames' times read from the packets alone are those the decoder gives, frame for frame, for every
    /// video of the shared data: B-frames (reordered), variable frame rate with gaps, edit lists, HEVC, VP9 with
    /// alpha, one frame.
    @Test(arguments: [
        "pano360/valiant360_overpass/overpass-clip.mp4", "video/synthetic/gop4s_bframes_av_10s.mp4",
        "video/synthetic/vfr_60_30_gaps_320x180.mp4", "video/synthetic/hdr10_pq_hevc10_320x180.mp4",
        "video/synthetic/alpha_vp9_160x120.webm", "video/synthetic/single_frame_0.04s.mp4",
        "video/synthetic/short_0.2s_5frames.mp4", "video/iphone_rotated.mov", "video/regift-test-file.mov",
        "video/synthetic/anamorphic_720x480_sar32-27.mp4"
    ])
    func frameTimesFromPacketsAreTheDecodersTimes(_ name: String) throws {
        let packets = try #require(
            try VideoFrameReader(URL(fileURLWithPath: TestData.path(name))).frameTimesFromPackets())
        let reader = try VideoFrameReader(URL(fileURLWithPath: TestData.path(name)))
        var decoded: [Double] = []
        while let t = try reader.skipFrame() { decoded.append(t) }
        #expect(packets.count == decoded.count)
        #expect(
            zip(packets, decoded).allSatisfy { abs($0 - $1) < 1e-9 }, "\(packets.prefix(8)) vs \(decoded.prefix(8))")
    }

    /// Which frames are reference frames, read from the packets' NAL unit headers (H.264 in MP4 with and without
    /// B-pyramids, H.264 in MPEG-TS as an Annex B byte stream, H.265 in MP4, an iPhone's H.264 with no B-frames),
    /// is what the decoder itself leaves out when told to skip the others: the frames it gives are exactly those,
    /// at their times (as ffmpeg's `-skip_frame noref` counts them: 33 of the 360° video's 120, 201 of 300, 80 of
    /// 120, 26 of 50, 66 of 66). A VP9 stream has no such flags.
    @Test(arguments: [
        ("pano360/valiant360_overpass/overpass-clip.mp4", 33, 120),
        ("video/synthetic/gop4s_bframes_av_10s.mp4", 201, 300),
        ("video/synthetic/hls/seg000.ts", 80, 120), ("video/synthetic/hdr10_pq_hevc10_320x180.mp4", 26, 50),
        ("video/iphone_rotated.mov", 66, 66)
    ])
    func referenceFramesFromPacketsAreTheDecodersOwn(_ name: String, references: Int, frames: Int) throws {
        let packets = try #require(try VideoFrameReader(URL(fileURLWithPath: TestData.path(name))).framesFromPackets())
        let flags = try #require(packets.isReference)
        #expect(packets.times.count == frames && flags.count == frames)
        #expect(flags.filter { $0 }.count == references)
        let reader = try VideoFrameReader(URL(fileURLWithPath: TestData.path(name)))
        reader.skipsNonReferenceFrames = true
        var decoded: [Double] = []
        while let t = try reader.skipFrame() { decoded.append(t) }
        let expected = packets.times.indices.filter { flags[$0] }.map { packets.times[$0] }
        #expect(decoded.count == expected.count)
        #expect(
            zip(decoded, expected).allSatisfy { abs($0 - $1) < 1e-9 }, "\(decoded.prefix(8)) vs \(expected.prefix(8))")
        #expect(
            try VideoFrameReader(URL(fileURLWithPath: TestData.path("video/synthetic/alpha_vp9_160x120.webm")))
                .framesFromPackets()?
                .isReference == nil)
    }

    /// SOURCES.txt: +90 → 180x320, TL green TR yellow BL red BR blue; −90 → TL blue TR red BL yellow BR green;
    /// 180 → TL yellow TR blue BL green BR red.
    @Test(arguments: [
        ("quadrants_320x180.mp4", 320, 180, ["red", "green", "blue", "yellow"]),
        ("quadrants_dm_rot+90.mp4", 180, 320, ["green", "yellow", "red", "blue"]),
        ("quadrants_dm_rot-90.mp4", 180, 320, ["blue", "red", "yellow", "green"]),
        ("quadrants_dm_rot180.mp4", 320, 180, ["yellow", "blue", "green", "red"])
    ])
    func displayMatrixRotation(file: String, width: Int, height: Int, corners: [String]) throws {
        let reader = try VideoFrameReader(URL(fileURLWithPath: TestData.path("video/synthetic/\(file)")))
        #expect(reader.displayWidth == width && reader.displayHeight == height)
        let p = try reader.frame(at: 0.5)
        #expect(p.width == width && p.height == height)
        let got = [mean(p, 10, 10), mean(p, width - 11, 10), mean(p, 10, height - 11), mean(p, width - 11, height - 11)]
            .map(named)
        #expect(got == corners)
    }

    @Test func iPhoneVideoIsPortrait() throws {
        let reader = try VideoFrameReader(URL(fileURLWithPath: TestData.path("video/iphone_rotated.mov")))
        #expect(reader.codedWidth == 568 && reader.codedHeight == 320)
        #expect(reader.displayWidth == 320 && reader.displayHeight == 568)
        #expect(reader.rotation == 90)
        reader.outputSize = (160, 284)
        let p = try reader.frame(at: 1)
        #expect(p.width == 160 && p.height == 284)
        // Against the ffmpeg CLI's autorotated decode of the same frame.
        let reference = try FFmpegReference.frames(
            TestData.path("video/iphone_rotated.mov"),
            filters: "scale=160:284,\(toRGBA)", size: (160, 284))
        let times = try FFmpegReference.frameTimes(TestData.path("video/iphone_rotated.mov"))
        let start = times.first ?? 0
        let index = times.lastIndex { $0 - start <= 1 + 1e-6 } ?? 0
        #expect(reference.count == times.count)
        #expect(ImageMetrics.psnr(p, reference[index]) >= 35)
    }

    @Test func sampleAspectRatioIsApplied() throws {
        let reader = try VideoFrameReader(
            URL(fileURLWithPath: TestData.path("video/synthetic/anamorphic_720x480_sar32-27.mp4")))
        #expect(abs(reader.sampleAspectRatio - 32.0 / 27.0) < 1e-9)
        #expect(reader.displayWidth == 853 && reader.displayHeight == 480)
        #expect(try reader.frame(at: 0).width == 853)
    }

    /// Frame i is the source frame shown at i/fps: the last one whose presentation time is ≤ i/fps.
    @Test func variableFrameRateKeepsItsTiming() throws {
        let path = TestData.path("video/synthetic/vfr_60_30_gaps_320x180.mp4")
        let reference = try FFmpegReference.frames(path, filters: toRGBA, size: (320, 180))
        let times = try FFmpegReference.frameTimes(path)
        #expect(reference.count == times.count)
        let reader = try VideoFrameReader(URL(fileURLWithPath: path))
        let fps = 10.0
        var i = 0
        while Double(i) / fps < 3 {
            let t = Double(i) / fps
            let p = try reader.frame(at: t)
            let expected = times.lastIndex { $0 - times[0] <= t + 1e-6 } ?? 0
            let psnr = ImageMetrics.psnr(p, reference[expected])
            #expect(psnr >= 40, "frame \(i) at \(t) s: \(psnr) dB against source frame \(expected)")
            // …and it is not one of its neighbours (they differ: testsrc2 moves every frame).
            if expected + 1 < reference.count {
                #expect(ImageMetrics.psnr(p, reference[expected + 1]) < psnr)
            }
            i += 1
        }
    }

    @Test(arguments: ["single_frame_0.04s.mp4", "short_0.2s_5frames.mp4"])
    func veryShortVideos(file: String) throws {
        let reader = try VideoFrameReader(URL(fileURLWithPath: TestData.path("video/synthetic/\(file)")))
        let reference = try FFmpegReference.frames(
            TestData.path("video/synthetic/\(file)"), filters: toRGBA,
            size: (320, 180))
        for (i, t) in [0, 0.1, 0.19, 5].enumerated() {
            let p = try reader.frame(at: t)
            let expected = min(reference.count - 1, Int((t * 25 + 1e-6).rounded(.down)))
            #expect(ImageMetrics.psnr(p, reference[expected]) >= 40, "time \(i)")
        }
    }

    @Test(arguments: ["hdr10_pq_hevc10_320x180.mp4", "hlg_hevc10_320x180.mp4"])
    func hdrIsToneMappedLikeFFmpeg(file: String) throws {
        let path = TestData.path("video/synthetic/\(file)")
        let reader = try VideoFrameReader(URL(fileURLWithPath: path))
        #expect(reader.isHDR)
        let chain =
            "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=hable:desat=0,"
            + "zscale=t=bt709:m=bt709:r=pc,format=gbrp"
        let reference = try FFmpegReference.frames(path, filters: chain + "," + toRGBA, size: (320, 180))
        for n in [0, 25, 49] {
            let p = try reader.frame(at: Double(n) / 25)
            let psnr = ImageMetrics.psnr(p, reference[n])
            #expect(psnr >= 30, "frame \(n): \(psnr) dB")
        }
        // Not washed out: the plain (untone-mapped) decode differs a lot from the reference.
        let plain = try FFmpegReference.frames(path, size: (320, 180))
        #expect(ImageMetrics.psnr(plain[0], reference[0]) < 28)
    }

    @Test func vp9AlphaIsKept() throws {
        let path = TestData.path("video/synthetic/alpha_vp9_160x120.webm")
        let reader = try VideoFrameReader(URL(fileURLWithPath: path))
        #expect(reader.hasAlpha)
        let reference = try FFmpegReference.frames(path, extraInput: ["-c:v", "libvpx-vp9"])
        for n in 0..<10 {
            let p = try reader.frame(at: Double(n) / 10)
            var mismatches = 0
            var transparent = 0
            for i in stride(from: 3, to: p.bytes.count, by: 4) {
                if (p.bytes[i] < 128) != (reference[n].bytes[i] < 128) { mismatches += 1 }
                if p.bytes[i] < 128 { transparent += 1 }
            }
            #expect(transparent > 160 * 120 / 2)
            #expect(mismatches <= 160 * 120 / 100, "frame \(n): \(mismatches) alpha mismatches")
        }
    }

    @Test func seekingStartsAtTheRequestedTime() throws {
        let path = TestData.path("video/synthetic/gop4s_bframes_av_10s.mp4")
        let reader = try VideoFrameReader(URL(fileURLWithPath: path))
        try reader.seek(to: 6.5)
        let p = try reader.frame(at: 6.5)
        let reference = try FFmpegReference.frames(
            path, filters: "select='eq(n\\,195)',\(toRGBA)",
            size: (320, 240))
        #expect(ImageMetrics.psnr(p, reference[0]) >= 40)
    }

    /// The same video in an MPEG transport stream (`.ts`; camcorders' `.mts`, recorded broadcasts): no index and
    /// timestamps from 1.467 s, so libavformat's seek lands on any packet — here a predicted frame after the
    /// keyframe at 0 s, whose decoding started at the next keyframe (4 s: a GIF from 2 s showed 4 s). Every seek
    /// starts at the frame asked for, as in the MP4.
    @Test(arguments: [0.0, 2.0, 4.5, 6.5])
    func seekingATransportStreamStartsAtTheRequestedTime(_ seconds: Double) throws {
        let path = TestData.path("video/synthetic/gop4s_bframes_av_10s.mp4")
        let ts = TestData.scratchDirectory("ts").appendingPathComponent("gop.ts").path
        if !FileManager.default.fileExists(atPath: ts) {
            let r = try Shell.run("ffmpeg", ["-v", "error", "-nostdin", "-y", "-i", path, "-c", "copy", ts])
            try #require(r.status == 0, "\(r.stderr)")
        }
        let reader = try VideoFrameReader(URL(fileURLWithPath: ts))
        try reader.seek(to: seconds)
        let p = try reader.frame(at: seconds)
        let n = Int((seconds * 30).rounded())
        let reference = try FFmpegReference.frames(
            path, filters: "select='eq(n\\,\(n))+eq(n\\,\(n + 60))',\(toRGBA)", size: (320, 240))
        #expect(ImageMetrics.psnr(p, reference[0]) >= 40, "\(seconds) s")
        #expect(ImageMetrics.psnr(p, reference[1]) < 25, "\(seconds) s: not the frame 2 s later")
    }

    @Test func notAVideoIsAnError() throws {
        let dir = TestData.scratchDirectory("vfr")
        let text = dir.appendingPathComponent("notes.mp4").path
        _ = FileManager.default.createFile(atPath: text, contents: Data("hello, not a video\n".utf8))
        // The cause: FFmpeg's own code, AVERROR_INVALIDDATA, for what is not media; ENOENT for no file.
        let garbage = try #require(throws: LapseError.self) { try VideoFrameReader(URL(fileURLWithPath: text)) }
        #expect(garbage.cause == .ffmpeg(-0x4144_4E49), "\(garbage)") // FFERRTAG('I','N','D','A')
        let missing = try #require(throws: LapseError.self) {
            try VideoFrameReader(dir.appendingPathComponent("missing.mp4"))
        }
        #expect(missing.cause == .posix(ENOENT), "\(missing)")
    }
}
