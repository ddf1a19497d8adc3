// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia
import TestSupport
import Testing

@testable import LapseRender

/// The Y′CbCr render (each plane on its own grid, no RGBA round trip) against the RGBA render of the same frames
/// of the real 360° video, seen as RGBA: the same picture (SSIM ≥ 0.995) and the same colour (each channel's
/// mean within 1 code value), at even and odd output sizes, level and turned views.
@Suite struct ProjectorYUVTests {
    static let clip = TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")

    @Test(arguments: [(640, 360, 0.0, 0.0, 0.0), (641, 361, 200.0, -12.0, 4.0), (1280, 720, 95.0, 20.0, -3.0)])
    func yuvRenderIsTheRGBARender(width: Int, height: Int, heading: Double, pitch: Double, roll: Double) throws {
        let rgbaReader = try VideoFrameReader(URL(fileURLWithPath: Self.clip))
        let yuvReader = try VideoFrameReader(URL(fileURLWithPath: Self.clip))
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
            for _ in 0..<20 {
                _ = try rgbaReader.skipFrame()
                _ = try yuvReader.skipFrame()
            }
        }
    }

    /// A credit drawn into the Y′CbCr frame is the one drawn into its RGBA: the box's pixels (a one- and a two-line
    /// credit, at an even and an odd place) within SSIM 0.99 and 1 code value of mean colour, and nothing outside
    /// the box touched but the chroma of blocks the box's edge cuts.
    @Test(arguments: [(1280, 720), (641, 361)])
    func creditInYUVIsTheRGBACredit(width: Int, height: Int) throws {
        let reader = try VideoFrameReader(URL(fileURLWithPath: Self.clip))
        let (_, panorama) = try #require(try reader.nextYUVFrame())
        let projector = try Projector(width: width, height: height)
        let view = try projector.render(panorama, pose: PanoramaPose(), camera: CameraPose(heading: 180, fov: 90))
        let overlay = try CreditOverlay(corner: .bottomRight)
        for text in ["Imagery © 2026 Google", "Imagery © 2026 Google · Panoramax contributors · OpenStreetMap · more"] {
            let box = try #require(overlay.box(for: text, frameWidth: width, frameHeight: height))
            var rgba = try view.rgba()
            let before = rgba
            overlay.draw(text, into: &rgba)
            var yuv = view
            overlay.draw(text, into: &yuv)
            let drawn = try yuv.rgba()
            func crop(_ p: PixelBuffer) -> PixelBuffer {
                var out = PixelBuffer(width: box.width, height: box.height)
                for y in 0..<box.height {
                    for x in 0..<box.width * 4 {
                        out.bytes[y * box.width * 4 + x] = p.bytes[((box.y + y) * p.width + box.x) * 4 + x]
                    }
                }
                return out
            }
            let ssim = ImageMetrics.ssim(crop(rgba), crop(drawn))
            let d = ImageMetrics.meanColour(crop(rgba)) - ImageMetrics.meanColour(crop(drawn))
            #expect(ssim >= 0.99, "SSIM \(ssim)")
            #expect(abs(d.x) <= 1 && abs(d.y) <= 1 && abs(d.z) <= 1, "mean colour differs by \(d)")
            // Outside the box the frame as it was: luma exactly, chroma but for the blocks the box reaches into.
            var changed = 0
            for y in 0..<height where !(box.y..<box.y + box.height).contains(y) {
                for x in 0..<width where yuv.y[y * width + x] != view.y[y * width + x] { changed += 1 }
            }
            let cw = yuv.chromaWidth
            for cy in 0..<yuv.chromaHeight where !(box.y / 2..<(box.y + box.height + 1) / 2).contains(cy) {
                for cx in 0..<cw where yuv.cb[cy * cw + cx] != view.cb[cy * cw + cx] { changed += 1 }
            }
            #expect(changed == 0)
            #expect(ImageMetrics.ssim(crop(before), crop(drawn)) < 0.9) // the credit is there
        }
    }

    /// Sources the Y′CbCr path does not take as they are: tagged BT.601, rotated, HDR, alpha, full range.
    @Test func otherSourcesGoThroughRGBA() throws {
        for name in [
            "video/iphone_rotated.mov", "video/synthetic/hdr10_pq_hevc10_320x180.mp4",
            "video/synthetic/alpha_vp9_160x120.webm",
            "video/synthetic/quadrants_320x180.mp4", "video/synthetic/odd_321x181_yuv444.mp4"
        ] {
            #expect(try !VideoFrameReader(URL(fileURLWithPath: TestData.path(name))).yuvFramesAvailable, "\(name)")
        }
    }
}
