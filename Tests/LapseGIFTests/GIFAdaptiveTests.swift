// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
import TestSupport
import Testing

@testable import LapseGIF

/// Deterministic noise in −amplitude…amplitude (a linear congruential generator).
struct Noise {
    var state: UInt64
    mutating func next(_ amplitude: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(2 * amplitude + 1)) - amplitude
    }
}

/// A warm grey wall: a gentle vertical gradient with faint sensor-like noise (what a phone video of a wall
/// looks like after downscaling).
func wallFrame(width: Int = 96, height: Int = 128, seed: UInt64) -> PixelBuffer {
    var p = PixelBuffer(width: width, height: height)
    var noise = Noise(state: seed)
    for y in 0..<height {
        for x in 0..<width {
            let base = 180 - y * 30 / height
            let n = noise.next(2)
            p[x, y] = RGBA(UInt8(base + n), UInt8(base - 8 + n), UInt8(base - 16 + n))
        }
    }
    return p
}

/// Dark "glyphs" (small blocks of greys) on a white page, scrolled up by `scroll` pixels.
func pageFrame(width: Int = 128, height: Int = 96, scroll: Int) -> PixelBuffer {
    var p = PixelBuffer(width: width, height: height, fill: RGBA(255, 255, 255))
    for y in 0..<height {
        let py = y + scroll
        guard py % 12 >= 3, py % 12 < 9 else { continue } // text lines 6 px high
        for x in 8..<width - 8 {
            var noise = Noise(state: UInt64(py / 12 * 1000 + x / 5))
            let glyph = noise.next(100)
            guard glyph > -40, x % 5 != 4 else { continue } // words and letter gaps
            let v = UInt8(40 + (glyph + 100) % 120 + (py % 12 == 3 || py % 12 == 8 ? 60 : 0))
            p[x, y] = RGBA(v, v, glyph > 60 ? 200 : v) // a few blue-ish "links"
        }
    }
    return p
}

@Suite struct GIFAdaptiveTests {
    @Test func smoothShareSeparatesWallsFromPagesAndFlatColour() {
        let wall = FrameDiffer.binarized(wallFrame(seed: 1))
        #expect(FrameAnalysis.smoothShare(wall, width: 96, height: 128) >= 0.95)
        let page = FrameDiffer.binarized(pageFrame(scroll: 0))
        #expect(FrameAnalysis.smoothShare(page, width: 128, height: 96) <= 0.05)
        let flat = FrameDiffer.binarized(PixelBuffer(width: 64, height: 64, fill: RGBA(90, 90, 90)))
        #expect(FrameAnalysis.smoothShare(flat, width: 64, height: 64) == 0)
        #expect(FrameAnalysis.smoothShare(flat, width: 64, height: 64) < FrameAnalysis.smoothFrameShare)
    }

    @Test func toleranceIsZeroInFlatNeighbourhoodsOnly() throws {
        var p = PixelBuffer(width: 16, height: 8, fill: RGBA(120, 120, 120))
        for y in 0..<8 { for x in 8..<16 { p[x, y] = (x + y) % 2 == 0 ? RGBA(60, 60, 60) : RGBA(200, 200, 200) } }
        let map = try #require(FrameAnalysis.toleranceMap(FrameDiffer.binarized(p), width: 16, height: 8, tolerance: 2))
        #expect(map[3 * 16 + 2] == 0) // flat grey
        #expect(map[3 * 16 + 12] == 2) // checkerboard: range 140 → 35, capped at 2
        #expect(map[3 * 16 + 7] == 2) // next to the checkerboard
        #expect(FrameAnalysis.toleranceMap(FrameDiffer.binarized(p), width: 16, height: 8, tolerance: 0) == nil)
    }

    /// A flat area that moved by one level is redrawn (a stale patch there shows and costs SSIM most);
    /// a textured area that moved as much stays as it was (transparent, nothing to encode).
    @Test func smallChangesAreRedrawnOnlyWhereTheAreaIsFlat() async throws {
        func frame(_ shift: Int) -> PixelBuffer {
            var p = PixelBuffer(
                width: 48, height: 32, fill: RGBA(UInt8(120 + shift), UInt8(120 + shift), UInt8(120 + shift)))
            for y in 0..<32 {
                for x in 24..<48 {
                    let v = UInt8(((x + y) % 2 == 0 ? 60 : 200) + shift)
                    p[x, y] = RGBA(v, v, v)
                }
            }
            return p
        }
        let frames = [(frame(0), 0.1), (frame(1), 0.1)]
        let (_, adaptive) = try await encode(frames)
        #expect(adaptive.images.count == 2)
        let second = try #require(adaptive.images.last)
        // The flat half only, less its last column (next to the texture, where the tolerance applies).
        #expect(second.x == 0 && second.width == 23)
        let shown = adaptive.compositedFrames()[1]
        #expect(shown[5, 5] == RGBA(121, 121, 121))
        #expect(shown[30, 5] == frames[0].0[30, 5]) // the textured half is left as it was
        var plainOptions = GIFOptions()
        plainOptions.adaptive = false
        let (_, plain) = try await encode(frames, options: plainOptions)
        #expect(plain.images.count == 1) // within the tolerance everywhere: merged, the grey left stale
    }

    /// Smooth frames (a noisy wall) get enough colours to keep their faint texture instead of banding.
    @Test func smoothFramesKeepTheirTexture() async throws {
        let frames = (0..<4).map { wallFrame(seed: UInt64($0 + 1)) }
        let (_, adaptive) = try await encode(frames.map { ($0, 0.1) })
        var plainOptions = GIFOptions()
        plainOptions.adaptive = false
        let (_, plain) = try await encode(frames.map { ($0, 0.1) }, options: plainOptions)
        let a = zip(adaptive.compositedFrames(), frames).map { ImageMetrics.ssim($0, $1) }
        let p = zip(plain.compositedFrames(), frames).map { ImageMetrics.ssim($0, $1) }
        for (i, s) in a.enumerated() {
            #expect(s >= 0.99, "frame \(i): SSIM \(s)")
            #expect(s >= p[i] + 0.05, "frame \(i): SSIM \(s) vs \(p[i]) without")
        }
        #expect(adaptive.images.allSatisfy { $0.colorCount >= 64 })
        for (f, s) in zip(adaptive.compositedFrames(), frames) { #expect(ImageMetrics.psnr(f, s) >= 40) }
    }

    /// Repeating the previous index where it shows the same colour: identical pictures, a smaller file.
    @Test func repeatedIndicesShrinkTheFileNotThePicture() async throws {
        let frames = (0..<6).map { (pageFrame(scroll: $0 * 2), 0.1) }
        let (withRuns, a) = try await encode(frames)
        var options = GIFOptions()
        options.repeatIndices = false
        let (without, b) = try await encode(frames, options: options)
        // Compared first: on a mismatch, #expect(a == b) of two arrays works out their difference (megabytes).
        let same = a.compositedFrames().map(\.bytes) == b.compositedFrames().map(\.bytes)
        #expect(same)
        #expect(Double(withRuns.bytes) <= 0.95 * Double(without.bytes), "\(withRuns.bytes) vs \(without.bytes) bytes")
    }

    /// A screen recording (regift-test-file.mov, 2 s at 10 fps, ×0.3): the luma/chroma palettes give a much
    /// smaller file than RGB palettes at the same quality setting (measured 98 kB vs 120 kB) for about the
    /// same SSIM (luma SSIM 0.9982 vs 0.9984; bench/gif.sh's SSIM over Y, Cb and Cr is higher), every frame
    /// ≥ 30 dB.
    @Test func screenRecordingIsSmallerAtTheSameSSIM() async throws {
        let reader = try VideoFrameReader(URL(fileURLWithPath: TestData.path("video/regift-test-file.mov")))
        reader.outputSize = (245, 130)
        var frames: [PixelBuffer] = []
        for i in 0..<20 { frames.append(try reader.frame(at: Double(i) / 10)) }
        let (adaptiveSummary, adaptive) = try await encode(frames.map { ($0, 0.1) })
        var plainOptions = GIFOptions()
        plainOptions.adaptive = false
        let (plainSummary, plain) = try await encode(frames.map { ($0, 0.1) }, options: plainOptions)
        func meanSSIM(_ gif: GIFFile) -> Double {
            let s = zip(gif.compositedFrames(), frames).map { ImageMetrics.ssim($0, $1) }
            return s.reduce(0, +) / Double(s.count)
        }
        let a = meanSSIM(adaptive)
        let p = meanSSIM(plain)
        #expect(
            Double(adaptiveSummary.bytes) <= 0.85 * Double(plainSummary.bytes),
            "\(adaptiveSummary.bytes) vs \(plainSummary.bytes) bytes")
        #expect(a >= p - 0.0005, "SSIM \(a) vs \(p)")
        for (f, s) in zip(adaptive.compositedFrames(), frames) { #expect(ImageMetrics.psnr(f, s) >= 30) }
    }
}
