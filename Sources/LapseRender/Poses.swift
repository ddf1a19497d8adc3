// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Where a perspective (rectilinear) view looks and how wide it is. All angles in degrees.
///
/// The rotation convention is ffmpeg's `v360` filter with its default rotation order `ypr`: the camera is
/// turned by `heading` about the vertical axis, then by `pitch` about its own horizontal axis, then by `roll`
/// about its viewing axis. So a view rendered here matches
/// `v360=input=e:output=flat:yaw=Y:pitch=P:roll=R:h_fov=F:v_fov=V` with `Y = heading − panorama heading`.
public struct CameraPose: Sendable, Hashable, Codable {
    /// Compass heading of the view's centre: 0 = north, 90 = east, 180 = south, 270 = west.
    /// Any finite value; taken modulo 360.
    public var heading: Double
    /// Up from the horizon: positive looks up, negative looks down, ±90 looks straight up/down.
    public var pitch: Double
    /// Rotation about the viewing axis. Positive turns the camera clockwise as seen from behind it, so the
    /// picture's content turns counter-clockwise (ffmpeg `v360`'s `roll`). Usually 0.
    public var roll: Double
    /// Horizontal field of view, greater than 0 and less than 180. The vertical field of view follows from the
    /// output's aspect ratio with square pixels: `2·atan(tan(fov/2)·height/width)`.
    public var fov: Double

    /// A camera looking at compass `heading`, `pitch` degrees up, rolled by `roll`, with a horizontal field of view of
    /// `fov` degrees (between 0 and 180, both excluded).
    public init(heading: Double, pitch: Double = 0, roll: Double = 0, fov: Double = 90) {
        self.heading = heading
        self.pitch = pitch
        self.roll = roll
        self.fov = fov
    }

    /// The vertical field of view (degrees) of an output `width × height` pixels at this horizontal ``fov``.
    public func verticalFOV(width: Int, height: Int) -> Double {
        2 * atanDegrees(tanDegrees(fov / 2) * Double(height) / Double(width))
    }
}

/// How an equirectangular panorama sits in the world, in degrees.
///
/// The centre of a panorama `W` pixels wide faces compass heading ``heading``, and longitude grows to the right:
/// column `x` faces `heading + (x/(W − 1) − 0.5)·360` (the first and last columns both face the back, as in
/// ffmpeg's `v360`; within half a pixel of `heading + (x/W − 0.5)·360`). Left in the image is left in the world
/// (the image is not mirrored). Row 0 is straight up, the middle row the horizon, the last row straight down
/// (when level).
public struct PanoramaPose: Sendable, Hashable, Codable {
    /// Compass heading of the panorama's centre column (0 = north, 90 = east).
    public var heading: Double
    /// How far the panorama camera's forward axis is pitched up from level (0 = level). A panorama with
    /// tilt `t` shows the level horizon ahead `t` degrees below its middle row. Note that Google's Street
    /// View metadata reports level as tilt 90: pass `metadataTilt − 90`.
    public var tilt: Double
    /// Rotation of the panorama camera about its forward axis (same sense as ``CameraPose/roll``; 0 = level).
    public var roll: Double

    /// A panorama whose centre column faces compass `heading`, tilted by `tilt` and rolled by `roll` (degrees;
    /// 0 level).
    public init(heading: Double = 0, tilt: Double = 0, roll: Double = 0) {
        self.heading = heading
        self.tilt = tilt
        self.roll = roll
    }

    /// Whether the panorama is level (no tilt or roll), in which case a change of camera heading alone is a
    /// horizontal shift of the source.
    public var isLevel: Bool { tilt == 0 && roll == 0 }
}

/// How source pixels are blended.
public enum Interpolation: String, Sendable, CaseIterable, Codable {
    /// 2×2 taps, linear in each direction (ffmpeg `v360` `interp=linear`). The default; the fastest.
    case bilinear
    /// 4×4 taps, Catmull-Rom cubic (Keys, a = −0.5). Sharper when magnifying.
    case bicubic
    /// 4×4 taps, Lanczos with a = 2, normalised to sum 1. Sharpest; may ring slightly at hard edges.
    case lanczos
}

// Degree helpers (Double precision).
@inline(__always) func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
@inline(__always) func degrees(_ radians: Double) -> Double { radians * 180 / .pi }
@inline(__always) func tanDegrees(_ d: Double) -> Double { tan(radians(d)) }
@inline(__always) func atanDegrees(_ x: Double) -> Double { degrees(atan(x)) }
