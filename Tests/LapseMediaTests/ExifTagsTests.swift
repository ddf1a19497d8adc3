// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
import TestSupport
import Testing

/// The one EXIF reader: orientation from the orientation examples (Landscape_N.jpg carries Orientation N), GPS
/// and date from the real 360° photos, nothing from a file without EXIF.
@Suite struct ExifTagsTests {
    @Test(arguments: 1...8)
    func orientationOfTheExamples(_ n: Int) throws {
        let tags = try #require(
            ExifTags(url: URL(fileURLWithPath: TestData.path("images/exif-orientation-examples/Landscape_\(n).jpg"))))
        #expect(tags.orientation?.rawValue == n)
    }

    @Test func gpsAndDateOfRealPhotos() throws {
        let gopro = try #require(
            ExifTags(url: URL(fileURLWithPath: TestData.path("pano360/trekview_360/GSAG2002.JPG"))))
        #expect(gopro.dateTime?.hasPrefix("2020:05:09") == true && gopro.gpsImageDirection == nil)
        #expect(gopro.latitude != nil && gopro.longitude != nil)
        let ricoh = try #require(
            ExifTags(url: URL(fileURLWithPath: TestData.path("pano360/trekview_360/R0014760.JPG"))))
        // 53.182050 N, 2.861264 W: west is negative.
        #expect(abs(try #require(ricoh.latitude) - 53.182050) < 1e-5)
        #expect(abs(try #require(ricoh.longitude) + 2.861264) < 1e-5)
    }

    @Test func noExif() {
        #expect(
            ExifTags(url: URL(fileURLWithPath: TestData.path("images/exif-orientation-examples/Landscape_0.jpg")))?
                .orientation == nil)
        #expect(ExifTags(head: Array("not an image".utf8)) == nil)
        #expect(ExifTags(url: URL(fileURLWithPath: "/nonexistent/file.jpg")) == nil)
    }
}
