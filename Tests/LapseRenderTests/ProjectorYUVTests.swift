// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia
@testable import LapseRender
import Testing
import TestSupport

/// The Y′CbCr render (each plane on its own grid, no RGBA round trip) against the RGBA render of the same frames
/// of the real 360° video, seen as RGBA: the same picture (SSIM ≥ 0.995) and the same colour (each channel's
/// mean within 1 code value), at even and odd output sizes, level and turned views.
@Suite struct ProjectorYUVTests {
    static let clip = TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")

    @Test(arguments: [(640, 360, 0.0, 0.0, 0.0), (641, 361, 200.0, -12.0, 4.0), (1280, 720, 95.0, 20.0, -3.0)])
    func yuvRenderIsTheRGBARender(width: Int, height: Int, heading: Double, pitch: Double, roll: Double) throws {
        let rgbaReader = try VideoFrameReader(Self.clip)
        let yuvReader = try VideoFrameReader(Self.clip)
        #expect(yuvReader.yuvFramesAvailable)
        let projector = try Projector(width: width, height: height)
        let pose = PanoramaPose(heading: 10, tilt: 2, roll: -1)
        let camera = CameraPose(heading: heading, pitch: pitch, roll: roll, fov: 90)
        for _ in 0..<3 {
            let (t0, rgba) = try #require(try rgbaReader.nextFrame())
            let (t1, yuv) = try #require(try yuvReader.nextYUVFrame())
            #expect(t0 == t1)
            let a = try projector.render(rgba, pose: pose, camera: camera)
            let b = try projector.render(yuv, pose: pose, camera: camera).rgba()
            let ssim = ImageMetrics.ssim(a, b)
            let d = ImageMetrics.meanColour(a) - ImageMetrics.meanColour(b)
            #expect(ssim >= 0.995, "SSIM \(ssim)")
            #expect(abs(d.x) <= 1 && abs(d.y) <= 1 && abs(d.z) <= 1, "mean colour differs by \(d)")
            for _ in 0..<20 { _ = try rgbaReader.skipFrame(); _ = try yuvReader.skipFrame() }
        }
    }

    /// Sources the Y′CbCr path does not take as they are: tagged BT.601, rotated, HDR, alpha, full range.
    @Test func otherSourcesGoThroughRGBA() throws {
        for name in [
            "video/iphone_rotated.mov", "video/synthetic/hdr10_pq_hevc10_320x180.mp4",
            "video/synthetic/alpha_vp9_160x120.webm",
            "video/synthetic/quadrants_320x180.mp4", "video/synthetic/odd_321x181_yuv444.mp4"
        ] {
            #expect(try !VideoFrameReader(TestData.path(name)).yuvFramesAvailable, "\(name)")
        }
    }
}
