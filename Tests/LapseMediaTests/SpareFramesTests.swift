// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

@testable import LapseMedia

/// Pictures given back are kept up to the limit, the oldest going first, and handed out by size.
@Suite struct SpareFramesTests {
    @Test func sparesAreKeptToTheLimitAndTakenBySize() {
        let spares = SpareFrames(limit: 2)
        var first = YUVFrame(width: 4, height: 2)
        first.y[0] = 1
        var second = YUVFrame(width: 4, height: 2)
        second.y[0] = 2
        spares.give(first)
        spares.give(second)
        spares.give(YUVFrame(width: 8, height: 4)) // the first goes
        #expect(spares.count == 2)
        #expect(spares.take(width: 2, height: 2) == nil)
        #expect(spares.take(width: 4, height: 2)?.y[0] == 2)
        #expect(spares.take(width: 4, height: 2) == nil)
        #expect(spares.take(width: 8, height: 4)?.width == 8)
        #expect(spares.count == 0)
        spares.give(YUVFrame(width: 4, height: 2))
        spares.removeAll()
        #expect(spares.count == 0)
        let none = SpareFrames(limit: 0)
        none.give(YUVFrame(width: 4, height: 2))
        #expect(none.count == 0)
    }

    /// A picture whose planes were resized is not handed out for its nominal size.
    @Test func aPictureWithPlanesOfOtherSizesIsNotTaken() {
        let spares = SpareFrames(limit: 2)
        var odd = YUVFrame(width: 4, height: 2)
        odd.cb.append(0)
        spares.give(odd)
        #expect(spares.take(width: 4, height: 2) == nil)
    }

    /// A real 4:2:0 JPEG converted at its own size (the one-pass conversion, no swscale) into the planes of a
    /// picture given back: the same memory, the same bytes as a conversion into new memory; and a GoPro MAX
    /// photo (4:2:2, scaled by swscale) into one of its size.
    @Test func aConversionWritesEveryByteOfTheSpare() throws {
        func address(_ frame: YUVFrame) -> UInt { frame.y.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } }
        for path in ["images/exif-orientation-examples/Landscape_1.jpg", "pano360/geovisio_gopromax_walk/2.jpg"] {
            let image = try DecodedImage(url: URL(fileURLWithPath: TestData.path(path)))
            let (w, h) = (image.displayWidth, image.displayHeight)
            let fresh = try #require(try image.yuv(width: w, height: h))
            // A spare whose every byte differs from what the picture holds there (made in a scope of its own,
            // which ends before the conversion: nothing else holds its planes then).
            let spares = SpareFrames(limit: 1)
            let before: UInt = {
                var spare = fresh
                spare.y = spare.y.map { $0 ^ 0x55 }
                spare.cb = spare.cb.map { $0 ^ 0x55 }
                spare.cr = spare.cr.map { $0 ^ 0x55 }
                let at = address(spare)
                spares.give(spare)
                return at
            }()
            let reused = try #require(try image.yuv(width: w, height: h, spares: spares))
            // Compared as a Bool: a failed comparison of two large pictures would be diffed element by element.
            let same = reused == fresh
            #expect(same, "\(path)")
            #expect(address(reused) == before, "\(path)")
        }
    }
}
