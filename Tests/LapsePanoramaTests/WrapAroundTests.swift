// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
@testable import LapsePanorama
import Testing
import TestSupport

/// A 2:1 picture is known for a 360° one, without metadata, when its left and right edges meet
/// (``VideoPanoramaSource/wrapsAround(_:)``): every real 360° picture of the shared data does, at the size the
/// check looks at (512 × 256); the same pictures cut to 2:1 elsewhere (flat pictures of 2:1) do not.
@Suite struct WrapAroundTests {
    static let real360 = [
        "pano360/trekview_360/GSAG2002.JPG", "pano360/trekview_360/R0014760.JPG",
        "pano360/geovisio_gopromax_walk/1.jpg", "pano360/geovisio_gopromax_walk/5.jpg",
        "pano360/trekview_gpano_pose/GSAQ3296.JPG", "pano360/trekview_worldlock_bike/GS010013-worldlock_000001.jpg"
    ]

    static func columns(_ p: PixelBuffer, from x0: Int, count: Int) -> PixelBuffer {
        var out = PixelBuffer(width: count, height: p.height)
        for y in 0..<p.height {
            let src = (y * p.width + x0) * 4
            out.bytes.replaceSubrange((y * count * 4)..<((y + 1) * count * 4), with: p.bytes[src..<(src + count * 4)])
        }
        return out
    }

    @Test func real360PicturesWrapAndFlatOnesDoNot() throws {
        for name in Self.real360 {
            let p = try DecodedImage(path: TestData.path(name)).pixels(width: 512, height: 256)
            #expect(VideoPanoramaSource.wrapsAround(p), "\(name)")
            // A flat picture of 2:1: the middle half of it (90° either side of its centre), stretched.
            let half = try Self.columns(p, from: 128, count: 256).resized(width: 512, height: 256)
            #expect(!VideoPanoramaSource.wrapsAround(half), "\(name), its middle half")
        }
        let video = try VideoFrameReader(TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"))
        video.outputSize = (512, 256)
        #expect(VideoPanoramaSource.wrapsAround(try #require(try video.nextFrame()).pixels))
        #expect(
            try VideoFrameReader(TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"))
                .sphericalProjection == nil)
    }
}
