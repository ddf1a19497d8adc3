// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
import LapseRender
import TestSupport
import Testing

/// The projector against ffmpeg's `v360=input=e:output=flat` filter on real 360° images, same parameters.
@Suite("Projector vs ffmpeg v360 on real panoramas")
struct FFmpegReferenceTests {
    /// Real equirectangular inputs as 2048×1024 PNGs (the photos downscaled by the ffmpeg CLI, frames of the
    /// overpass clip extracted by it), made once per test run.
    static let inputs: [String] = {
        let dir = TestData.scratchDirectory("lapse-render-ref")
        var paths: [String] = []
        for name in ["GSAG2002.JPG", "R0014760.JPG"] {
            let out = dir.appendingPathComponent(name + ".png").path
            let r = try? Shell.run(
                "ffmpeg",
                [
                    "-v", "error", "-nostdin", "-y", "-i",
                    TestData.path("pano360/trekview_360/" + name),
                    "-vf", "scale=2048:1024", "-frames:v", "1", out
                ])
            if r?.status == 0 { paths.append(out) }
        }
        let pattern = dir.appendingPathComponent("overpass-%d.png").path
        let r = try? Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-nostdin", "-y", "-i",
                TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"),
                "-vf", "select=eq(n\\,0)+eq(n\\,50)+eq(n\\,110)", "-vsync", "passthrough", pattern
            ])
        if r?.status == 0 {
            paths += (1...3).map { dir.appendingPathComponent("overpass-\($0).png").path }
        }
        return paths
    }()

    struct Case: CustomStringConvertible, Sendable {
        var heading: Double, pitch: Double, roll: Double, fov: Double, width: Int, height: Int
        var interpolation: Interpolation = .bilinear
        var description: String {
            "\(interpolation) heading \(heading) pitch \(pitch) roll \(roll) fov \(fov) \(width)x\(height)"
        }
    }
    static let cases: [Case] = [
        Case(heading: 0, pitch: 0, roll: 0, fov: 90, width: 480, height: 270),
        Case(heading: 73, pitch: 20, roll: 0, fov: 75, width: 400, height: 300),
        Case(heading: 200, pitch: -35, roll: 15, fov: 100, width: 480, height: 270),
        Case(heading: 359, pitch: 80, roll: -30, fov: 90, width: 320, height: 320),
        Case(heading: 181, pitch: -90, roll: 0, fov: 120, width: 400, height: 300),
        Case(heading: 300, pitch: 5, roll: 0, fov: 60, width: 480, height: 270, interpolation: .bicubic),
        Case(heading: 120, pitch: -10, roll: 5, fov: 90, width: 480, height: 270, interpolation: .lanczos)
    ]

    /// ffmpeg's filter for a case.
    static func filter(_ c: Case) -> String {
        var yaw = c.heading.truncatingRemainder(dividingBy: 360)
        if yaw > 180 { yaw -= 360 }
        let interp = ["bilinear": "linear", "bicubic": "cubic", "lanczos": "lanczos"][c.interpolation.rawValue]!
        let vfov = CameraPose(heading: 0, fov: c.fov).verticalFOV(width: c.width, height: c.height)
        return "v360=input=e:output=flat:h_fov=\(c.fov):v_fov=\(vfov):yaw=\(yaw):pitch=\(c.pitch):roll=\(c.roll)"
            + ":interp=\(interp):w=\(c.width):h=\(c.height)"
    }

    /// Every input decoded by us, and ffmpeg's views of it for every case (one ffmpeg run per input).
    static let references: [(name: String, panorama: PixelBuffer, views: [PixelBuffer])] = {
        let dir = TestData.scratchDirectory("lapse-render-views")
        return inputs.enumerated().compactMap { n, path in
            guard let panorama = try? DecodedImage(url: URL(fileURLWithPath: path)).pixels() else { return nil }
            let labels = cases.indices.map { "[v\($0)]" }
            var graph = "[0:v]split=\(cases.count)" + labels.joined() + ";"
            graph += cases.enumerated().map { i, c in "[v\(i)]\(filter(c)),format=rgba[o\(i)]" }.joined(separator: ";")
            var args = ["-v", "error", "-nostdin", "-y", "-i", path, "-filter_complex", graph]
            for i in cases.indices {
                args += ["-map", "[o\(i)]", "-f", "rawvideo", dir.appendingPathComponent("\(n)-\(i).rgba").path]
            }
            guard (try? Shell.run("ffmpeg", args))?.status == 0 else { return nil }
            let views = cases.enumerated().compactMap { i, c -> PixelBuffer? in
                guard
                    let data = FileManager.default.contents(atPath: dir.appendingPathComponent("\(n)-\(i).rgba").path),
                    data.count == c.width * c.height * 4
                else { return nil }
                return PixelBuffer(width: c.width, height: c.height, bytes: [UInt8](data))
            }
            return views.count == cases.count ? (URL(fileURLWithPath: path).lastPathComponent, panorama, views) : nil
        }
    }()

    @Test("SSIM ≥ 0.98 against ffmpeg v360 with the same yaw/pitch/roll/fov", arguments: cases.indices)
    func matchesFFmpeg(index: Int) throws {
        let c = Self.cases[index]
        #expect(Self.references.count == 5, "could not prepare the reference panoramas and views")
        let projector = try Projector(width: c.width, height: c.height, interpolation: c.interpolation)
        let camera = CameraPose(heading: c.heading, pitch: c.pitch, roll: c.roll, fov: c.fov)
        for input in Self.references {
            let ours = try projector.render(input.panorama, camera: camera)
            let ssim = ImageMetrics.ssim(ours, input.views[index])
            // Bicubic and Lanczos use other kernels than ffmpeg's (Catmull-Rom vs Lagrange cubic; Lanczos-2).
            let floor = c.interpolation == .bilinear ? 0.99 : 0.98
            #expect(ssim >= floor, "SSIM \(ssim) for \(input.name), \(c)")
        }
    }
}
