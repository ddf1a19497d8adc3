// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import TestSupport
import Testing

@testable import LapseMedia

/// Sizes read from headers, the decoded-pixel limit, and large JPEGs decoded at the size they are shown at.
@Suite struct ImageLimitsTests {
    static let scratch = TestData.scratchDirectory("lapse-image-limits")

    /// The header's size is the decoded size for every shared PNG, JPEG and WebP (lossy, lossless, extended) and
    /// for a GIF, a BMP and TIFFs of both byte orders made from one of them; from a file and from memory alike.
    @Test(arguments: ImageDecoderTests.decodable + ["gif", "bmp", "tiff"])
    func headerSizeIsTheDecodedSize(file: String) throws {
        let path =
            file.count <= 4
            ? try GeneratedMedia.image(
                "testsrc2=s=321x123", to: Self.scratch.appendingPathComponent("made.\(file)").path)
            : TestData.path(file)

        let header = try #require(ImageHeader.read(path: path), "\(file)")
        #expect(ImageHeader.read(data: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))) == header)
        let (w, h) = try FFmpegReference.dimensions(path)
        #expect(header.width == w && header.height == h, "\(file): \(header.width)x\(header.height), decoded \(w)x\(h)")
        #expect(header.reducible == (path.hasSuffix(".jpg")))
    }

    /// A big-endian TIFF's first IFD (ffmpeg writes only little-endian ones): width a SHORT, length a LONG.
    @Test func bigEndianTIFF() {
        let ifd: [UInt8] = [
            0, 2, 1, 0, 0, 3, 0, 0, 0, 1, 0x01, 0x23, 0, 0, 1, 1, 0, 4, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0
        ]
        let file: [UInt8] = [0x4D, 0x4D, 0, 0x2A, 0, 0, 0, 8] + ifd + [UInt8](repeating: 0, count: 16)
        #expect(ImageHeader.read(data: file) == ImageHeader(width: 0x123, height: 0x10000, reducible: false))
    }

    /// An animated WebP (which FFmpeg 5.1 does not decode) has its canvas size in VP8X.
    @Test func animatedWebPCanvas() throws {
        #expect(
            ImageHeader.read(path: TestData.path("images/pillow/iss634.webp"))
                == ImageHeader(width: 245, height: 245, reducible: false))
    }

    /// The crafted files say what they should (the PNG's chunk CRCs included: CRC-32 of "IEND" is AE426082).
    @Test func craftedHeaders() throws {
        #expect(CraftedImages.crc32(Array("IEND".utf8)) == 0xAE42_6082)
        #expect(
            ImageHeader.read(data: CraftedImages.png(width: 30000, height: 20000))
                == ImageHeader(width: 30000, height: 20000, reducible: false))
        let hopper = [UInt8](try Data(contentsOf: URL(fileURLWithPath: TestData.path("images/pillow/hopper.jpg"))))
        let big = try #require(CraftedImages.jpeg(hopper, width: 60000, height: 50000))
        #expect(ImageHeader.read(data: big) == ImageHeader(width: 60000, height: 50000, reducible: true))
    }

    /// An image of more pixels than the limit is refused from its header, naming the image, its size and the limit.
    @Test func tooManyPixelsAreRefusedNamingTheImage() throws {
        let png = Self.scratch.appendingPathComponent("huge.png").path
        try Data(CraftedImages.png(width: 30000, height: 20000)).write(to: URL(fileURLWithPath: png))
        let error = try #require(throws: LapseError.self) { try DecodedImage(url: URL(fileURLWithPath: png)) }
        #expect(error.code == .invalidInput && error.subject == png)
        #expect(
            error.reason
                == "30000x20000 is 600.0 megapixels, more than the limit of 134.2 megapixels for a decoded image")
        // From memory (a downloaded tile or picture) too.
        let tile = try #require(throws: LapseError.self) {
            try DecodedImage(data: CraftedImages.png(width: 30000, height: 20000), name: "tile 3/1/2")
        }
        #expect(tile.subject == "tile 3/1/2" && tile.reason.contains("more than the limit"))
        // A real image and a lower limit.
        let hopper = TestData.path("images/pillow/hopper.png")
        let low = try #require(throws: LapseError.self) {
            try DecodedImage(url: URL(fileURLWithPath: hopper), pixelLimit: 10_000)
        }
        #expect(low.reason == "128x128 is 16384 pixels, more than the limit of 10000 pixels for a decoded image")
        #expect(try DecodedImage(url: URL(fileURLWithPath: hopper), pixelLimit: 16384).storedWidth == 128)
    }

    /// The limit is on the pixels decoded: a JPEG over it whole is decoded at a quarter of its size when that is
    /// all that is shown, and refused when it is shown larger.
    @Test func theLimitCountsTheReducedDecode() throws {
        let photo = TestData.path("pano360/trekview_360/GSAG2002.JPG") // 5760x2880
        let limit = 2_000_000
        #expect(throws: LapseError.self) { try DecodedImage(url: URL(fileURLWithPath: photo), pixelLimit: limit) }
        let quarter = try DecodedImage(url: URL(fileURLWithPath: photo), pixelLimit: limit) { _, _ in (1440, 720) }
        #expect(quarter.storedWidth == 1440 && quarter.storedHeight == 720)
        let refused = try #require(throws: LapseError.self) {
            try DecodedImage(url: URL(fileURLWithPath: photo), pixelLimit: limit) { _, _ in (2000, 1000) }
        }
        #expect(
            refused.reason
                == "5760x2880 is 4.1 megapixels at 1/2 size, more than the limit of 2.0 megapixels for a decoded image")
    }

    /// A format whose header is not read (Sun raster) meets the decoder's check of twice the limit before its
    /// picture is allocated, and the exact limit after.
    @Test func formatsWithoutAHeaderReaderAreCheckedToo() throws {
        let raster = try GeneratedMedia.image(
            "testsrc2=s=320x240", to: Self.scratch.appendingPathComponent("made.sun").path)
        #expect(ImageHeader.read(path: raster) == nil)
        let before = try #require(throws: LapseError.self) {
            try DecodedImage(url: URL(fileURLWithPath: raster), pixelLimit: 20_000)
        }
        #expect(before.subject == raster && before.reason.contains("or more than 40000 pixels"), "\(before)")
        let after = try #require(throws: LapseError.self) {
            try DecodedImage(url: URL(fileURLWithPath: raster), pixelLimit: 70_000)
        }
        #expect(after.reason == "320x240 is 76800 pixels, more than the limit of 70000 pixels for a decoded image")
        #expect(try DecodedImage(url: URL(fileURLWithPath: raster), pixelLimit: 76_800).storedWidth == 320)
    }

    /// A JPEG much larger than it is shown is decoded at ½, ¼ or ⅛ size — the smallest still as large as shown —
    /// and looks as the full decode scaled down does; a PNG is decoded whole.
    @Test(arguments: [(720, 360, 720), (1000, 500, 1440), (1440, 720, 1440), (3000, 1500, 5760)])
    func largeJPEGsAreDecodedAtTheSizeShown(width: Int, height: Int, decoded: Int) throws {
        let photo = TestData.path("pano360/trekview_360/GSAG2002.JPG")
        var asked: (Int, Int)?
        let image = try DecodedImage(url: URL(fileURLWithPath: photo)) { w, h in
            asked = (w, h)
            return (width, height)
        }
        #expect(asked.map { $0 == (5760, 2880) } == true)
        #expect(image.storedWidth == decoded && image.storedHeight == decoded / 2)
        let full = try DecodedImage(url: URL(fileURLWithPath: photo)).pixels(width: width, height: height)
        let reduced = try image.pixels(width: width, height: height)
        let ssim = ImageMetrics.ssim(full, reduced)
        #expect(ssim >= 0.97, "SSIM \(ssim)")
        let colour = ImageMetrics.meanColour(full) - ImageMetrics.meanColour(reduced)
        #expect(max(abs(colour.x), abs(colour.y), abs(colour.z)) <= 1, "\(colour)")
        let png = try DecodedImage(
            url: URL(fileURLWithPath: TestData.path("images/generated/smptehdbars_1280x720.png"))
        ) { _, _ in (160, 90)
        }
        #expect(png.storedWidth == 1280)
    }

    /// Sizes whose product overflows are refused like any other too large (they trapped), as are those of a TIFF;
    /// no limit at all (Int.max) refuses nothing.
    @Test func overflowingSizesAreRefused() throws {
        let png = Self.scratch.appendingPathComponent("overflow.png").path
        try Data(CraftedImages.png(width: 0xFFFF_FFFF, height: 0xFFFF_FFFF)).write(to: URL(fileURLWithPath: png))
        let error = try #require(throws: LapseError.self) { try DecodedImage(url: URL(fileURLWithPath: png)) }
        #expect(
            error.reason
                == """
                4294967295x4294967295 is more pixels than can be counted, more than the limit of 134.2 megapixels \
                for a decoded image
                """
        )
        #expect(
            try DecodedImage(url: URL(fileURLWithPath: TestData.path("images/pillow/hopper.png")), pixelLimit: .max)
                .storedWidth == 128)
    }

    /// A lossless JPEG (SOF3), which libavcodec cannot decode reduced, is decoded whole when shown smaller.
    @Test func losslessJPEGsAreDecodedWhole() throws {
        let path = Self.scratch.appendingPathComponent("lossless.jpg").path
        let made = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=640x480", "-frames:v", "1",
                "-c:v", "ljpeg", "-pix_fmt", "bgr0", path
            ])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(ImageHeader.read(path: path)?.reducible == false)
        let image = try DecodedImage(url: URL(fileURLWithPath: path)) { _, _ in (80, 60) }
        #expect(image.storedWidth == 640)
    }

    /// A reduced decode of an odd-sized JPEG (rounded up to whole pixels) is fitted by the full size: the frame is
    /// filled to its edges, as from the full decode (it had a black last column).
    @Test func oddSizedReducedDecodesFitAsTheFullOne() throws {
        let path = Self.scratch.appendingPathComponent("odd.jpg").path
        let made = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i",
                "color=c=white:s=4002x2252,crop=4001:2251:0:0,format=yuvj444p",
                "-frames:v", "1", "-q:v", "2", path
            ])
        #expect(made.status == 0)
        let fitter = FrameFitter(width: 1920, height: 1080, mode: .contain, background: RGBA(0, 0, 0))
        let image = try DecodedImage(url: URL(fileURLWithPath: path)) {
            fitter.scaledSize(displayWidth: $0, displayHeight: $1)
        }
        #expect(
            image.storedWidth == 2001 && image.fullDisplayWidth == 4001 && image.fullDisplayHeight == 2251,
            "\(image.storedWidth) \(image.fullDisplayWidth) \(image.fullDisplayHeight)")
        let frame = try fitter.frame(for: image)
        for y in [0, 540, 1079] {
            for x in [0, 1919] {
                let i = (y * 1920 + x) * 4
                #expect(frame.bytes[i] >= 250, "(\(x), \(y)): \(frame.bytes[i])")
            }
        }
        #expect(try fitter.yuvFrame(for: image) != nil) // straight to Y′CbCr, as the full decode goes
    }

    @Test func reductionChoice() {
        #expect(DecodedImage.reduction(width: 5760, height: 2880, atLeast: 720, 360) == 3)
        #expect(DecodedImage.reduction(width: 5760, height: 2880, atLeast: 721, 360) == 2)
        #expect(DecodedImage.reduction(width: 5761, height: 2881, atLeast: 721, 361) == 3) // ⌈5761/8⌉ = 721
        #expect(DecodedImage.reduction(width: 100, height: 100, atLeast: 200, 200) == 0)
    }
}
