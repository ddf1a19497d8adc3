// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGIF
import LapseMedia
import TestSupport
import Testing

/// A colourful test picture: smooth gradients plus a square at `offset` (so frames differ in one place).
func testFrame(width: Int = 96, height: Int = 64, offset: Int = 0, alphaHole: Bool = false) -> PixelBuffer {
    var p = PixelBuffer(width: width, height: height)
    for y in 0..<height {
        for x in 0..<width {
            var c = RGBA(UInt8(x * 255 / width), UInt8(y * 255 / height), UInt8((x + y) * 127 / (width + height) + 64))
            if x >= 10 + offset, x < 26 + offset, y >= 20, y < 36 { c = RGBA(250, 250, 30) }
            if alphaHole, x < width / 2 { c.a = x < width / 6 ? 0 : x < width / 3 ? 111 : 112 }
            p[x, y] = c
        }
    }
    return p
}

func encode(_ frames: [(PixelBuffer, Double)], options: GIFOptions = GIFOptions()) async throws -> (GIFSummary, GIFFile)
{
    let dir = TestData.scratchDirectory("gif-enc")
    let path = dir.appendingPathComponent("out.gif").path
    let encoder = try GIFEncoder(
        url: URL(fileURLWithPath: path), width: frames[0].0.width, height: frames[0].0.height, options: options)
    for (f, d) in frames { try await encoder.add(f, duration: d) }
    let summary = try await encoder.finish()
    return (summary, try GIFFile(url: URL(fileURLWithPath: path)))
}

@Suite struct GIFEncoderTests {
    @Test(arguments: [GIFPaletteMode.perFrame, .global])
    func framesReadBackMatchTheirSources(palette: GIFPaletteMode) async throws {
        let frames = (0..<8).map { testFrame(offset: $0 * 5) }
        let (summary, gif) = try await encode(frames.map { ($0, 0.1) }, options: GIFOptions(palette: palette))
        #expect(gif.version == "GIF89a")
        #expect(gif.width == 96 && gif.height == 64)
        #expect(gif.loopCount == 0)
        #expect(gif.images.count == 8)
        #expect(gif.delays == Array(repeating: 10, count: 8))
        #expect(summary.delays == gif.delays)
        for image in gif.images { #expect(image.colorCount.nonzeroBitCount == 1) }
        let shown = gif.compositedFrames()
        for (a, b) in zip(shown, frames) { #expect(ImageMetrics.psnr(a, b) >= 30) }
        if palette == .global { #expect(gif.images.dropFirst().allSatisfy { !$0.hasLocalColorMap }) }
    }

    @Test func unchangedPixelsAreTransparentAndFramesCropped() async throws {
        let frames = [testFrame(offset: 0), testFrame(offset: 4)]
        let (_, gif) = try await encode(frames.map { ($0, 0.1) })
        let second = gif.images[1]
        // Only the square moved (x 10…29, y 20…35): the second image covers no more than that.
        #expect(second.x >= 10 && second.x + second.width <= 30)
        #expect(second.y >= 20 && second.y + second.height <= 36)
        #expect(second.transparentIndex != nil)
    }

    @Test func delaysCarryTheRoundingErrorForward() async throws {
        // 1/3 s each: 33, 34, 33 … summing to the total.
        let frames = (0..<9).map { (testFrame(offset: $0 * 3), 1.0 / 3.0) }
        let (_, gif) = try await encode(frames)
        #expect(gif.delays.reduce(0, +) == 300)
        #expect(gif.delays.allSatisfy { $0 == 33 || $0 == 34 })
    }

    @Test func regiftTimingSixteenFramesOfTwentyCentiseconds() async throws {
        let frames = (0..<16).map { (testFrame(offset: $0 * 2), 0.2) }
        let (_, gif) = try await encode(frames)
        #expect(gif.delays == Array(repeating: 20, count: 16))
        #expect(gif.loopCount == 0)
    }

    @Test func identicalFramesAreMergedWithDelaysSummed() async throws {
        let a = testFrame(offset: 0)
        let b = testFrame(offset: 8)
        let (summary, gif) = try await encode([(a, 0.1), (a, 0.1), (a, 0.1), (b, 0.1), (b, 0.2)])
        #expect(gif.delays == [30, 30])
        #expect(summary.framesAdded == 5)
    }

    @Test func noDelayUnderTwoCentiseconds() async throws {
        // 100 fps: 1 cs a frame is not allowed; the total is kept.
        let frames = (0..<20).map { (testFrame(offset: $0), 0.01) }
        let (_, gif) = try await encode(frames)
        #expect(gif.delays.allSatisfy { $0 >= 2 })
        #expect(gif.delays.reduce(0, +) == 20)
    }

    @Test(arguments: [Optional(0), 3, nil])
    func loopCount(_ loop: Int?) async throws {
        let (_, gif) = try await encode(
            [(testFrame(), 0.5), (testFrame(offset: 9), 0.5)],
            options: GIFOptions(loopCount: loop))
        #expect(gif.loopCount == loop)
    }

    @Test(arguments: [GIFPaletteMode.perFrame, .global])
    func alphaBelow112IsTransparentAndClearsWhatWasShown(palette: GIFPaletteMode) async throws {
        // Frame 1 opaque, frame 2 with a transparent band on the left (alpha 0, then 111) and one just opaque
        // enough (112), frame 3 opaque again.
        let frames = [testFrame(), testFrame(alphaHole: true), testFrame(offset: 2)]
        let (_, gif) = try await encode(frames.map { ($0, 0.1) }, options: GIFOptions(palette: palette))
        let shown = gif.compositedFrames()
        #expect(shown.count == 3)
        for y in stride(from: 0, to: 64, by: 7) {
            #expect(shown[0][5, y].a == 255)
            #expect(shown[1][5, y].a == 0) // alpha 0
            #expect(shown[1][20, y].a == 0) // alpha 111
            #expect(shown[1][40, y].a == 255) // alpha 112
            #expect(shown[1][60, y].a == 255) // opaque
            #expect(shown[2][5, y].a == 255)
        }
        #expect(ImageMetrics.psnr(shown[2], frames[2]) >= 30)
    }

    @Test func singleFrame() async throws {
        let (summary, gif) = try await encode([(testFrame(), 0.04)])
        #expect(gif.images.count == 1)
        #expect(gif.delays == [4])
        #expect(summary.frameCount == 1)
    }

    @Test func existingFileIsNotOverwrittenAndCancelLeavesNothing() async throws {
        let dir = TestData.scratchDirectory("gif-enc")
        let path = dir.appendingPathComponent("x.gif").path
        _ = FileManager.default.createFile(atPath: path, contents: Data("keep".utf8))
        #expect(throws: LapseError.self) { try GIFEncoder(url: URL(fileURLWithPath: path), width: 4, height: 4) }
        let other = dir.appendingPathComponent("y.gif").path
        let encoder = try GIFEncoder(url: URL(fileURLWithPath: other), width: 96, height: 64)
        try await encoder.add(testFrame(), duration: 0.1)
        encoder.cancel()
        #expect(!FileManager.default.fileExists(atPath: other))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(leftovers == ["x.gif"])
    }

    @Test func noFramesIsAnError() async throws {
        let dir = TestData.scratchDirectory("gif-enc")
        let path = dir.appendingPathComponent("z.gif").path
        let encoder = try GIFEncoder(url: URL(fileURLWithPath: path), width: 8, height: 8)
        await #expect(throws: LapseError.self) { _ = try await encoder.finish() }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
