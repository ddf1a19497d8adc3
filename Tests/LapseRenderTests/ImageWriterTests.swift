// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia
import TestSupport
import Testing

/// LapseMedia's ImageWriter (written with the projector, its first user; kept beside its tests).
@Suite struct ImageWriterTests {
    let dir = TestData.scratchDirectory("imagewriter")

    /// A gradient with a hard edge and, optionally, varying alpha.
    static func picture(width: Int = 97, height: Int = 61, alpha: Bool) -> PixelBuffer {
        var p = PixelBuffer(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                p[x, y] = RGBA(
                    UInt8(x * 255 / (width - 1)), UInt8(y * 255 / (height - 1)), x < width / 2 ? 30 : 220,
                    alpha ? UInt8((x + y) % 256) : 255)
            }
        }
        return p
    }

    @Test("PNG is lossless, with and without alpha, read back by ffmpeg", arguments: [false, true])
    func pngRoundTrip(alpha: Bool) throws {
        let image = Self.picture(alpha: alpha)
        let path = dir.appendingPathComponent("p\(alpha).png").path
        try ImageWriter.write(image, to: URL(fileURLWithPath: path), overwrite: false)
        let back = try #require(try FFmpegReference.frames(path).first)
        #expect(back == image)
        let format = try FFmpegReference.probe(path, ["-show_entries", "stream=codec_name,pix_fmt", "-of", "csv=p=0"])
        #expect(format.trimmingCharacters(in: .whitespacesAndNewlines) == (alpha ? "png,rgba" : "png,rgb24"))
    }

    @Test("JPEG: baseline JFIF 4:2:0, close to the source, smaller at lower quality")
    func jpeg() throws {
        let image = Self.picture(width: 320, height: 240, alpha: false)
        let high = try ImageWriter.encode(image, as: .jpeg(quality: 95))
        let low = try ImageWriter.encode(image, as: .jpeg(quality: 30))
        #expect(high.starts(with: [0xFF, 0xD8]) && high.suffix(2) == [0xFF, 0xD9])
        #expect(low.count < high.count)
        let path = dir.appendingPathComponent("q.jpg").path
        try ImageWriter.write(image, to: URL(fileURLWithPath: path), overwrite: false) // quality from the default
        let back = try #require(try FFmpegReference.frames(path).first)
        #expect(ImageMetrics.psnr(back, image) > 35)
        let format = try FFmpegReference.probe(path, ["-show_entries", "stream=codec_name,pix_fmt", "-of", "csv=p=0"])
        #expect(format.trimmingCharacters(in: .whitespacesAndNewlines) == "mjpeg,yuvj420p")
    }

    @Test("existing files, unknown extensions and bad qualities are errors; nothing partial is left")
    func errors() throws {
        let image = Self.picture(alpha: false)
        let path = dir.appendingPathComponent("e.png").path
        try ImageWriter.write(image, to: URL(fileURLWithPath: path), overwrite: false)
        #expect { try ImageWriter.write(image, to: URL(fileURLWithPath: path), overwrite: false) } throws: {
            ($0 as? LapseError)?.code == .output
        }
        try ImageWriter.write(image, to: URL(fileURLWithPath: path), overwrite: true)
        #expect {
            try ImageWriter.write(image, to: dir.appendingPathComponent("e.bmp"), overwrite: false)
        } throws: { ($0 as? LapseError)?.code == .usage }
        #expect { try ImageWriter.encode(image, as: .jpeg(quality: 0)) } throws: { ($0 as? LapseError)?.code == .usage }
        #expect {
            try ImageWriter.write(image, to: URL(fileURLWithPath: "/nonexistent-dir/x.png"), overwrite: false)
        } throws: {
            ($0 as? LapseError)?.code == .output
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).allSatisfy { !$0.contains(".partial") })
        #expect(
            ImageFileFormat.forFile(URL(fileURLWithPath: "a/B.JPEG"))
                == .jpeg(quality: ImageFileFormat.defaultJPEGQuality))
        #expect(ImageFileFormat.forFile(URL(fileURLWithPath: "x.webp")) == nil)
    }
}
