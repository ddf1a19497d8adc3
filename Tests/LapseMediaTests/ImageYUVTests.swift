// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia
import TestSupport
import Testing

/// A still decoded straight to the encoder's Y′CbCr (one swscale pass and the BT.601 → BT.709 matrix) is the
/// picture the RGBA path makes of it: SSIM ≥ 0.995 and every channel's mean within 1 code value, for a real
/// photo (4:2:0, BT.601 full range) and its 4:2:2 and 4:4:4 versions, scaled down and up; RGB sources, alpha and
/// EXIF orientations are left to the RGBA path. At its own size (0 × 0 below: a JPEG tile's case) a 4:2:0 picture
/// is converted in one pass without swscale; the others at their size through it.
@Suite struct ImageYUVTests {
    static let photo = TestData.path("images/opensfm_lund/images/01.jpg")

    @Test(arguments: ["yuvj420p", "yuvj422p", "yuvj444p"], [(640, 480), (1024, 768), (1600, 1200), (0, 0)])
    func yuvStillIsTheRGBAStill(format: String, size: (Int, Int)) throws {
        let dir = TestData.scratchDirectory("image-yuv")
        defer { try? FileManager.default.removeItem(at: dir) }
        var path = Self.photo
        if format != "yuvj420p" {
            path = dir.appendingPathComponent("photo-\(format).jpg").path
            let r = try Shell.run(
                "ffmpeg", ["-v", "error", "-y", "-i", Self.photo, "-pix_fmt", format, "-q:v", "2", path])
            try #require(r.status == 0)
        }
        let image = try DecodedImage(url: URL(fileURLWithPath: path))
        let (w, h) = size == (0, 0) ? (image.displayWidth, image.displayHeight) : size
        let yuv = try #require(try image.yuv(width: w, height: h))
        let a = try yuv.rgba()
        let b = try image.pixels(width: w, height: h)
        let ssim = ImageMetrics.ssim(a, b)
        let d = ImageMetrics.meanColour(a) - ImageMetrics.meanColour(b)
        #expect(ssim >= 0.995, "SSIM \(ssim)")
        #expect(abs(d.x) <= 1 && abs(d.y) <= 1 && abs(d.z) <= 1, "\(d)")
    }

    @Test func rgbAlphaAndTurnedImagesTakeTheRGBAPath() throws {
        for name in ["images/generated/smptehdbars_1280x720.png", "images/exif-orientation-examples/Landscape_6.jpg"] {
            #expect(
                try DecodedImage(url: URL(fileURLWithPath: TestData.path(name))).yuv(width: 64, height: 64) == nil,
                "\(name)")
        }
    }
}
