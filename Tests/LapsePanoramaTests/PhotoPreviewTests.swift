// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia
import TestSupport
import Testing

@testable import LapsePanorama

/// The motion analysis's picture of a photo from the camera's reduced copy of it (Multi-Picture Format), where the
/// copy is large enough: the same picture as the photo's reduced decode, from a twentieth of the bytes; the photo
/// itself where the copy is too small, broken, or missing.
@Suite struct PhotoPreviewTests {
    static let walk = TestData.path("pano360/geovisio_gopromax_walk")
    let dir = TestData.scratchDirectory("photo-preview")

    /// The real GoPro MAX photos: each one's analysis picture is its 1440 × 720 copy, decoded whole (½ of it
    /// would be narrower than 1024) and scaled to 1024 × 512 as it is turned into RGBA, and shows what the photo
    /// decoded at ¼ and scaled alike shows (PSNR 33.9–40.4 dB, over 28 asked: the copy is the camera's own, more
    /// compressed, JPEG of the same picture; against the next photo, 1–3 m on, it is under 20).
    @Test func realGoProPhotosAreAnalysedFromTheirCopy() async throws {
        let source = try LocalPhotoSource(directory: URL(fileURLWithPath: Self.walk))
        #expect(source.panoramas.count == 5 && source.previews.count == 5)
        var previous: PixelBuffer?
        for pano in source.panoramas {
            let file = try #require(pano.file)
            let image = try await source.analysisImage(for: pano, width: 1024)
            let pixels = image.pixels
            let bytes = [UInt8](try Data(contentsOf: file))
            let range = try #require(source.previews[pano.id])
            let copy = try DecodedImage(data: Array(bytes[range]), name: pano.id)
            #expect(copy.displayWidth == 1440 && copy.displayHeight == 720)
            #expect(pixels.width == 1024 && pixels.height == 512)
            // Compared first: on a mismatch, #expect(a == b) of two arrays works out their difference (megabytes).
            let same = pixels.bytes == (try copy.pixels(width: 1024, height: 512, accurate: false)).bytes
            #expect(same)
            let photo = try DecodedImage(url: file, reduction: 2).pixels(width: 1024, height: 512, accurate: false)
            let psnr = ImageMetrics.psnr(pixels, photo)
            print("\(pano.id): copy against the photo at 1/4, PSNR \(String(format: "%.1f", psnr)) dB")
            #expect(psnr > 28)
            if let previous { #expect(ImageMetrics.psnr(previous, photo) < 20) }
            previous = pixels
        }
    }

    /// A photo's picture given back by the render is written over by the next photo's: the five real GoPro MAX
    /// photos, whole (5760 × 2880), each converted into the planes of the one before (the same memory) are byte for
    /// byte what a conversion into new memory gives.
    @Test func picturesGivenBackAreWrittenOver() async throws {
        let url = URL(fileURLWithPath: Self.walk)
        let fresh = try LocalPhotoSource(directory: url)
        let recycling = try LocalPhotoSource(directory: url)
        func address(_ frame: YUVFrame) -> UInt { frame.y.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } }
        var before: UInt?
        var (same, inPlace) = (true, 0)
        for pano in recycling.panoramas {
            let expected = try #require(try await fresh.yuvImage(for: pano, resolution: .full, region: nil)?.yuv)
            let picture = try #require(try await recycling.yuvImage(for: pano, resolution: .full, region: nil)?.yuv)
            #expect(picture.width == 5760 && picture.height == 2880)
            // Compared as a Bool: a failed comparison of two 25 MB pictures would be diffed element by element.
            let equal = picture == expected
            same = same && equal
            if before == address(picture) { inPlace += 1 }
            before = address(picture)
            recycling.recycle(picture)
        }
        #expect(same)
        #expect(inPlace == recycling.panoramas.count - 1)
    }

    /// Photos without a copy: a real GoPro MAX photo cut short before its copy (the index then points past the
    /// file's end: no copy serves), decoded at ¼ (1440 × 720), and a 4100 × 2050 photo, whose ¼ decode is
    /// 1025 × 513 (JPEG's reduced sizes round up): each scaled to 1024 × 512 as it is turned into RGBA, the same
    /// pixels as the photo decoded at ¼ and converted so, and near (PSNR over 40 dB) what the two passes before
    /// gave (RGBA at the decoded size, then scaled RGBA to RGBA).
    @Test func photosWithoutACopyAreScaledAsTheyAreConverted() async throws {
        let folder = dir.appendingPathComponent("no-copy")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let real = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.walk + "/1.jpg")))
        let copy = try #require(MultiPicture.largeThumbnail(in: real))
        try Data(real[..<copy.lowerBound]).write(to: folder.appendingPathComponent("cut.jpg"))
        let photo = try DecodedImage(data: real, name: "1.jpg", reduction: 1).pixels(width: 4100, height: 2050)
        try GeotaggedPhoto.write(
            photo, to: folder.appendingPathComponent("odd.jpg").path, latitude: 52, longitude: 6.0001,
            dateTime: "2026:12:07 10:00:01", spherical: true)
        let source = try LocalPhotoSource(directory: folder)
        #expect(source.panoramas.count == 2)
        for pano in source.panoramas {
            let pixels = try await source.analysisImage(for: pano, width: 1024).pixels
            let decoded = try DecodedImage(url: try #require(pano.file), reduction: 2)
            #expect(decoded.displayWidth == (pano.id == "cut.jpg" ? 1440 : 1025))
            #expect(pixels.width == 1024 && pixels.height == 512, "\(pano.id)")
            let same = pixels.bytes == (try decoded.pixels(width: 1024, height: 512, accurate: false)).bytes
            #expect(same, "\(pano.id)")
            let twoPasses = try decoded.pixels(accurate: false).resized(width: 1024, height: 512)
            let psnr = ImageMetrics.psnr(pixels, twoPasses)
            print("\(pano.id): one pass against two, PSNR \(String(format: "%.1f", psnr)) dB")
            #expect(psnr > 40, "\(pano.id)")
        }
    }

    /// A copy narrower than the analysis picture (512 wide beside a 2048-wide photo), one whose bytes are not a
    /// JPEG, one that is not 2:1, one as wide as the photo, one cut short (the file truncated), one whose index points
    /// a byte off (not right after the photo's end of image): the photo is decoded (at ½: 1024 wide) as without a
    /// copy, and nothing fails.
    @Test func theCopyIsPassedOverWhenItCannotServe() async throws {
        let photo = try DecodedImage(
            url: URL(fileURLWithPath: Self.walk + "/1.jpg"), reduction: 1
        ).pixels(width: 2048, height: 1024)
        let folder = dir.appendingPathComponent("passed-over")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copies = [
            ("small.jpg", try photo.resized(width: 512, height: 256)),
            ("broken.jpg", try photo.resized(width: 1024, height: 512)),
            ("square.jpg", try photo.resized(width: 1024, height: 1024)),
            ("wide.jpg", photo),
            ("cut.jpg", try photo.resized(width: 1024, height: 512)),
            ("off.jpg", try photo.resized(width: 1024, height: 512))
        ]
        for (k, (name, copy)) in copies.enumerated() {
            try GeotaggedPhoto.write(
                photo, to: folder.appendingPathComponent(name).path, latitude: 52, longitude: 6 + 0.0001 * Double(k),
                dateTime: "2026:12:07 10:00:0\(k)", spherical: true, preview: copy)
        }
        // The broken one's copy: its bytes overwritten past the JPEG's first segments.
        let broken = folder.appendingPathComponent("broken.jpg")
        var bytes = [UInt8](try Data(contentsOf: broken))
        let range = try #require(MultiPicture.largeThumbnail(in: bytes))
        for i in (range.lowerBound + 2)..<range.upperBound { bytes[i] = 0x5A }
        try Data(bytes).write(to: broken)

        // The cut one: its last kilobyte gone. The one a byte off: its index's offset one more (in the big-endian
        // MP entry the writer lays out: the second image's offset, last byte).
        let cut = folder.appendingPathComponent("cut.jpg")
        try Data(try Data(contentsOf: cut).dropLast(1000)).write(to: cut)
        let off = folder.appendingPathComponent("off.jpg")
        var offBytes = [UInt8](try Data(contentsOf: off))
        let offRange = try #require(MultiPicture.largeThumbnail(in: offBytes))
        let mark = try #require(GeotaggedPhoto.multiPictureMark(in: offBytes))
        let entryOffset = mark + 8 + 2 + 3 * 12 + 4 + 16 + 8 + 3
        offBytes[entryOffset] &+= 1
        #expect(MultiPicture.largeThumbnail(in: offBytes) == (offRange.lowerBound + 1)..<(offRange.upperBound + 1))
        try Data(offBytes).write(to: off)

        let source = try LocalPhotoSource(directory: folder)
        #expect(source.previews.count == copies.count)
        for pano in source.panoramas {
            let image = try await source.analysisImage(for: pano, width: 1024)
            let pixels = image.pixels
            let whole = try DecodedImage(url: try #require(pano.file), reduction: 1).pixels(accurate: false)
            #expect(pixels.width == 1024 && pixels.height == 512, "\(pano.id)")
            let same = pixels.bytes == whole.bytes
            #expect(same, "\(pano.id)")
        }
    }
}
