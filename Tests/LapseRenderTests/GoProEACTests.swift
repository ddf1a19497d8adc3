// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
@testable import LapseRender
import Testing
import TestSupport

/// GoPro MAX's equi-angular cubemap against the real frames of `pano360/gopro_max_eac` and the equirectangular
/// frames trek-view's max2sphere (the reference converter) made of them.
@Suite struct GoProEACTests {
    static let folder = "pano360/gopro_max_eac/3k"

    /// The two streams of a frame as one atlas, the first above the second.
    static func atlas(_ frame: Int, folder: String = folder, name: String = "GS018423") throws -> PixelBuffer {
        let a = try DecodedImage(path: TestData.path("\(folder)/track0/\(name)_\(frame).jpg")).pixels()
        let b = try DecodedImage(path: TestData.path("\(folder)/track5/\(name)_\(frame).jpg")).pixels()
        var out = PixelBuffer(width: a.width, height: a.height + b.height)
        out.bytes.replaceSubrange(0..<a.bytes.count, with: a.bytes)
        out.bytes.replaceSubrange(a.bytes.count..<out.bytes.count, with: b.bytes)
        return out
    }

    /// Bilinear RGB of `p` at (x, y), pixel centres at whole numbers.
    static func sample(_ p: PixelBuffer, _ x: Double, _ y: Double) -> SIMD3<Double> {
        let x0 = min(max(Int(x.rounded(.down)), 0), p.width - 2), y0 = min(max(Int(y.rounded(.down)), 0), p.height - 2)
        let fx = min(max(x - Double(x0), 0), 1), fy = min(max(y - Double(y0), 0), 1)
        func at(_ xx: Int, _ yy: Int) -> SIMD3<Double> {
            let i = (yy * p.width + xx) * 4
            return SIMD3(Double(p.bytes[i]), Double(p.bytes[i + 1]), Double(p.bytes[i + 2]))
        }
        let top = at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx
        let bottom = at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx
        return top * (1 - fy) + bottom * fy
    }

    /// The equirectangular picture max2sphere makes (`width × width/2`; each pixel the mean of 2 × 2 samples at
    /// longitude `(i + a/2)/W · 360° − 180°` and latitude `(j' + b/2)/H · 180° − 90°`, j' counted from the bottom
    /// row), made here by ``GoProEAC/position(_:scale:)`` and bilinear sampling.
    static func equirectangular(_ atlas: PixelBuffer, _ eac: GoProEAC, width: Int) -> PixelBuffer {
        let height = width / 2
        var out = PixelBuffer(width: width, height: height)
        for j in 0..<height {
            for i in 0..<width {
                var sum = SIMD3<Double>.zero
                for b in 0..<2 {
                    for a in 0..<2 {
                        let lon = (Double(i) + Double(a) / 2) / Double(width) * 2 * .pi - .pi
                        let lat = (Double(height - 1 - j) + Double(b) / 2) / Double(height) * .pi - .pi / 2
                        let d = SIMD3(cos(lat) * sin(lon), -sin(lat), cos(lat) * cos(lon))
                        let p = eac.position(d)
                        sum += sample(atlas, p.x, p.y)
                    }
                }
                let k = (j * width + i) * 4
                for c in 0..<3 { out.bytes[k + c] = UInt8((sum[c] / 4).rounded()) }
            }
        }
        return out
    }

    /// Every frame of the 3K file, unfolded by the layout, is max2sphere's picture to within JPEG's error and the
    /// two converters' sampling (bilinear here, max2sphere's nearest pixel; the overlap bands cut at their middle
    /// here, blended there): ≥ 30 dB (34.1–34.3 dB measured).
    @Test func theLayoutUnfoldsAsTheReferenceConverterDoes() throws {
        let eac = try #require(GoProEAC.layout(streamWidth: 2272, streamHeight: 736))
        #expect(GoProEAC.layout(streamWidth: 2048, streamHeight: 1024) == nil)
        for frame in 1...4 {
            let atlas = try Self.atlas(frame)
            let reference = try DecodedImage(path: TestData.path("\(Self.folder)/STITCHED/GS018423_\(frame).jpg"))
                .pixels()
            let ours = Self.equirectangular(atlas, eac, width: reference.width)
            let psnr = ImageMetrics.psnr(ours, reference)
            #expect(psnr >= 30, "frame \(frame): \(psnr) dB")
        }
    }

    /// The faces meet: along the seams between faces, and across each side face's overlap band, neighbouring
    /// directions a tenth of a degree apart see nearly the same colour (5.6K and 3K).
    @Test func facesAndOverlapBandsMeetWithoutASeam() throws {
        for (folder, name) in [("pano360/gopro_max_eac/3k", "GS018423"), ("pano360/gopro_max_eac/5_6k", "GS018421")] {
            let atlas = try Self.atlas(1, folder: folder, name: name)
            let eac = try #require(GoProEAC.layout(streamWidth: atlas.width, streamHeight: atlas.height / 2))
            var jumps: [Double] = []
            // Longitudes of the seams (±45°, ±135°) and of the bands' middles (±90°: the side faces' cuts; 0° and
            // 180° cut nothing), along the horizon and 30° above and below.
            for lonDegrees in [-135.0, -90, -45, 45, 90, 135] {
                for latDegrees in [-30.0, 0, 30] {
                    func colour(_ lon: Double) -> SIMD3<Double> {
                        let lon = lon * .pi / 180, lat = latDegrees * .pi / 180
                        let p = eac.position(SIMD3(cos(lat) * sin(lon), -sin(lat), cos(lat) * cos(lon)))
                        return Self.sample(atlas, p.x, p.y)
                    }
                    let d = colour(lonDegrees - 0.1) - colour(lonDegrees + 0.1)
                    jumps.append((d * d).sum().squareRoot())
                }
            }
            let sorted = jumps.sorted()
            #expect(sorted[sorted.count / 2] < 20, "\(folder): \(sorted)")
        }
    }
}
