// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia

/// The equi-angular cubemap (EAC) of a GoPro MAX `.360` file: two video streams of three cube faces each, side by
/// side — the first stream left, front, right; the second down, back, top, each turned a quarter counter-clockwise —
/// in equi-angular coordinates (a face's pixels evenly spaced in angle, `4/π · atan` of the cube-face coordinate).
///
/// Layout (GoPro's, as trek-view's reference converter max2sphere reads it, docs/dev-notes.pdf there): a stream is
/// `side | centre | side` columns wide (5.6K: 1376 | 1344 | 1376 = 4096 × 1344; 3K: 768 | 736 | 768 = 2272 × 736).
/// The centre face fills its columns. A side face is cut down its middle: its two halves (each 45°, drawn
/// `side/2 − blend` columns wide) lie at the region's two ends with a band of `2 · blend` columns between them
/// (64 on 5.6K, 32 on 3K), in which each half runs on past the cut for `blend` columns — the overlap the camera
/// stitches across. max2sphere blends the two across the band; here each direction takes the half it lies in, so
/// the two copies meet at the band's middle, where the blend is half and half (they show the same scene).
///
/// Both streams are taken as one picture, the **atlas**: the first stream's rows above the second's
/// (`streamWidth × 2·streamHeight`), as ``Projector`` samples it.
public struct GoProEAC: Sendable, Hashable {
    public let streamWidth: Int, streamHeight: Int
    /// Columns of a side region (a face and its overlap band), of the centre face, and of a half's overlap.
    public let sideWidth: Int, centreWidth: Int, blendWidth: Int

    /// The layouts GoPro MAX writes: 5.6K (4096 × 1344 a stream) and 3K (2272 × 736).
    public static let layouts = [
        GoProEAC(streamWidth: 4096, streamHeight: 1344, sideWidth: 1376, centreWidth: 1344, blendWidth: 32),
        GoProEAC(streamWidth: 2272, streamHeight: 736, sideWidth: 768, centreWidth: 736, blendWidth: 16)
    ]

    /// The layout of streams of this size, nil for a size GoPro MAX does not write.
    public static func layout(streamWidth: Int, streamHeight: Int) -> GoProEAC? {
        layouts.first { $0.streamWidth == streamWidth && $0.streamHeight == streamHeight }
    }

    init(streamWidth: Int, streamHeight: Int, sideWidth: Int, centreWidth: Int, blendWidth: Int) {
        self.streamWidth = streamWidth
        self.streamHeight = streamHeight
        self.sideWidth = sideWidth
        self.centreWidth = centreWidth
        self.blendWidth = blendWidth
    }

    /// The atlas's size: both streams, the first above the second.
    public var atlasWidth: Int { streamWidth }
    /// The atlas's height: both streams', stacked.
    public var atlasHeight: Int { 2 * streamHeight }

    enum Face { case left, front, right, down, back, top }

    /// Where the direction `d` (x right, y down, z forward; any length > 0) is seen in the atlas, in pixel-index
    /// coordinates (pixel centres at whole numbers) of a plane `scale` times the atlas's size (½ for 4:2:0
    /// chroma).
    @inline(__always)
    public func position(_ d: SIMD3<Double>, scale: Double = 1) -> (x: Double, y: Double) {
        // max2sphere's axes: x right, y forward, z up.
        let px = d.x
        let py = d.z
        let pz = -d.y
        let ax = abs(px)
        let ay = abs(py)
        let az = abs(pz)
        let face: Face
        var u: Double
        var v: Double // 0…1 across the face, v up
        @inline(__always) func ea(_ t: Double) -> Double { atan(t) * (4 / .pi) } // equi-angular: −1…1
        if ax >= ay && ax >= az {
            let qy = ea(py / ax)
            let qz = ea(pz / ax)
            face = px < 0 ? .left : .right
            u = px < 0 ? (qy + 1) / 2 : (1 - qy) / 2
            v = (qz + 1) / 2
        } else if ay >= az {
            let qx = ea(px / ay)
            let qz = ea(pz / ay)
            face = py > 0 ? .front : .back
            u = py > 0 ? (qx + 1) / 2 : (1 - qx) / 2
            v = (qz + 1) / 2
        } else {
            let qx = ea(px / az)
            let qy = ea(py / az)
            face = pz > 0 ? .top : .down
            u = (1 - qx) / 2
            v = pz > 0 ? (qy + 1) / 2 : (1 - qy) / 2
        }
        let second = face == .down || face == .back || face == .top
        if second { (u, v) = (v, 1 - u) } // the second stream's faces are turned a quarter
        u = min(max(u, 0), 1)
        v = min(max(v, 0), 1)
        let side = Double(sideWidth)
        let duv = Double(blendWidth) / side
        var x: Double // columns from the stream's left edge (edges at whole numbers)
        switch face {
        case .front, .back:
            x = side + u * Double(centreWidth)
        case .left, .down, .right, .top:
            let x0 = face == .left || face == .down ? 0 : side + Double(centreWidth)
            x = x0 + side * (u < 0.5 ? 2 * (0.5 - duv) * u : 2 * (0.5 - duv) * (u - 0.5) + 0.5 + duv)
        }
        // Kept within the stream's own rows (and the atlas's columns), so that no tap reads the other stream.
        let top = second ? Double(streamHeight) * scale : 0
        let y = (1 - v) * Double(streamHeight) * scale - 0.5
        let xs = min(max(x * scale - 0.5, 0), Double(streamWidth) * scale - 1)
        return (xs, top + min(max(y, 0), Double(streamHeight) * scale - 1))
    }
}

extension GoProEAC {
    /// The equirectangular size of the cube map at its own resolution: four centre faces round (5.6K: 5376 × 2688,
    /// 3K: 2944 × 1472, the sizes max2sphere makes).
    public var equirectangularWidth: Int { 4 * centreWidth }

    /// The atlas scaled down by halves (1, ½ or ¼, so both streams keep even heights) as far as its unfolded picture
    /// stays at least `width` wide: the size to decode a frame at for an equirectangular picture of `width`.
    public func atlasSize(forEquirectangularWidth width: Int) -> (width: Int, height: Int) {
        var k = 1
        while k < 4, equirectangularWidth / (2 * k) >= width { k *= 2 }
        return (atlasWidth / k, atlasHeight / k)
    }

    /// The atlas `atlas` (this layout's size or a uniform scale of it) unfolded to an equirectangular picture
    /// `width` pixels wide (`width/2` high; the centre column faces the first stream's centre face), bilinear —
    /// for what needs a whole sphere as a picture (motion analysis, exporting); views are rendered from the atlas
    /// itself (``Projector`` with ``SourceProjection/goproEAC(_:)``).
    /// - Throws: ``LapseCore/LapseError`` `.invalidInput` when `atlas` is not this layout's shape.
    public func equirectangular(_ atlas: PixelBuffer, width: Int) throws -> PixelBuffer {
        guard atlas.width * atlasHeight == atlas.height * atlasWidth, atlas.width >= 2, width >= 2 else {
            throw LapseError(
                .invalidInput, nil,
                "a GoPro MAX frame of \(atlas.width)x\(atlas.height) pixels is not its two streams' atlas "
                    + "(\(atlasWidth)x\(atlasHeight))")
        }
        let w = width & ~1
        let h = w / 2
        let scale = Double(atlas.width) / Double(atlasWidth)
        var out = PixelBuffer(width: w, height: h)
        let aw = atlas.width
        let ah = atlas.height
        atlas.bytes.withUnsafeBufferPointer { src in
            out.bytes.withUnsafeMutableBufferPointer { dst in
                nonisolated(unsafe) let s = src.baseAddress!
                nonisolated(unsafe) let d = dst.baseAddress!
                RowBands.run(rows: h) { rows in
                    for j in rows {
                        // Pixel centres: longitude −180° + (i + ½)·360°/w, latitude 90° − (j + ½)·180°/h.
                        let lat = .pi / 2 - (Double(j) + 0.5) * .pi / Double(h)
                        for i in 0..<w {
                            let lon = (Double(i) + 0.5) * 2 * .pi / Double(w) - .pi
                            let p = position(SIMD3(cos(lat) * sin(lon), -sin(lat), cos(lat) * cos(lon)), scale: scale)
                            let x0 = min(Int(p.x), aw - 2)
                            let y0 = min(Int(p.y), ah - 2)
                            let fx = p.x - Double(x0)
                            let fy = p.y - Double(y0)
                            let k = (j * w + i) * 4
                            for c in 0..<4 {
                                let a = Double(s[(y0 * aw + x0) * 4 + c])
                                let b = Double(s[(y0 * aw + x0 + 1) * 4 + c])
                                let e = Double(s[((y0 + 1) * aw + x0) * 4 + c])
                                let f = Double(s[((y0 + 1) * aw + x0 + 1) * 4 + c])
                                let v = (a * (1 - fx) + b * fx) * (1 - fy) + (e * (1 - fx) + f * fx) * fy
                                d[k + c] = UInt8(min(255, max(0, v.rounded())))
                            }
                        }
                    }
                }
            }
        }
        return out
    }
}
