// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import Testing

@testable import LapseMotion

@Suite struct OrientationSmootherTests {
    /// A sequence turning through a corner, measured by relative motions (0.2° noise an axis) and compass
    /// headings (10° noise): with a lag of 30 frames the orientations follow the truth to within 5° (on average
    /// within 2°, a fifth of the headings' noise), and consecutive frames turn as the truth does to within 1° (the
    /// motions' own noise); without a lag (a filter only) they are further off.
    @Test func fusesPreciseMotionsWithNoisyHeadings() {
        let smoothed = Self.run(lag: 30)
        let filtered = Self.run(lag: 0)
        #expect(smoothed.errors.max()! < 5)
        #expect(smoothed.errors.reduce(0, +) / Double(smoothed.errors.count) < 2)
        #expect(smoothed.steps.max()! < 1)
        #expect(filtered.errors.reduce(0, +) > 1.2 * smoothed.errors.reduce(0, +))
    }

    static func run(lag: Int) -> (errors: [Double], steps: [Double]) {
        var generator = SplitMix64(seed: 3)
        func noise(_ sigma: Double) -> Double {
            // Box–Muller.
            let u = max(1e-12, Double(generator.next() % 1_000_000) / 1_000_000)
            let v = Double(generator.next() % 1_000_000) / 1_000_000
            return sigma * (-2 * Foundation.log(u)).squareRoot() * cos(2 * .pi * v)
        }
        let n = 200
        let truth = (0..<n).map { i -> Rotation in
            let heading = 30 + 90 / (1 + exp(-Double(i - 100) / 10)) // a 90° corner around frame 100
            return Rotation.camera(yaw: heading, pitch: 2 * sin(Double(i) / 15), roll: 1.5 * cos(Double(i) / 20))
        }
        var smoother = OrientationSmoother(lag: lag)
        var result: [Rotation] = []
        for i in 0..<n {
            var motion: PairMotion?
            if i > 0 {
                let exact = truth[i].transposed * truth[i - 1]
                let error = Rotation.camera(yaw: noise(0.2), pitch: noise(0.2), roll: noise(0.2))
                motion = PairMotion(
                    rotation: error * exact, uncertainty: 0.2, tracked: 100, inliers: 100, travel: nil,
                    travelUncertainty: nil,
                    parallax: 1, staticFraction: 0)
            }
            let heading = truth[i].yawPitchRoll.yaw + noise(10)
            smoother.add(.init(motion: motion, headings: [.init(centre: heading, sigma: 10)], levelSigma: 3))
            result += smoother.takeSettled()
        }
        smoother.finish()
        result += smoother.takeSettled()
        #expect(result.count == n)
        let errors = zip(result, truth).map { ($0 * $1.transposed).angle }
        let steps = (1..<n).map {
            ((result[$0].transposed * result[$0 - 1]) * (truth[$0].transposed * truth[$0 - 1]).transposed).angle
        }
        return (errors, steps)
    }

    /// Only a heading for the first frame (a video without a track): the orientations are the chain of the
    /// measured motions from it; a frame with no motion measured keeps the orientation before it.
    @Test func chainsMotionsFromTheFirstHeading() {
        var smoother = OrientationSmoother(lag: 5)
        let turn = PairMotion(
            rotation: Rotation.yaw(-2), uncertainty: 0.1, tracked: 50, inliers: 50, travel: nil, travelUncertainty: nil,
            parallax: 1, staticFraction: 0)
        smoother.add(.init(motion: nil, headings: [.init(centre: 100, sigma: 0.1)], levelSigma: 5))
        for i in 1..<10 { smoother.add(.init(motion: i == 5 ? nil : turn, headings: [], levelSigma: 5)) }
        smoother.finish()
        let headings = smoother.takeSettled().map { $0.yawPitchRoll.yaw }
        let expected = [100.0, 102, 104, 106, 108, 108, 110, 112, 114, 116]
        for (h, e) in zip(headings, expected) { #expect(abs(h - e) < 0.01, "\(headings)") }
    }

    /// A camera pitched down 4° about the way it goes, its direction of travel measured 4° above its horizon and
    /// known to be level with the world (a road): the direction's elevation (±0.5°) brings the pitch back, where
    /// the level prior alone (±3°, upright) would leave it; its heading is held.
    @Test func levelDirectionOfTravelHoldsThePitch() {
        var smoother = OrientationSmoother(lag: 0)
        // Travel straight ahead of the centre column, which faces 90°; the picture's travel is 4° up.
        let up = 4.0 * Double.pi / 180
        let travel = SIMD3(0, -sin(up), cos(up))
        smoother.add(
            .init(
                motion: nil,
                headings: [.init(direction: travel, heading: 90, sigma: 1, elevation: 0, elevationSigma: 0.5)],
                levelSigma: 3))
        smoother.finish()
        let pose = smoother.takeSettled()[0]
        let world = pose * travel
        #expect(abs(asin(-world.y) * 180 / .pi) < 0.5)
        #expect(abs(angleDifference(from: 90, to: atan2(world.x, world.z) * 180 / .pi)) < 0.1)
        #expect(abs(pose.yawPitchRoll.pitch + 3.8) < 0.3, "\(pose.yawPitchRoll)")
    }
}
