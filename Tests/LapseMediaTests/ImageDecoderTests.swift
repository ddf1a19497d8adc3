// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import TestSupport
import Testing

@testable import LapseMedia

@Suite struct ImageDecoderTests {
    /// Every EXIF orientation comes out upright: SSIM against Landscape_1 at the same size.
    @Test(arguments: 0...8)
    func exifOrientationIsApplied(orientation: Int) throws {
        let reference = try DecodedImage(
            url: URL(fileURLWithPath: TestData.path("images/exif-orientation-examples/Landscape_1.jpg")))
        let image = try DecodedImage(
            url: URL(fileURLWithPath: TestData.path("images/exif-orientation-examples/Landscape_\(orientation).jpg")))
        #expect(image.displayWidth == 1800)
        #expect(image.displayHeight == 1200)
        let a = try reference.pixels(width: 360, height: 240)
        let b = try image.pixels(width: 360, height: 240)
        #expect(ImageMetrics.ssim(a, b) >= 0.9)
    }

    /// A wrong turn would be caught: Landscape_6 without its orientation is far from upright.
    @Test func ignoringOrientationWouldFail() throws {
        let reference = try DecodedImage(
            url: URL(fileURLWithPath: TestData.path("images/exif-orientation-examples/Landscape_1.jpg"))
        )
        .pixels(width: 240, height: 240)
        let image = try DecodedImage(
            url: URL(fileURLWithPath: TestData.path("images/exif-orientation-examples/Landscape_3.jpg")))
        #expect(image.orientation == .down)
        let upsideDown = try image.pixels(width: 240, height: 240).applying(.down) // turned twice = as stored
        #expect(ImageMetrics.ssim(reference, upsideDown) < 0.6)
    }

    static let decodable: [String] = {
        let fm = FileManager.default
        var files: [String] = []
        for folder in ["images/pngsuite", "images/pillow", "images/generated"] {
            let names = (try? fm.contentsOfDirectory(atPath: TestData.path(folder))) ?? []
            files += names.filter {
                ["png", "jpg", "webp"].contains(($0 as NSString).pathExtension) && $0 != "iss634.webp"
            }
            .map { "\(folder)/\($0)" }
        }
        return files.sorted()
    }()

    /// Every PNG suite / Pillow image decodes to the same pixels as the ffmpeg CLI's own decoder gives.
    @Test(arguments: decodable)
    func decodesLikeFFmpeg(file: String) throws {
        let path = TestData.path(file)
        let image = try DecodedImage(url: URL(fileURLWithPath: path))
        let ours = try image.pixels(width: image.storedWidth, height: image.storedHeight)
        let oriented =
            image.orientation == .up ? ours : try image.pixels(width: image.storedWidth, height: image.storedHeight)
        let reference = try #require(FFmpegReference.frames(path).first)
        if image.orientation == .up {
            #expect(reference.width == ours.width && reference.height == ours.height)
            #expect(ImageMetrics.psnr(ours, reference) >= 35, "\(file)")
            // Alpha is kept, not flattened.
            var alphaDiff = 0
            for i in stride(from: 3, to: ours.bytes.count, by: 4) {
                alphaDiff = max(alphaDiff, abs(Int(ours.bytes[i]) - Int(reference.bytes[i])))
            }
            #expect(alphaDiff <= 1, "\(file)")
        } else {
            #expect(oriented.width == image.displayWidth)
        }
    }

    /// A text file is not an image: FFmpeg's tty demuxer and ANSI decoder would render it as a terminal would
    /// (`lapse video notes.txt` made a video of white-on-black text, `lapse view` a black panorama).
    @Test func textIsNotAnImage() {
        let text = TestData.path("pano360/trekview_360/SOURCES.txt")
        #expect { try DecodedImage(url: URL(fileURLWithPath: text)) } throws: {
            "\($0)".hasSuffix("SOURCES.txt: text (tty), not an image")
        }
    }

    /// Animated WebP (FFmpeg 5.1 has no decoder for it) is named as such, not as a damaged file.
    @Test func animatedWebPIsNamed() throws {
        let path = TestData.path("images/pillow/iss634.webp")
        #expect(DecodedImage.isAnimatedWebP(path: path, data: nil))
        #expect(!DecodedImage.isAnimatedWebP(path: TestData.path("images/pillow/hopper.png"), data: nil))
        #expect { _ = try DecodedImage(url: URL(fileURLWithPath: path)) } throws: { error in
            (error as? LapseError)?.reason.contains("animated WebP") == true
        }
    }

    @Test func cmykJPEGMatchesItsRGBTwin() throws {
        let cmyk = try DecodedImage(url: URL(fileURLWithPath: TestData.path("images/pillow/pil_sample_cmyk.jpg")))
            .pixels()
        let rgb = try DecodedImage(url: URL(fileURLWithPath: TestData.path("images/pillow/pil_sample_rgb.jpg")))
            .pixels()
        // FFmpeg's own CLI gives 32.8 dB for this pair (the files were encoded separately); swapped or
        // uninverted CMYK channels give under 10 dB.
        #expect(ImageMetrics.psnr(cmyk, rgb) >= 30)
    }

    @Test func paletteTransparencyBecomesAlpha() throws {
        // tbbn3p08: palette with tRNS; its corners are fully transparent.
        let p = try DecodedImage(url: URL(fileURLWithPath: TestData.path("images/pngsuite/tbbn3p08.png"))).pixels()
        #expect(p[0, 0].a == 0)
        let alphas = Set(stride(from: 3, to: p.bytes.count, by: 4).map { p.bytes[$0] })
        #expect(alphas.contains(255))
    }

    @Test func decodesFromMemory() throws {
        let path = TestData.path("images/pillow/hopper.jpg")
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let fromMemory = try DecodedImage(data: data, name: "hopper").pixels()
        let fromFile = try DecodedImage(url: URL(fileURLWithPath: path)).pixels()
        #expect(fromMemory == fromFile)
        // Orientation is read from in-memory JPEGs too.
        let rotatedData = try [UInt8](
            Data(contentsOf: URL(fileURLWithPath: TestData.path("images/pillow/hopper_orientation_6.jpg"))))
        #expect(try DecodedImage(data: rotatedData, name: "x").orientation == .right)
    }

    @Test(arguments: [
        ("missing.jpg", "no such file"),
        ("text.jpg", "not an image"),
        ("truncated.jpg", "corrupt or truncated"),
        ("empty.png", "not an image")
    ])
    func badImagesGiveClearErrors(name: String, reason: String) throws {
        let dir = TestData.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let jpeg = try Data(
            contentsOf: URL(fileURLWithPath: TestData.path("images/exif-orientation-examples/Landscape_1.jpg")))
        try Data("hello, not a picture\n".utf8).write(to: dir.appendingPathComponent("text.jpg"))
        try jpeg.prefix(jpeg.count / 3).write(to: dir.appendingPathComponent("truncated.jpg"))
        try Data().write(to: dir.appendingPathComponent("empty.png"))
        let path = dir.appendingPathComponent(name).path
        do {
            let image = try DecodedImage(url: URL(fileURLWithPath: path))
            _ = try image.pixels()
            Issue.record("\(name) decoded without an error")
        } catch let error as LapseError {
            #expect(error.subject == path)
            #expect(error.reason.contains(reason), "\(error)")
            #expect(!error.description.contains("\n"))
        }
    }

    @Test(arguments: ImageOrientation.allCases)
    func orientationRoundTrip(orientation: ImageOrientation) {
        // A 3×2 image with distinct pixels: turning it gives the documented layout.
        var p = PixelBuffer(width: 3, height: 2)
        for y in 0..<2 { for x in 0..<3 { p[x, y] = RGBA(UInt8(x), UInt8(y), 0) } }
        let t = p.applying(orientation)
        #expect(t.width == (orientation.swapsAxes ? 2 : 3))
        // The stored top-left pixel (0,0) lands in the display corner the EXIF spec gives.
        let corner: (Int, Int)
        switch orientation {
        case .up: corner = (0, 0)
        case .upMirrored: corner = (2, 0)
        case .down: corner = (2, 1)
        case .downMirrored: corner = (0, 1)
        case .leftMirrored: corner = (0, 0)
        case .right: corner = (1, 0)
        case .rightMirrored: corner = (1, 2)
        case .left: corner = (0, 2)
        }
        #expect(t[corner.0, corner.1] == RGBA(0, 0, 0))
    }
}
