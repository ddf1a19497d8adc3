// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia

/// Per-channel gains that bring a frame's tone to a running reference, so consecutive panoramas from different
/// capture runs or cameras (exposure, white balance) do not step, while slow real changes pass.
///
/// The reference starts at the first frame's channel means and follows each next frame's by at most
/// ``maximumStep`` of itself a frame (a step of one exposure value is absorbed, then let through over about
/// 70 frames at 1 % a frame; dusk falling over hundreds of frames passes at once). Each frame's gain per channel
/// is the reference mean over the frame's mean, within ¼…4.
public struct ToneMatcher: Sendable {
    /// How far (a fraction of itself) the reference may move in one frame.
    public var maximumStep: Double
    private var reference: SIMD3<Double>?

    public init(maximumStep: Double = 0.01) { self.maximumStep = maximumStep }

    /// The correction of the next frame, from its channel means (R, G, B, 0…255; e.g. ``SphereImage/channelMean``).
    public mutating func correction(forMeans means: SIMD3<Double>) -> ToneCorrection {
        let m = means.replacing(with: 1, where: means .< 1)
        guard var r = reference else {
            reference = m
            return ToneCorrection(gains: SIMD3(repeating: 1))
        }
        let limit = r * maximumStep
        r += (m - r).clamped(lowerBound: -limit, upperBound: limit)
        reference = r
        return ToneCorrection(gains: (r / m).clamped(lowerBound: SIMD3(repeating: 0.25), upperBound: SIMD3(repeating: 4)))
    }
}

/// Gains for R, G and B.
public struct ToneCorrection: Sendable, Equatable, Codable {
    public var gains: SIMD3<Double>

    public init(gains: SIMD3<Double>) { self.gains = gains }

    /// Whether it changes nothing visible (every gain within 0.2 % of 1).
    public var isIdentity: Bool { (0..<3).allSatisfy { Swift.abs(gains[$0] - 1) < 0.002 } }

    /// Multiplies the colour channels of every pixel (rounded, clipped at 255; alpha kept), through a table per
    /// channel.
    public func apply(to pixels: inout PixelBuffer) {
        guard !isIdentity else { return }
        let tables = (0..<3).map { c in (0..<256).map { UInt8(min(255, (Double($0) * gains[c]).rounded())) } }
        let r = tables[0], g = tables[1], b = tables[2]
        pixels.bytes.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i < p.count {
                p[i] = r[Int(p[i])]; p[i + 1] = g[Int(p[i + 1])]; p[i + 2] = b[Int(p[i + 2])]
                i += 4
            }
        }
    }
}
