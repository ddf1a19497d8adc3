// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseKit
import TestSupport
import Testing

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
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (Double(state >> 11) + 0.5) / Double(1 << 53)
        }
        mutating func gaussian(_ sigma: Double) -> Double {
            sigma * (-2 * Foundation.log(uniform())).squareRoot() * cos(2 * .pi * uniform())
        }
        mutating func within(_ r: Double) -> Double { (uniform() * 2 - 1) * r }
    }

    static let frames: [PixelBuffer] = {
        let reader = try! VideoFrameReader(
            URL(fileURLWithPath: TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")))
        reader.outputSize = (1024, 512)
        var frames: [PixelBuffer] = []
        var n = 0
        while frames.count < 36, let (_, pixels) = try! reader.nextFrame() {
            if n % 3 == 0 { frames.append(pixels) }
            n += 1
        }
        return frames
    }()

    /// A photo folder: photo k is `pictures[k]` at `positions[k]` with compass `directions[k]` (nil: none) and
    /// the GPano pitch and roll `levels[k]` (none when nil or not given).
    func photos(
        _ name: String, _ pictures: [PixelBuffer], positions: [Coordinate], directions: [Double?],
        levels: [(pitch: Double, roll: Double)?]? = nil
    ) throws -> String {
        let folder = dir.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (k, picture) in pictures.enumerated() {
            try GeotaggedPhoto.write(
                picture, to: folder.appendingPathComponent(String(format: "IMG_%04d.JPG", k)).path,
                latitude: positions[k].latitude, longitude: positions[k].longitude,
                direction: directions[k], dateTime: String(format: "2026:11:30 10:%02d:%02d", k / 60, k % 60),
                level: levels?[k])
        }
        return folder.path
    }

    func road(_ count: Int, spacing: Double = 2.5) -> [Coordinate] {
        (0..<count).map { Self.start.destination(bearing: Self.road, distance: spacing * Double($0)) }
    }

    func hyperlapse(_ folder: String, _ name: String, configure: (inout HyperlapseSettings) -> Void = { _ in })
        async throws -> (HyperlapseJob.Summary, [PixelBuffer])
    {
        var s = HyperlapseSettings()
        s.source = .local(directory: URL(fileURLWithPath: folder))
        s.spacing = 2.5
        s.size = FrameSize(width: 320, height: 180)
        s.crf = 12
        s.output = dir.appendingPathComponent(name + ".mp4")
        configure(&s)
        let summary = try await s.makeJob(overwrite: false).run(feed: try await s.makeFeed())
        let frames = try FFmpegReference.frames(
            summary.output.path, filters: "scale=in_color_matrix=bt709:in_range=limited", size: (320, 180))
        return (summary, frames)
    }

    /// Directions in the pictures are said in words, never as "-12° right": the warning's best guess of the walk
    /// read "-12° right of the centre column and -4° up".
    @Test func directionsAreSaidInWords() {
        #expect(StabilizationReport.fromCentreColumn(-12.3) == "12° left of the centre column")
        #expect(StabilizationReport.fromCentreColumn(541) == "179° left of the centre column")
        #expect(StabilizationReport.fromCentreColumn(180) == "opposite the centre column")
        #expect(StabilizationReport.fromCentreColumn(0.4) == "along the centre column")
        #expect(StabilizationReport.elevation(-4.2) == "4° down" && StabilizationReport.elevation(2.6) == "3° up")
        #expect(StabilizationReport.elevation(0.3) == "level")
    }

    /// Every photo turned by a random known yaw (±40°), pitch and roll (±5°), its compass 10° noisy (the same
    /// error in both sets): the stabilised poses of the turned photos are those of the unturned ones to within
    /// 0.7° of orientation in every frame, where the compasses alone turn the view by 10° and more between frames;
    /// the turn between frames is a few hundredths of a degree. What is left (0.47–0.60° here, nearly the same in
    /// every frame) is mostly roll about the direction of travel, which nothing but the upright prior holds: the
    /// mean of the photos' ±5° rolls. Each photo seen through its pose by one camera looking down the road, the
    /// turned and the unturned give SSIM 0.88 or more. (The two hyperlapses' cameras differ by design: the unturned
    /// photos are a camera fixed to the car, whose view follows the car's axis; the turned ones are not, and their
    /// view follows the track.)
    @Test func turnedPhotosGiveTheHyperlapseOfTheUnturnedOnes() async throws {
        let (differences, similarity, report) = try await turnedAndUnturned(levelSensor: false)
        #expect(differences.max()! < 0.7)
        #expect(similarity.min()! >= 0.88)
        #expect(median(similarity) >= 0.9)
        let before = try #require(report.jitterBefore)
        let after = try #require(report.jitterAfter)
        #expect(before.median > 10)
        #expect(after.median < 0.1 && after.p90 < 0.5, "\(after)")
        #expect(report.pairsMeasured == 29)
    }

    /// The same turned photos, each with the pitch and roll of its turn in GPano `PosePitchDegrees` and
    /// `PoseRollDegrees` as a camera's level sensor records them (0.5° noisy): the level no longer rests on the
    /// upright prior's mean, and every frame is within 0.35° and SSIM 0.9 of the unturned photos' poses
    /// (0.13–0.27° and SSIM 0.96–0.98 here, against 0.47–0.60° and 0.90–0.95 without the sensor).
    @Test func turnedPhotosWithALevelSensor() async throws {
        let (differences, similarity, report) = try await turnedAndUnturned(levelSensor: true)
        #expect(differences.max()! < 0.35)
        #expect(similarity.min()! >= 0.9)
        let after = try #require(report.jitterAfter)
        #expect(after.median < 0.1 && after.p90 < 0.5, "\(after)")
        #expect(report.pairsMeasured == 29)
    }

    /// The hyperlapses of 30 photos, turned and not; per frame, how far the turned one's pose (its known turn
    /// taken off) is from the unturned one's (degrees) and the SSIM of their frames; the turned one's report.
    func turnedAndUnturned(levelSensor: Bool) async throws -> ([Double], [Double], StabilizationReport) {
        var noise = Noise(state: 17)
        let pictures = Self.frames.prefix(30)
        let angles = pictures.indices.map { _ in
            (yaw: noise.within(40), pitch: noise.within(5), roll: noise.within(5))
        }
        let turns = angles.map { Rotation.camera(yaw: $0.yaw, pitch: $0.pitch, roll: $0.roll) }
        let positions = road(pictures.count)
        let facing = Self.road + 180 // the unturned frames' centre column
        let turned = zip(pictures, turns).map { EquirectangularRotation.rotated($0, by: $1) }
        let compassError = turns.map { _ in noise.gaussian(10) }
        let turnedCompass = zip(turns, compassError).map { t, e -> Double? in
            (Rotation.yaw(facing) * t).yawPitchRoll.yaw + e
        }
        let plainCompass = compassError.map { e -> Double? in facing + e }
        let levels = angles.map { t -> (pitch: Double, roll: Double)? in
            levelSensor ? (t.pitch + noise.gaussian(0.5), t.roll + noise.gaussian(0.5)) : nil
        }
        let name = levelSensor ? "level" : "turned"
        let a = try await hyperlapse(
            try photos(name, turned, positions: positions, directions: turnedCompass, levels: levels), name)
        let b = try await hyperlapse(
            try photos("plain", Array(pictures), positions: positions, directions: plainCompass), "plain")
        #expect(a.1.count == 30 && b.1.count == 30 && a.0.orientations.count == 30 && b.0.orientations.count == 30)
        var differences: [Double] = []
        var similarity: [Double] = []
        let projector = try Projector(width: 320, height: 180)
        for k in 0..<min(a.0.orientations.count, b.0.orientations.count) {
            // The turned photo's pose with its known turn taken off, against the unturned photo's pose.
            let o = a.0.orientations[k]
            let p = b.0.orientations[k]
            let turnedPose = Rotation.camera(yaw: o.heading, pitch: o.tilt, roll: o.roll) * turns[k].transposed
            differences.append(
                (turnedPose * Rotation.camera(yaw: p.heading, pitch: p.tilt, roll: p.roll).transposed).angle)
            let road = CameraPose(heading: Self.road, fov: 90)
            func pose(_ o: FrameOrientation) -> PanoramaPose {
                PanoramaPose(heading: o.heading, tilt: o.tilt, roll: o.roll)
            }
            similarity.append(
                ImageMetrics.ssim(
                    try projector.render(turned[k], pose: pose(o), camera: road),
                    try projector.render(pictures[pictures.startIndex + k], pose: pose(p), camera: road)))
        }
        print(
            """
            \(name) vs unturned: orientation differences \(differences.map { String(format: "%.2f", $0) }), SSIM \
            \(similarity.map { String(format: "%.2f", $0) })
            """
        )
        #expect(a.0.orientations.allSatisfy { $0.from.contains("level") } == levelSensor)
        return (differences, similarity, try #require(a.0.stabilization))
    }

    func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }

    /// Every photo yawed by 112° (the camera mounted turned), no compass: the direction of travel found in the
    /// pictures is the unturned photos' turned by 112° (within 10°), and every frame still looks down the road:
    /// of the unturned picture's level views every 10°, the one most like the frame looks the way the car drives.
    @Test func turnedMountIsFound() async throws {
        let pictures = Array(Self.frames.prefix(24))
        let positions = road(pictures.count)
        let yawed = pictures.map { EquirectangularRotation.rotated($0, by: Rotation.yaw(112)) }
        let none = [Double?](repeating: nil, count: pictures.count)
        let turned = try await hyperlapse(try photos("mount", yawed, positions: positions, directions: none), "mount")
        let plain = try await hyperlapse(
            try photos("mount-plain", pictures, positions: positions, directions: none), "mount-plain")
        let found = try #require(turned.0.stabilization?.mountLongitude)
        let reference = try #require(plain.0.stabilization?.mountLongitude)
        print("travel in the pictures: \(found)° yawed, \(reference)° as taken")
        #expect(abs(angleDifference(from: reference - 112, to: found)) < 10)
        #expect(abs(angleDifference(from: 180, to: reference)) < 15)
        let projector = try Projector(width: 320, height: 180)
        func small(_ p: PixelBuffer) throws -> PixelBuffer { try p.resized(width: 40, height: 22) }
        for (k, frame) in turned.1.enumerated() where k % 4 == 0 {
            var best = (heading: 0.0, psnr: -Double.infinity)
            for heading in stride(from: 0.0, to: 360, by: 10) {
                let view = try small(projector.render(pictures[k], camera: CameraPose(heading: heading, fov: 90)))
                let psnr = ImageMetrics.psnr(try small(frame), view)
                if psnr > best.psnr { best = (heading, psnr) }
            }
            #expect(abs(angleDifference(from: reference, to: best.heading)) <= 20, "frame \(k) looks \(best.heading)°")
        }
    }

    /// Photos as consumer cameras tag them: GPS with 3 m of noise, no compass; and ten photos within 2 m at a
    /// stop (the same picture). The direction of travel of every frame is within 5° of the road's, the stop
    /// gives no turn (its photos are dropped as stationary but for one), and the turn between frames is small.
    @Test func noisyGPSAndAStop() async throws {
        var noise = Noise(state: 23)
        var pictures = Array(Self.frames.prefix(30))
        var positions = road(pictures.count).map {
            $0.destination(bearing: 90, distance: noise.gaussian(3)).destination(
                bearing: 0, distance: noise.gaussian(3))
        }
        // The stop: after photo 15, ten more of the same picture within 2 m of it.
        let stop = positions[15]
        pictures.insert(contentsOf: [PixelBuffer](repeating: pictures[15], count: 10), at: 16)
        positions.insert(
            contentsOf: (0..<10).map { _ in
                stop.destination(bearing: noise.uniform() * 360, distance: noise.uniform() * 2)
            }, at: 16)
        let none = [Double?](repeating: nil, count: pictures.count)
        let (summary, _) = try await hyperlapse(
            try photos("noisy", pictures, positions: positions, directions: none), "noisy"
        ) {
            $0.spacing = 2
        }
        let report = try #require(summary.stabilization)
        let after = try #require(report.jitterAfter)
        print(
            """
            noisy GPS: travel \(summary.orientations.map { String(format: "%.1f", $0.travel) }); \
            \(report.stationaryDropped) stationary dropped; jitter \(after)
            """
        )
        for o in summary.orientations {
            #expect(abs(angleDifference(from: Self.road, to: o.travel)) < 5, "\(o.pano): \(o.travel)°")
        }
        #expect(
            summary.orientations.filter { $0.pano.hasPrefix("IMG_001") || $0.pano.hasPrefix("IMG_002") }.count <= 12)
        #expect(after.median < 0.5 && after.p90 < 2)
        // Frames are in capture order (never back).
        let order = summary.orientations.map(\.pano)
        #expect(order == order.sorted())
    }

    /// Exposure steps of ±1 EV and white-balance shifts every 8 photos: matched, the mean luminance of each
    /// frame relative to the same frame of the photos as taken (the scene's own changes of light, which here reach
    /// 10 % a frame under the overpasses, taken out) steps by at most 2 % between consecutive frames; unmatched
    /// (`--no-tone-match`) by 30 % and more at each step.
    @Test func toneStepsAreMatched() async throws {
        let originals = Array(Self.frames.prefix(32))
        let pictures = originals.enumerated().map { k, p -> PixelBuffer in
            // Gains that never clip (a clipped sky cannot be matched back): 1, ½, 1 with a warm cast, ½ with a cool
            // one.
            let block = k / 8
            let gain = [1.0, 0.5, 1.0, 0.5][block]
            let balance: SIMD3<Double> = [SIMD3(1, 1, 1), SIMD3(1, 1, 1), SIMD3(1, 0.95, 0.8), SIMD3(0.8, 0.95, 1)][
                block]
            var out = p
            out.bytes.withUnsafeMutableBufferPointer { b in
                for i in stride(from: 0, to: b.count, by: 4) {
                    for c in 0..<3 {
                        let v: Double = Double(b[i + c]) * gain * balance[c]
                        b[i + c] = UInt8(min(255, v.rounded()))
                    }
                }
            }
            return out
        }
        let positions = road(pictures.count)
        let none = [Double?](repeating: nil, count: pictures.count)
        let folder = try photos("tone", pictures, positions: positions, directions: none)
        // The direction of travel given (the mount's, 180° from the centre column), so that the three runs are
        // posed alike and what differs between their frames is the tone alone.
        let matched = try await hyperlapse(folder, "tone") { $0.forward = 180 }.1
        let unmatched = try await hyperlapse(folder, "tone-off") {
            $0.toneMatch = false
            $0.forward = 180
        }.1
        let scene = try await hyperlapse(
            try photos("tone-scene", originals, positions: positions, directions: none), "tone-scene"
        ) {
            $0.toneMatch = false
            $0.forward = 180
        }.1
        func luminance(_ f: PixelBuffer) -> Double {
            var s = 0.0
            for i in stride(from: 0, to: f.bytes.count, by: 4) {
                let r = Double(f.bytes[i])
                let g = Double(f.bytes[i + 1])
                let bl = Double(f.bytes[i + 2])
                s += 0.2126 * r + 0.7152 * g + 0.0722 * bl
            }
            return s / Double(f.width * f.height)
        }
        let natural = scene.map(luminance)
        func steps(_ frames: [PixelBuffer]) -> [Double] {
            let relative = zip(frames, natural).map { luminance($0) / $1 }
            var out: [Double] = []
            for k in 1..<relative.count {
                let step: Double = abs(relative[k] / relative[k - 1] - 1)
                out.append(step)
            }
            return out
        }
        let a = steps(matched)
        let b = steps(unmatched)
        print(
            """
            tone: steps matched \(a.map { String(format: "%.3f", $0) }), unmatched \
            \(b.map { String(format: "%.3f", $0) })
            """
        )
        #expect(a.max()! <= 0.02)
        #expect(b[7] > 0.3 && b[15] > 0.3 && b[23] > 0.3)
    }

    /// `--pano-heading` for your photos without a compass: every photo that has none is posed facing it
    /// (the first one anchors the stabilised headings with it); a photo with a compass keeps its own.
    @Test func panoHeadingPosesPhotosWithoutACompass() async throws {
        let pictures = Array(Self.frames.prefix(4))
        let folder = try photos(
            "panoheading", pictures, positions: road(4, spacing: 10), directions: [nil, nil, 33, nil])
        var s = HyperlapseSettings()
        s.source = .local(directory: URL(fileURLWithPath: folder))
        s.panoHeading = 123
        s.spacing = 10
        s.output = dir.appendingPathComponent("ph.mp4")
        let feed = try await s.makeFeed()
        let stops = try await feed.lookup(0..<feed.pointCount).compactMap { $0 }
        #expect(stops.map(\.pose.heading) == [123, 123, 33, 123])
        #expect(stops.map(\.headingUncertainty) == [nil, nil, 10, nil])
    }

    /// A 360° video that stops for a second (the car at a light: 30 identical frames): the stabiliser drops those
    /// frames but one, the others render, and the direction of travel is still the road's.
    @Test func stationaryVideoFramesAreDropped() async throws {
        let path = dir.appendingPathComponent("stop.mp4").path
        var settings = VideoEncoderSettings(width: 1024, height: 512, fps: 30)
        settings.crf = 16
        let encoder = try VideoEncoder(url: URL(fileURLWithPath: path), container: .mp4, settings: settings)
        let frames = Self.frames.prefix(20)
        for (k, f) in frames.enumerated() { try encoder.append(f, count: k == 10 ? 31 : 3) }
        try encoder.finish()
        var s = HyperlapseSettings()
        s.source = .video(file: URL(fileURLWithPath: path))
        s.frameStep = 3
        s.size = FrameSize(width: 320, height: 180)
        s.output = dir.appendingPathComponent("stop-out.mp4")
        let summary = try await s.makeJob(overwrite: false).run(feed: try await s.makeFeed())
        let report = try #require(summary.stabilization)
        // 88 frames of video, every third: 30 stops, 10 of them (the light) the same picture as the one before.
        #expect(summary.routePoints == 30)
        #expect(report.stationaryDropped == 10, "\(report)")
        #expect(summary.frames == 20)
        let mount = try #require(report.mountLongitude)
        #expect(abs(angleDifference(from: 180, to: mount)) < 15)
    }
}
