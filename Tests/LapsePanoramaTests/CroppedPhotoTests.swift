// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseMedia
import TestSupport
import Testing

@testable import LapsePanorama

/// A 360° photo that is not the whole sphere (its nadir and zenith cut off) is placed on its sphere by its XMP
/// GPano cropped-area tags, as Panoramax pictures are (issue #40, item 3): built from the real GoPro MAX photo
/// `pano360/trekview_gpano_pose/GSAQ3296.JPG` (2000 × 1000) with rows 100…849 kept.
@Suite struct CroppedPhotoTests {
    let dir = TestData.scratchDirectory("cropped-photo")

    /// Rows `top..<top+count` of `p`.
    func rows(_ p: PixelBuffer, _ top: Int, _ count: Int) -> PixelBuffer {
        var out = PixelBuffer(width: p.width, height: count)
        out.bytes = Array(p.bytes[(top * p.width * 4)..<((top + count) * p.width * 4)])
        return out
    }

    @Test func aCroppedPhotoIsPlacedInItsFullFrame() async throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        let whole = try DecodedImage(
            url: URL(fileURLWithPath: TestData.path("pano360/trekview_gpano_pose/GSAQ3296.JPG"))
        ).pixels()
        #expect(whole.width == 2000 && whole.height == 1000)
        let kept = rows(whole, 100, 750)
        try GeotaggedPhoto.write(
            kept, to: dir.appendingPathComponent("cropped.jpg").path, latitude: 51.5, longitude: -0.1,
            dateTime: "2026:11:30 10:00:00",
            croppedArea: (fullWidth: 2000, fullHeight: 1000, left: 0, top: 100, width: 2000, height: 750))
        // The same picture without the tags cannot be placed: skipped, saying why.
        try GeotaggedPhoto.write(
            kept, to: dir.appendingPathComponent("untagged.jpg").path, latitude: 51.5, longitude: -0.1,
            dateTime: "2026:11:30 10:00:01")

        let source = try LocalPhotoSource(directory: dir)
        #expect(source.panoramas.map(\.id) == ["cropped.jpg"])
        #expect(
            source.skipped.map(\.reason) == [
                "not equirectangular: 2000×750 is not 2:1 and no GPano tags place it on its sphere"
            ])
        let pano = try #require(source.panoramas.first)
        #expect(pano.width == 2000 && pano.height == 1000 && pano.crop?.top == 100 && pano.crop?.height == 750)

        // At half size: the picture in rows 50…424 of a 1000 × 500 frame, the rest black; where it lies it is the
        // whole photo scaled the same way (≥ 30 dB), and its Y′CbCr path is the RGBA one (placed).
        let image = try await source.image(for: pano, resolution: .atLeast(width: 1000))
        #expect(image.pixels.width == 1000 && image.pixels.height == 500)
        let reference = try whole.resized(width: 1000, height: 500)
        let psnr = ImageMetrics.psnr(rows(image.pixels, 52, 370), rows(reference, 52, 370))
        #expect(psnr >= 30, "\(psnr) dB")
        for y in [0, 49, 426, 499] {
            let row = rows(image.pixels, y, 1)
            #expect(stride(from: 0, to: row.bytes.count, by: 4).allSatisfy { row.bytes[$0] < 8 }, "row \(y)")
        }
        #expect(try await source.yuvImage(for: pano, resolution: .atLeast(width: 1000), region: nil) == nil)
        // The analysis's picture is the frame too, at its width.
        let small = try await source.analysisImage(for: pano, width: 1024)
        #expect(small.pixels.width == 1024 && small.pixels.height == 512)
        let smallReference = try whole.resized(width: 1024, height: 512)
        #expect(ImageMetrics.psnr(rows(small.pixels, 60, 370), rows(smallReference, 60, 370)) >= 28)
    }
}
