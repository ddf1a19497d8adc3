// SPDX-License-Identifier: GPL-3.0-or-later
// An independent statement of the projection's geometry for the tests: camera basis vectors built from
// heading/pitch/roll with plain trigonometry (no rotation matrices from LapseRender), used to predict where a
// world direction lands in a view, and which direction a panorama pixel shows.
import Foundation
import LapseCore
import LapseMedia

/// A direction in the world frame used by the tests: x east, y down, z north.
typealias Vec3 = SIMD3<Double>

@inline(__always) func rad(_ d: Double) -> Double { d * .pi / 180 }

/// The unit direction at compass heading `heading` and `elevation` degrees above the horizon.
func direction(heading: Double, elevation: Double) -> Vec3 {
    Vec3(cos(rad(elevation)) * sin(rad(heading)), -sin(rad(elevation)), cos(rad(elevation)) * cos(rad(heading)))
}

func cross(_ a: Vec3, _ b: Vec3) -> Vec3 {
    Vec3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
}

func dot(_ a: Vec3, _ b: Vec3) -> Double { (a * b).sum() }

/// Right, down and forward unit vectors of a camera turned to `heading`, raised by `pitch`, rolled by `roll`
/// (positive roll lowers the right side, as ffmpeg v360's roll).
struct Basis {
    // Stored as plain Doubles, as every type's vectors are (`make lint`: scripts/vector-fields.py).
    @StoredAsDoubles var right: Vec3
    @StoredAsDoubles var down: Vec3
    @StoredAsDoubles var forward: Vec3
    init(heading: Double, pitch: Double, roll: Double) {
        let forward = direction(heading: heading, elevation: pitch)
        self.forward = forward
        let right0 = Vec3(cos(rad(heading)), 0, -sin(rad(heading)))
        let down0 = cross(forward, right0)
        right = right0 * cos(rad(roll)) + down0 * sin(rad(roll))
        down = down0 * cos(rad(roll)) - right0 * sin(rad(roll))
    }
    /// World direction of camera-frame coordinates.
    func world(_ c: Vec3) -> Vec3 { right * c.x + down * c.y + forward * c.z }
    /// Camera-frame coordinates of a world direction.
    func local(_ w: Vec3) -> Vec3 { Vec3(dot(w, right), dot(w, down), dot(w, forward)) }
}

/// The output pixel (continuous, pixel centres at whole numbers) where world direction `w` appears in a
/// `width × height` view with horizontal field of view `fov`, or nil when it is behind the camera.
func predictedPixel(of w: Vec3, camera: Basis, fov: Double, width: Int, height: Int) -> (x: Double, y: Double)? {
    let c = camera.local(w)
    guard c.z > 1e-9 else { return nil }
    let t = tan(rad(fov / 2))
    let tv = t * Double(height) / Double(width)
    return ((c.x / c.z / t + 1) * Double(width) / 2 - 0.5, (c.y / c.z / tv + 1) * Double(height) / 2 - 0.5)
}

/// The world direction through the centre of output pixel (i, j).
func rayDirection(i: Int, j: Int, camera: Basis, fov: Double, width: Int, height: Int) -> Vec3 {
    let t = tan(rad(fov / 2))
    let tv = t * Double(height) / Double(width)
    let c = Vec3(t * (Double(2 * i + 1) / Double(width) - 1), tv * (Double(2 * j + 1) / Double(height) - 1), 1)
    let w = camera.world(c)
    return w / (w * w).sum().squareRoot()
}

/// Builds an equirectangular panorama `width × height` whose pixel (u, v) shows, through a panorama camera
/// posed at (`heading`, `tilt`, `roll`), the world direction given to `colour`. Column u faces
/// `(u/(W−1) − 0.5)·360°` from the centre, row v is `(0.5 − v/(H−1))·180°` above the horizon (ffmpeg v360's
/// sampling of the equirectangular grid).
func makePanorama(
    width: Int, height: Int, heading: Double = 0, tilt: Double = 0, roll: Double = 0,
    colour: (Vec3) -> RGBA
) -> PixelBuffer {
    var p = PixelBuffer(width: width, height: height)
    let pano = Basis(heading: heading, pitch: tilt, roll: roll)
    for v in 0..<height {
        let elevation = (0.5 - Double(v) / Double(height - 1)) * 180
        for u in 0..<width {
            let lon = (Double(u) / Double(width - 1) - 0.5) * 360
            let local = direction(heading: lon, elevation: elevation) // in the panorama camera's frame
            p[u, v] = colour(pano.world(local))
        }
    }
    return p
}

/// A colour that varies smoothly with direction over the whole sphere (no seam, no pole singularity).
func directionColour(_ w: Vec3) -> RGBA {
    func c(_ x: Double) -> UInt8 { UInt8((127.5 * (1 + x)).rounded().clamped(0, 255)) }
    return RGBA(c(w.x), c(w.y), c(w.z))
}

extension Double {
    func clamped(_ lo: Double, _ hi: Double) -> Double { Swift.min(Swift.max(self, lo), hi) }
}
