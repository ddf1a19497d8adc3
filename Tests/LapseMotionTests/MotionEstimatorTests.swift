// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseMedia
import TestSupport
import Testing

@testable import LapseMotion

@Suite struct MotionEstimatorTests {
    @Test func hornRecoversARotation() {
        var generator = SplitMix64(seed: 7)
        let truth = Rotation.camera(yaw: 73, pitch: -12, roll: 4)
        let pairs = (0..<20).map { _ -> (a: SIMD3<Double>, b: SIMD3<Double>) in
            var v = SIMD3(
                Double.random(in: -1...1, using: &generator), Double.random(in: -1...1, using: &generator),
                Double.random(in: -1...1, using: &generator))
            v /= length(v)
            return (v, truth * v)
        }
        #expect((MotionEstimator.horn(pairs) * truth.transposed).angle < 1e-6)
    }

    @Test(arguments: [(0.0, 0.0, 0.0), (73, -12, 4), (-170, 45, -30), (10, 89, 0)])
    func yawPitchRollRoundTrip(angles: (Double, Double, Double)) {
        let r = Rotation.camera(yaw: angles.0, pitch: angles.1, roll: angles.2)
        let (y, p, ro) = r.yawPitchRoll
        #expect((Rotation.camera(yaw: y, pitch: p, roll: ro) * r.transposed).angle < 1e-6)
        #expect((Rotation.exp(r.log) * r.transposed).angle < 1e-6)
    }

    /// Every third frame of the real 360° video (about 2 m apart at highway speed), each turned by a random known
    /// yaw (±40°), pitch and roll (±5°): the rotations between consecutive frames come back within 1° (median) and
    /// 2.5° (90th percentile), none off by more than 5°.
    @Test func knownRotationsOfRealFramesAreRecovered() throws {
        let (median, p90, worst) = try Self.percentiles(Self.errors(patch: false), "rotation error")
        #expect(median <= 1)
        #expect(p90 <= 2.5)
        #expect(worst <= 5)
    }

    /// The same with the lower 40 % of every frame covered by the same picture (the car's interior of the first
    /// frame, unturned): what moves with the camera does not pull the rotations to zero (within 2°, median).
    @Test func staticForegroundDoesNotPullTheRotation() throws {
        let (median, p90, worst) = try Self.percentiles(Self.errors(patch: true), "with a static patch: rotation error")
        #expect(median <= 2)
        #expect(p90 <= 2.5)
        #expect(worst <= 5)
    }

    /// Median, 90th percentile and largest of `errors` (degrees), printed.
    static func percentiles(_ errors: [Double], _ label: String) -> (Double, Double, Double) {
        let sorted = errors.sorted()
        let result = (sorted[sorted.count / 2], sorted[sorted.count * 9 / 10], sorted.last!)
        print("\(label) median \(result.0)°, p90 \(result.1)°, max \(result.2)°")
        return result
    }

    /// The real video as it is (every fourth frame): the camera on the bonnet faces back at the driver, and the
    /// car drives the other way: the direction of travel, where the scene streams out from, is measured 180° from
    /// the centre column (within 10°, the median over the pairs), on the horizon (within 5°); the car hardly turns.
    @Test func directionOfTravelOfTheRealVideo() throws {
        let images = try OverpassFrames.load(step: 4, count: 30).map { try SphereImage($0) }
        let estimator = MotionEstimator()
        var longitudes: [Double] = []
        var latitudes: [Double] = []
        var turns: [Double] = []
        for i in 0..<(images.count - 1) {
            guard let m = estimator.motion(from: images[i], to: images[i + 1]) else { continue }
            turns.append(m.rotation.angle)
            if let t = m.travelDirection {
                longitudes.append(angleDifference(from: 180, to: t.longitude))
                latitudes.append(t.latitude)
            }
        }
        #expect(turns.count >= 27)
        #expect(longitudes.count >= 20)
        #expect(abs(median(longitudes)) < 10, "\(longitudes)")
        #expect(abs(median(latitudes)) < 5, "\(latitudes)")
        #expect(median(turns) < 2)
    }

    /// Turned frames (random yaw ±40°, pitch and roll ±5°) give the direction of travel of the unturned ones, once
    /// the known turn is taken off: within 4° of longitude and 1° of latitude (medians over 30 pairs), with an
    /// uncertainty reported for each.
    @Test func directionOfTravelDoesNotDependOnTheCamerasTurn() throws {
        let frames = try OverpassFrames.load(step: 3, count: 31)
        let turns = Self.randomTurns(frames.count, seed: 17)
        let turned = try zip(frames, turns).map { try SphereImage(EquirectangularRotation.rotated($0, by: $1)) }
        let plain = try frames.map { try SphereImage($0) }
        let estimator = MotionEstimator()
        var longitudes: [Double] = []
        var latitudes: [Double] = []
        for i in 0..<(frames.count - 1) {
            let a = try #require(estimator.motion(from: turned[i], to: turned[i + 1]))
            let b = try #require(estimator.motion(from: plain[i], to: plain[i + 1]))
            guard let ta = a.travel, let tb = b.travel else { continue }
            #expect(a.travelUncertainty != nil && b.travelUncertainty != nil)
            let t = turns[i] * ta // into the unturned frame
            longitudes.append(
                abs(angleDifference(from: atan2(tb.x, tb.z) * 180 / .pi, to: atan2(t.x, t.z) * 180 / .pi)))
            latitudes.append(abs(asin(-t.y) - asin(-tb.y)) * 180 / .pi)
        }
        #expect(longitudes.count >= 27)
        #expect(median(longitudes) <= 4, "\(longitudes)")
        #expect(median(latitudes) <= 1, "\(latitudes)")
    }

    /// The real video as it is (every third frame): the camera is fixed to the car, which drives straight, and
    /// the car's interior and the distant scene stay put between frames: the rotations measured are near zero
    /// (what stays put is the camera's own, but the far field's too, and neither pulls the fit off).
    @Test func unturnedFramesGiveNearZeroRotations() throws {
        let images = try OverpassFrames.load(step: 3, count: 30).map { try SphereImage($0) }
        let estimator = MotionEstimator()
        let turns = try (0..<(images.count - 1)).map { i in
            try #require(estimator.motion(from: images[i], to: images[i + 1])).rotation.angle
        }
        #expect(median(turns) < 0.2, "\(turns)")
        #expect(turns.sorted()[turns.count * 9 / 10] < 0.5, "\(turns)")
    }

    /// `count` camera turns: yaw within ±40°, pitch and roll within ±5°, from `seed`.
    static func randomTurns(_ count: Int, seed: UInt64) -> [Rotation] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            Rotation.camera(
                yaw: Double.random(in: -40...40, using: &generator),
                pitch: Double.random(in: -5...5, using: &generator),
                roll: Double.random(in: -5...5, using: &generator))
        }
    }

    static func errors(patch: Bool) throws -> [Double] {
        let frames = try OverpassFrames.load(step: 3, count: 40)
        let turns = Self.randomTurns(frames.count, seed: 42)
        var turned = zip(frames, turns).map { EquirectangularRotation.rotated($0, by: $1) }
        if patch {
            let cover = frames[0]
            let start = cover.height * 6 / 10 * cover.stride
            for i in turned.indices {
                turned[i].bytes.replaceSubrange(start..<cover.bytes.count, with: cover.bytes[start...])
            }
        }
        let images = try turned.map { try SphereImage($0) }
        var errors: [Double] = []
        let estimator = MotionEstimator()
        for i in 0..<(images.count - 1) {
            let truth = turns[i + 1].transposed * turns[i]
            guard let m = estimator.motion(from: images[i], to: images[i + 1]) else {
                errors.append(180)
                continue
            }
            errors.append(m.error(against: truth))
        }
        return errors
    }
}

/// Frames of the real 360° video, scaled to 1024 × 512.
enum OverpassFrames {
    static let path = TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")

    static func load(step: Int, count: Int) throws -> [PixelBuffer] {
        let reader = try VideoFrameReader(URL(fileURLWithPath: path))
        reader.outputSize = (1024, 512)
        var frames: [PixelBuffer] = []
        var n = 0
        while frames.count < count, let (_, pixels) = try reader.nextFrame() {
            if n % step == 0 { frames.append(pixels) }
            n += 1
        }
        return frames
    }
}

/// The analysis picture made straight from a video's Y′CbCr frame is the one made from its RGBA: normalised luma
/// within 1.5 code values (mean absolute difference; swscale's area scaling against block means), colour statistics
/// within 1.5, and the motions measured between frames the same to 0.1° of rotation and 1° of travel.
@Suite struct SphereImageYUVTests {
    /// Real frames of the 2048-wide video reduced eight pixels at a time give every value the pixel-by-pixel loop
    /// gives, to the last bit: every level's luma, the colour blocks and the channel means.
    @Test func eightWideRowsAreThePixelByPixelOnes() throws {
        let reader = try VideoFrameReader(
            URL(fileURLWithPath: TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")))
        var compared = 0
        var k = 0
        while compared < 4, let (_, frame) = try reader.nextYUVFrame() {
            defer { k += 1 }
            guard k % 30 == 0 else { continue }
            let fast = try SphereImage(frame, eightWide: true)
            let plain = try SphereImage(frame, eightWide: false)
            #expect(fast.levels.count == plain.levels.count)
            // Compared first: on a mismatch, #expect(a == b) of two arrays works out their difference (megabytes).
            for (a, b) in zip(fast.levels, plain.levels) {
                let same = a.pixels == b.pixels
                #expect(same)
            }
            #expect(fast.colour == plain.colour)
            #expect(fast.channelMean == plain.channelMean)
            compared += 1
        }
        #expect(compared == 4)
    }

    @Test func yuvPicturesAreTheRGBAOnes() throws {
        let reader = try VideoFrameReader(
            URL(fileURLWithPath: TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")))
        var frames: [YUVFrame] = []
        var k = 0
        while frames.count < 6, let (_, frame) = try reader.nextYUVFrame() {
            if k % 4 == 0 { frames.append(frame) }
            k += 1
        }
        #expect(frames.count == 6 && frames[0].width == 2048)
        let fromYUV = try frames.map { try SphereImage($0) }
        let fromRGBA = try frames.map { try SphereImage($0.rgba()) }
        for (a, b) in zip(fromYUV, fromRGBA) {
            #expect(a.width == 1024 && b.width == 1024)
            let luma =
                zip(a.levels[0].pixels, b.levels[0].pixels).map { Double(abs($0 - $1)) }.reduce(0, +)
                / Double(a.levels[0].pixels.count)
            #expect(luma < 1.5, "\(luma)")
            let meanDifference = a.channelMean - b.channelMean
            let largest = max(abs(meanDifference.x), abs(meanDifference.y), abs(meanDifference.z))
            #expect(largest < 1.5, "\(a.channelMean) \(b.channelMean)")
            var colourSum = 0.0
            for (p, q) in zip(a.colour, b.colour) {
                let d = p - q
                colourSum += Double(max(abs(d.x), abs(d.y), abs(d.z)))
            }
            let colour = colourSum / Double(a.colour.count)
            #expect(colour < 1.5, "\(colour)")
        }
        let estimator = MotionEstimator()
        for i in 0..<(frames.count - 1) {
            let a = try #require(estimator.motion(from: fromYUV[i], to: fromYUV[i + 1]))
            let b = try #require(estimator.motion(from: fromRGBA[i], to: fromRGBA[i + 1]))
            let between = (a.rotation * b.rotation.transposed).angle
            #expect(between < 0.1, "pair \(i): \(between)°")
            if let ta = a.travel, let tb = b.travel {
                #expect(acos(min(1, (ta * tb).sum())) * 180 / .pi < 1, "pair \(i)")
            }
        }
    }
}

/// Tone gains applied to a Y′CbCr frame give what they give applied to its RGBA: SSIM ≥ 0.995 and each channel's
/// mean within 1 code value, for an exposure step up and down and white-balance shifts.
@Suite struct ToneCorrectionYUVTests {
    @Test(arguments: [
        SIMD3(1.0, 1.0, 1.0), SIMD3(2.0, 2.0, 2.0), SIMD3(0.5, 0.5, 0.5), SIMD3(1.0, 0.95, 0.8),
        SIMD3(0.8, 0.95, 1.0), SIMD3(1.3, 0.9, 0.7)
    ])
    func gainsInYUVAreTheRGBAGains(gains: SIMD3<Double>) throws {
        let reader = try VideoFrameReader(
            URL(fileURLWithPath: TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")))
        let (_, frame) = try #require(try reader.nextYUVFrame())
        let tone = ToneCorrection(gains: gains)
        var rgba = try frame.rgba()
        tone.apply(to: &rgba)
        var yuv = frame
        tone.apply(to: &yuv)
        let b = try yuv.rgba()
        let ssim = ImageMetrics.ssim(rgba, b)
        let d = ImageMetrics.meanColour(rgba) - ImageMetrics.meanColour(b)
        #expect(ssim >= 0.995, "SSIM \(ssim)")
        #expect(abs(d.x) <= 1 && abs(d.y) <= 1 && abs(d.z) <= 1, "mean colour differs by \(d)")
        if tone.isIdentity { #expect(yuv == frame) }
    }
}
