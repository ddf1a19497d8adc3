// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia

/// Per-channel gains that bring each frame's tone back to a running reference, so consecutive panoramas from
/// different capture runs or cameras (exposure, white balance) do not step, while slow real changes pass.
///
/// The camera's exposure, per channel and in log terms, is followed frame to frame by the ratio of corresponding
/// points' colours (``PairMotion/exposure``: the same surfaces, so a shadow or a bright building entering the
/// picture does not count), else by the ratio of the pictures' mean colours; changes under 10 % a frame are not
/// the camera's and are left out. The reference follows that
/// exposure by at most ``maximumStep`` a frame (an exposure value's step is absorbed, then let through at 1 % a
/// frame; dusk falling over hundreds of frames passes at once); each frame's gain is the reference over its
/// exposure, within ¼…4.
public struct ToneMatcher: Sendable {
    /// How far (a fraction of itself) the reference may move in one frame.
    public var maximumStep: Double
    /// The camera's exposure and the reference, natural logarithms per channel (0 at the first frame).
    @StoredAsDoubles private var exposure = SIMD3<Double>(repeating: 0)
    @StoredAsDoubles private var reference = SIMD3<Double>(repeating: 0)
    @OptionalStoredAsDoubles private var previousMeans: SIMD3<Double>?

    /// A matcher whose reference moves by at most `maximumStep` (a fraction of itself) a frame; the gains, the
    /// reference over each frame's exposure, absorb an exposure step at once.
    public init(maximumStep: Double = 0.01) { self.maximumStep = maximumStep }

    /// Exposure changes (natural log) under this are not followed.
    static let deadband = Foundation.log(1.1)

    /// The correction of the next frame.
    /// - Parameters:
    ///   - ratio: how much brighter this frame is than the previous one at the same points (nil: unknown).
    ///   - means: its mean R, G, B (``SphereImage/channelMean``), used when `ratio` is nil.
    /// - Returns: the frame's gains (all 1 for the first frame).
    public mutating func correction(ratio: SIMD3<Double>?, means: SIMD3<Double>) -> ToneCorrection {
        let m = means.replacing(with: 1, where: means .< 1)
        defer { previousMeans = m }
        guard let previous = previousMeans else { return ToneCorrection(gains: SIMD3(repeating: 1)) }
        let step = ratio ?? (m / previous)
        // Changes of under 10 % a frame are the scene's own or the measurement's noise, not the camera's steps:
        // left out, they neither accumulate into a drift nor hold back real changes of light.
        for c in 0..<3 {
            let change = Foundation.log(min(max(step[c], 1.0 / 16), 16))
            if abs(change) > Self.deadband { exposure[c] += change }
        }
        let limit = Foundation.log(1 + maximumStep)
        reference += (exposure - reference).clamped(
            lowerBound: SIMD3(repeating: -limit), upperBound: SIMD3(repeating: limit))
        var gains = SIMD3<Double>(repeating: 1)
        for c in 0..<3 { gains[c] = min(max(Foundation.exp(reference[c] - exposure[c]), 0.25), 4) }
        return ToneCorrection(gains: gains)
    }
}

/// Gains for R, G and B.
public struct ToneCorrection: Sendable, Equatable, Codable {
    /// Multipliers of the gamma-encoded 8-bit R′, G′ and B′ values (1: unchanged).
    @StoredAsDoubles public var gains: SIMD3<Double>

    /// A correction of these gains.
    public init(gains: SIMD3<Double>) { self.gains = gains }

    /// Whether it changes nothing visible (every gain within 0.2 % of 1).
    public var isIdentity: Bool { (0..<3).allSatisfy { Swift.abs(gains[$0] - 1) < 0.002 } }

    /// Multiplies the colour channels of every pixel (rounded, clipped at 255; alpha kept), through a table per
    /// channel.
    public func apply(to pixels: inout PixelBuffer) {
        guard !isIdentity else { return }
        let tables = tables
        let r = tables[0]
        let g = tables[1]
        let b = tables[2]
        pixels.bytes.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i < p.count {
                p[i] = r[Int(p[i])]
                p[i + 1] = g[Int(p[i + 1])]
                p[i + 2] = b[Int(p[i + 2])]
                i += 4
            }
        }
    }

    /// The same gains on a Y′CbCr frame (BT.709, limited range) without an RGBA picture: the same tables on each
    /// pixel's R′G′B′ (``YUVFrame/mapRGB(_:)``), chroma from its 2 × 2 block's mean.
    public func apply(to frame: inout YUVFrame) {
        guard !isIdentity else { return }
        frame.mapRGB(tables)
    }

    /// R′, G′ and B′ times their gains, rounded and clipped at 255: 256 entries each.
    private var tables: [[UInt8]] {
        (0..<3).map { c in (0..<256).map { UInt8(min(255, (Double($0) * gains[c]).rounded())) } }
    }
}
