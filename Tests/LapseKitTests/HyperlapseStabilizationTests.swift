// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseKit
import Testing
import TestSupport

/// The stabiliser on real imagery: frames of the real 360° video (every third frame, about 2.5 m apart at
/// highway speed) written as a folder of your own 360° photos, with GPS in their EXIF as consumer cameras write
/// it, along a straight road heading 60°. In the video the camera faces back at the driver: the direction of
/// travel is 180° from the centre column, so the unturned frames' centre faces 240°.
@Suite(.serialized) struct HyperlapseStabilizationTests {
    let dir = TestData.scratchDirectory("stabilize")
    static let road = 60.0
    static let start = Coordinate(uncheckedLatitude: 52.44, longitude: 6.89)

    /// Deterministic noise.
    struct Noise {
        var state: UInt64
        mutating func uniform() -> Double {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return (Double(state >> 11) + 0.5) / Double(1 << 53)
        }
        mutating func gaussian(_ sigma: Double) -> Double { sigma * (-2 * Foundation.log(uniform())).squareRoot() * cos(2 * .pi * uniform()) }
        mutating func within(_ r: Double) -> Double { (uniform() * 2 - 1) * r }
    }

    static let frames: [PixelBuffer] = {
        let reader = try! VideoFrameReader(TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"))
        reader.outputSize = (1024, 512)
        var frames: [PixelBuffer] = []
        var n = 0
        while frames.count < 36, let (_, pixels) = try! reader.nextFrame() {
            if n % 3 == 0 { frames.append(pixels) }
            n += 1
        }
        return frames
    }()

    /// A photo folder: photo k is `pictures[k]` at `positions[k]` with compass `directions[k]` (nil: none).
    func photos(_ name: String, _ pictures: [PixelBuffer], positions: [Coordinate], directions: [Double?]) throws -> String {
        let folder = dir.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (k, picture) in pictures.enumerated() {
            try GeotaggedPhoto.write(picture, to: folder.appendingPathComponent(String(format: "IMG_%04d.JPG", k)).path,
                                     latitude: positions[k].latitude, longitude: positions[k].longitude,
                                     direction: directions[k], dateTime: String(format: "2026:11:30 10:%02d:%02d", k / 60, k % 60))
        }
        return folder.path
    }

    func road(_ count: Int, spacing: Double = 2.5) -> [Coordinate] {
        (0..<count).map { Self.start.destination(bearing: Self.road, distance: spacing * Double($0)) }
    }

    func hyperlapse(_ folder: String, _ name: String, configure: (inout HyperlapseSettings) -> Void = { _ in })
        async throws -> (HyperlapseJob.Summary, [PixelBuffer]) {
        var s = HyperlapseSettings()
        s.source = "local:" + folder
        s.spacing = 2.5
        s.size = "320x180"
        s.crf = 12
        s.output = dir.appendingPathComponent(name + ".mp4").path
        configure(&s)
        let summary = try await s.makeJob(overwrite: false).run(feed: try await s.makeFeed())
        let frames = try FFmpegReference.frames(summary.output, filters: "scale=in_color_matrix=bt709:in_range=limited", size: (320, 180))
        return (summary, frames)
    }

    /// Every photo turned by a random known yaw (±40°), pitch and roll (±5°), its compass 10° noisy (the same
    /// error in both sets): the stabilised hyperlapse of the turned photos is that of the unturned ones to within
    /// a degree and a half of orientation in every frame (what 30 frames of 10° compasses, single-pair
    /// directions of travel and ±5° tilts leave of the absolute orientation), where the compasses alone turn the
    /// view by 10° and more between frames; the turn between frames is a few hundredths of a degree.
    @Test func turnedPhotosGiveTheHyperlapseOfTheUnturnedOnes() async throws {
        var noise = Noise(state: 17)
        let pictures = Self.frames.prefix(30)
        let turns = pictures.indices.map { _ in
            Rotation.camera(yaw: noise.within(40), pitch: noise.within(5), roll: noise.within(5))
        }
        let positions = road(pictures.count)
        let facing = Self.road + 180   // the unturned frames' centre column
        let turned = zip(pictures, turns).map { EquirectangularRotation.rotated($0, by: $1) }
        let compassError = turns.map { _ in noise.gaussian(10) }
        let turnedCompass = zip(turns, compassError).map { t, e -> Double? in (Rotation.yaw(facing) * t).yawPitchRoll.yaw + e }
        let plainCompass = compassError.map { e -> Double? in facing + e }
        let a = try await hyperlapse(try photos("turned", turned, positions: positions, directions: turnedCompass), "turned")
        let b = try await hyperlapse(try photos("plain", Array(pictures), positions: positions, directions: plainCompass), "plain")
        #expect(a.1.count == 30 && b.1.count == 30 && a.0.orientations.count == 30 && b.0.orientations.count == 30)
        var differences: [Double] = [], similarity: [Double] = []
        for k in 0..<min(a.0.orientations.count, b.0.orientations.count) {
            // The turned photo's pose with its known turn taken off, against the unturned photo's pose.
            let o = a.0.orientations[k], p = b.0.orientations[k]
            let turnedPose = Rotation.camera(yaw: o.heading, pitch: o.tilt, roll: o.roll) * turns[k].transposed
            differences.append((turnedPose * Rotation.camera(yaw: p.heading, pitch: p.tilt, roll: p.roll).transposed).angle)
            similarity.append(ImageMetrics.ssim(a.1[k], b.1[k]))
        }
        print("turned vs unturned: orientation differences \(differences.map { String(format: "%.2f", $0) }), SSIM \(similarity.map { String(format: "%.2f", $0) })")
        #expect(differences.max()! < 1.5)
        #expect(similarity.min()! >= 0.65)
        #expect(median(similarity) >= 0.75)
        let report = try #require(a.0.stabilization)
        let before = try #require(report.jitterBefore), after = try #require(report.jitterAfter)
        #expect(before.median > 10)
        #expect(after.median < 0.1 && after.p90 < 0.5, "\(after)")
        #expect(report.pairsMeasured == 29)
    }

    func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
}
