// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

/// How the camera moved between two consecutive panoramas A and B, measured from their pixels by
/// ``MotionEstimator``.
public struct PairMotion: Sendable, Equatable {
    /// Directions of distant points in A's frame to B's frame: `d_B = rotation · d_A`. If the panoramas are
    /// posed `R_A`, `R_B` (world from panorama), `rotation = R_Bᵀ · R_A`.
    package var rotation: Rotation
    /// One standard deviation of the rotation's error, degrees (from the fit's residuals and inlier count).
    public var uncertainty: Double
    /// Correspondences used and those that agreed with the fit.
    public var tracked: Int
    /// Of ``tracked``, the correspondences that agreed with the fit.
    public var inliers: Int
    /// Direction of travel from A to B as a unit vector in A's frame (x right, y down, z along A's centre
    /// column): the focus of expansion, where the scene streams out from. `nil` when the parallax is too small
    /// to tell (a stop, or a distant scene).
    @OptionalStoredAsDoubles public var travel: SIMD3<Double>?
    /// One standard deviation of `travel`'s error, degrees (from the epipolar fit's residuals and geometry);
    /// nil without a direction of travel.
    public var travelUncertainty: Double?
    /// Median angle (degrees) by which the correspondences move once the rotation is removed: how far the
    /// camera travelled, relative to the scene's depth.
    public var parallax: Double
    /// Share of A's textured pixels that stay put in B (a car's interior, the mount): left out of the fit.
    public var staticFraction: Double
    /// How much brighter B is than A in R, G and B at the same points of the scene (the median ratio over the
    /// correspondences, well exposed ones only): an exposure or white-balance change of the camera, which the
    /// scene's own light (a shadow entering the picture) does not move. Nil with too few usable correspondences.
    @OptionalStoredAsDoubles public var exposure: SIMD3<Double>?
    /// Where this pair says the direction of travel lies for a camera fixed to a vehicle (``TravelVotes``: the
    /// world's flows outside what stays put, derotated); nil when too few moved. Not carried by ``then(_:)``
    /// (the chord of two pairs is not measured) nor ``fraction(_:)``.
    package var travelVotes: TravelVotes? = nil

    /// B's camera relative to A's, as yaw (right positive), pitch (up positive) and roll, degrees: the rotation
    /// `R_Aᵀ · R_B = rotationᵀ` in yaw–pitch–roll order.
    public var yawPitchRoll: (yaw: Double, pitch: Double, roll: Double) { rotation.transposed.yawPitchRoll }

    /// The direction of travel in A's frame as (degrees right of the centre column, degrees above the horizon).
    public var travelDirection: (longitude: Double, latitude: Double)? {
        travel.map { (atan2($0.x, $0.z) * 180 / .pi, asin(min(1, max(-1, -$0.y))) * 180 / .pi) }
    }

    /// The motion from A to C, this being A to B and `next` B to C: the rotations composed, the uncertainties
    /// added in quadrature, `next`'s direction of travel turned into A's frame, the exposures multiplied.
    public func then(_ next: PairMotion) -> PairMotion {
        var exposureAC: SIMD3<Double>?
        if let a = exposure, let b = next.exposure { exposureAC = a * b }
        return PairMotion(
            rotation: next.rotation * rotation,
            uncertainty: (uncertainty * uncertainty + next.uncertainty * next.uncertainty).squareRoot(),
            tracked: min(tracked, next.tracked), inliers: min(inliers, next.inliers),
            travel: next.travel.map { rotation.transposed * $0 } ?? travel,
            travelUncertainty: next.travel == nil ? travelUncertainty : next.travelUncertainty,
            parallax: parallax + next.parallax,
            staticFraction: next.staticFraction, exposure: exposureAC)
    }

    /// The part `f` (0…1) of this motion, for each of the frames between two measured ones: the rotation's
    /// angle times `f` about the same axis, the uncertainty times √f, the parallax times f, the exposure to the
    /// power f; the direction of travel the same.
    public func fraction(_ f: Double) -> PairMotion {
        var part = self
        part.rotation = Rotation.exp(rotation.log * f)
        part.uncertainty = uncertainty * f.squareRoot()
        part.parallax = parallax * f
        part.travelVotes = nil
        part.exposure = exposure.map {
            SIMD3(Foundation.pow($0.x, f), Foundation.pow($0.y, f), Foundation.pow($0.z, f))
        }
        return part
    }

    /// The angle (degrees) between this rotation and another one (e.g. a known one).
    package func error(against truth: Rotation) -> Double { (rotation * truth.transposed).angle }
}
