// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia

/// A 360° camera inside a car, built from real parts (no licensed in-car 360° sequence is public): the street is
/// frames of the real highway video (`overpass-clip.mp4`, its camera travelling towards its pictures' longitude
/// 180°), seen only through windows with a faint static reflection (12 % of a real landscape photo); a static
/// textured cabin over the rest of the sphere (a real 360° photo of trees and grass, darkened); and two passengers
/// (the real portrait `hopper.jpg`, and the middle of a real photo of three dogs, `app13-multiple.jpg`), each moved,
/// scaled and mirrored afresh in every frame. The whole is turned so
/// that the car's axis (its direction of travel) lies `mount` degrees right of the picture's centre column.
///
/// Layout in the car's frame (α: degrees right of the car's axis; latitude: degrees above the horizon):
/// windscreen |α| < 55°, −18° … 28°; side windows 65° < |α| < 125°, −8° … 25°; rear window |α| > 150°, 0° … 20°;
/// the people at α = ±155°, −40° … 8°, 32° wide, in front of the rear window. About 70 % of the sphere is
/// cabin.
public enum InCarComposite {
    /// Width of the pictures made (height half).
    public static let width = 1024

    /// Every `step`-th frame of the highway video from frame `start`, at most `count`, at ``width`` × width/2.
    public static func streetFrames(step: Int, count: Int, start: Int = 0) throws -> [PixelBuffer] {
        let reader = try VideoFrameReader(
            URL(fileURLWithPath: TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")))
        reader.outputSize = (width, width / 2)
        var frames: [PixelBuffer] = []
        var n = 0
        while frames.count < count, let (_, pixels) = try reader.nextFrame() {
            if n >= start, (n - start) % step == 0 { frames.append(pixels) }
            n += 1
        }
        return frames
    }

    /// Metres the highway video's camera travels between consecutive frames (about 90 km/h at 29.97 fps).
    public static let metresPerFrame = 0.85

    static let parts: (cabin: PixelBuffer, reflection: PixelBuffer, passengers: [PixelBuffer]) = {
        let w = width
        let h = width / 2
        var cabin = try! DecodedImage(url: URL(fileURLWithPath: TestData.path("pano360/trekview_360/R0014760.JPG")))
            .pixels(
                width: w, height: h)
        // Turned by 77° (another part of the photo faces the windscreen) and darkened to 60 %.
        let shift = w * 77 / 360
        var turned = cabin
        for y in 0..<h {
            for x in 0..<w {
                let from = (y * w + (x - shift + w) % w) * 4
                let to = (y * w + x) * 4
                for c in 0..<3 { turned.bytes[to + c] = UInt8(Double(cabin.bytes[from + c]) * 0.6) }
            }
        }
        cabin = turned
        let reflection = try! DecodedImage(
            url: URL(fileURLWithPath: TestData.path("images/exif-orientation-examples/Landscape_1.jpg"))
        )
        .pixels(width: w, height: h)
        let portrait = try! DecodedImage(url: URL(fileURLWithPath: TestData.path("images/pillow/hopper.jpg"))).pixels()
        // The middle dog, 96 × 128 of the 256 × 160 photo.
        let dogs = try! DecodedImage(url: URL(fileURLWithPath: TestData.path("images/pillow/app13-multiple.jpg")))
            .pixels()
        var dog = PixelBuffer(width: 96, height: 128)
        for y in 0..<128 {
            for x in 0..<96 {
                let from = ((y + 16) * dogs.width + x + 80) * 4
                let to = (y * 96 + x) * 4
                for c in 0..<4 { dog.bytes[to + c] = dogs.bytes[from + c] }
            }
        }
        return (cabin, reflection, [portrait, dog])
    }()

    /// Deterministic random numbers for the people.
    public struct Random {
        var state: UInt64
        public init(seed: UInt64) { state = seed }
        public mutating func uniform(_ low: Double, _ high: Double) -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return low + (high - low) * (Double(state >> 11) + 0.5) / Double(1 << 53)
        }
    }

    /// What a pixel of the car shows, by its place in the car's frame.
    enum Region {
        case cabin
        case window
        case person(Int)
    }

    static func region(alpha: Double, latitude: Double, windows: Bool) -> Region {
        let a = abs(alpha)
        for (k, centre) in [155.0, -155.0].enumerated() {
            var d = alpha - centre
            if d > 180 { d -= 360 } else if d < -180 { d += 360 }
            if abs(d) < 16, latitude > -40, latitude < 8 { return .person(k) }
        }
        guard windows else { return .cabin }
        if a < 55, latitude > -18, latitude < 28 { return .window }
        if a > 65, a < 125, latitude > -8, latitude < 25 { return .window }
        if a > 150, latitude > 0, latitude < 20 { return .window }
        return .cabin
    }

    /// One picture from inside the car.
    /// - Parameters:
    ///   - street: a frame of ``streetFrames(step:count:start:)`` (its travel at longitude 180°).
    ///   - mount: degrees right of the centre column where the car's axis lies (rounded to whole columns).
    ///   - turn: how far the car has turned right since the street frame was taken (the world then lies that much
    ///     further left in the picture), degrees.
    ///   - windows: false covers the windows (the cabin everywhere).
    ///   - random: moves the people.
    public static func picture(
        street: PixelBuffer, mount: Double, turn: Double = 0, windows: Bool = true, random: inout Random
    ) -> PixelBuffer {
        let w = width
        let h = width / 2
        precondition(street.width == w && street.height == h)
        let (cabin, reflection, passengers) = parts
        // Street column for composite column x: the street's longitude λ − mount + 180 + turn.
        let shift = Int(((180 - mount + turn) / 360 * Double(w)).rounded())
        let people = (0..<2).map { _ in
            (
                scale: random.uniform(0.92, 1.08), dx: random.uniform(-0.08, 0.08), dy: random.uniform(-0.08, 0.08),
                mirrored: random.uniform(0, 1) < 0.5
            )
        }
        var out = PixelBuffer(width: w, height: h)
        let mountColumns = Double(Int((mount / 360 * Double(w)).rounded())) * 360 / Double(w)
        for y in 0..<h {
            let latitude = 90 - (Double(y) + 0.5) / Double(h) * 180
            for x in 0..<w {
                let longitude = (Double(x) + 0.5) / Double(w) * 360 - 180
                var alpha = longitude - mountColumns
                if alpha >= 180 { alpha -= 360 } else if alpha < -180 { alpha += 360 }
                let o = (y * w + x) * 4
                switch region(alpha: alpha, latitude: latitude, windows: windows) {
                case .cabin:
                    for c in 0..<3 { out.bytes[o + c] = cabin.bytes[o + c] }
                case .window:
                    let s = (y * w + ((x + shift) % w + w) % w) * 4
                    for c in 0..<3 {
                        let v = 0.88 * Double(street.bytes[s + c]) + 0.12 * Double(reflection.bytes[o + c])
                        out.bytes[o + c] = UInt8(v.rounded())
                    }
                case .person(let k):
                    // The region's own coordinates 0…1, then the portrait moved and scaled about its centre.
                    let centre = k == 0 ? 155.0 : -155.0
                    var d = alpha - centre
                    if d > 180 { d -= 360 } else if d < -180 { d += 360 }
                    var u = (d + 16) / 32
                    var v = (8 - latitude) / 48
                    let p = people[k]
                    let portrait = passengers[k]
                    if p.mirrored { u = 1 - u }
                    u = (u - 0.5) / p.scale + 0.5 - p.dx
                    v = (v - 0.5) / p.scale + 0.5 - p.dy
                    let px = min(max(Int(u * Double(portrait.width)), 0), portrait.width - 1)
                    let py = min(max(Int(v * Double(portrait.height)), 0), portrait.height - 1)
                    let s = (py * portrait.width + px) * 4
                    for c in 0..<3 { out.bytes[o + c] = portrait.bytes[s + c] }
                }
            }
        }
        return out
    }

    /// Whether the direction `longitude` degrees right of the centre column, at the horizon, is seen through the
    /// windscreen of a car mounted `mount` degrees right of it.
    public static func inWindscreen(_ longitude: Double, mount: Double) -> Bool {
        var alpha = longitude - mount
        alpha = (alpha + 540).truncatingRemainder(dividingBy: 360) - 180
        return abs(alpha) < 55
    }
}
