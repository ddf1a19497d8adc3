// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseRender
import TestSupport
import Testing

@Suite("Camera paths")
struct CameraPathTests {
    static let start = try! Coordinate(latitude: 52.0, longitude: 5.0)

    /// A route through `legs` of (bearing, metres), resampled every 5 m (LapseGeo's smoothing, 20 m).
    static func frames(_ legs: [(Double, Double)], elevation: Double? = nil) throws -> [RoutePoint] {
        var points = [TrackPoint(start, elevation: elevation)]
        for (bearing, metres) in legs {
            points.append(
                TrackPoint(
                    points.last!.coordinate.destination(bearing: bearing, distance: metres), elevation: elevation))
        }
        return try Route(points: points).resampled(every: 5)
    }

    /// Compass bearing from `a` to `b` on a local flat approximation (fine over a few hundred metres),
    /// independent of LapseGeo.
    static func flatBearing(from a: Coordinate, to b: Coordinate) -> Double {
        let dx = (b.longitude - a.longitude) * cos(a.latitude * .pi / 180)
        let dy = b.latitude - a.latitude
        let d = atan2(dx, dy) * 180 / .pi
        return d < 0 ? d + 360 : d
    }

    static func turn(_ a: Double, _ b: Double) -> Double {
        var d = (b - a).truncatingRemainder(dividingBy: 360)
        if d > 180 { d -= 360 }
        if d <= -180 { d += 360 }
        return d
    }

    @Test("along a right-angle corner the heading turns through 90° smoothly, never backwards")
    func rightAngleCorner() throws {
        let frames = try Self.frames([(90, 300), (0, 300)]) // east, then north: a left turn
        let poses = try CameraPath(CameraScript()).poses(for: frames)
        #expect(poses.count == frames.count)
        #expect(abs(Self.turn(poses.first!.heading, 90)) < 0.5)
        #expect(abs(Self.turn(poses.last!.heading, 0)) < 0.5)
        var total = 0.0
        var steps: [Double] = []
        for (a, b) in zip(poses, poses.dropFirst()) {
            let step = Self.turn(a.heading, b.heading)
            #expect(step <= 0.001, "turned right by \(step)° on a left-hand corner")
            // 90° over the 50 m look-ahead at most: 9° a 5 m frame.
            #expect(step >= -9.5, "jumped \(step)° in one 5 m frame")
            total += step
            steps.append(step)
        }
        // Smooth: the turn rate itself changes gradually (no kinks).
        for (a, b) in zip(steps, steps.dropFirst()) {
            #expect(abs(b - a) <= 2.5, "turn rate jumped from \(a)° to \(b)°")
        }
        #expect(abs(total + 90) < 0.5, "turned \(total)° in all")
        for (pose, frame) in zip(poses, frames) {
            #expect(
                abs(Self.turn(frame.heading, pose.heading)) <= 90, "faces backwards at \(frame.distanceAlongRoute) m")
            #expect((-0.5...90.5).contains(pose.heading > 180 ? pose.heading - 360 : pose.heading))
        }
        // The turn spreads over more than the look-ahead: at least 10 frames (50 m) change the heading.
        #expect(zip(poses, poses.dropFirst()).filter { abs(Self.turn($0.heading, $1.heading)) > 0.5 }.count >= 10)
    }

    @Test("at a U-turn the camera never looks backwards")
    func uTurn() throws {
        let frames = try Self.frames([(90, 200), (270, 200)])
        let poses = try CameraPath(CameraScript(lookAhead: 80)).poses(for: frames)
        for (pose, frame) in zip(poses, frames) {
            #expect(abs(Self.turn(frame.heading, pose.heading)) <= 90)
        }
    }

    @Test(
        "a heading offset turns the camera relative to the road",
        arguments: [(-90.0, 0.0), (90, 180), (180, 270), (45, 135)])
    func offset(offset: Double, expected: Double) throws {
        let frames = try Self.frames([(90, 200)])
        let poses = try CameraPath(CameraScript(mode: .route(offset: offset))).poses(for: frames)
        for p in poses { #expect(abs(Self.turn(p.heading, expected)) < 0.5) }
    }

    @Test("look-at headings point at the target within 0.5°, pitch from elevation")
    func lookAt() throws {
        let frames = try Self.frames([(90, 400), (0, 200)], elevation: 10)
        let target = Self.start.destination(bearing: 60, distance: 250)
        let script = CameraScript(mode: .lookAt(target: target, elevation: 60))
        let poses = try CameraPath(script).poses(for: frames)
        for (pose, frame) in zip(poses, frames) {
            let want = Self.flatBearing(from: frame.coordinate, to: target)
            #expect(abs(Self.turn(pose.heading, want)) < 0.5, "heading \(pose.heading), target at \(want)")
            let d = frame.coordinate.distance(to: target)
            let wantPitch = atan2(60 - (10 + 2.5), d) * 180 / .pi
            #expect(abs(pose.pitch - wantPitch) < 0.01)
        }
        // Without elevations the pitch is the script's.
        let level = try CameraPath(CameraScript(mode: .lookAt(target: target, elevation: nil), pitch: -5))
            .poses(for: try Self.frames([(90, 100)]))
        #expect(level.allSatisfy { $0.pitch == -5 })
    }

    @Test("keyframes 350° → 10° turn 20° through north, not 340° the long way")
    func keyframesShortestArc() throws {
        let frames = try Self.frames([(90, 200)])
        for (from, to) in [(350.0, 10.0), (10, 350)] {
            let script = CameraScript(
                shots: [Shot(start: .frame(0), mode: .keyframes)],
                keyframes: [Keyframe(.frame(0), heading: from), Keyframe(.frame(20), heading: to)])
            let poses = try CameraPath(script).poses(for: frames)
            #expect(abs(Self.turn(poses[0].heading, from)) < 1e-9)
            #expect(abs(Self.turn(poses[10].heading, 0)) < 1e-9) // halfway is north
            #expect(abs(Self.turn(poses[20].heading, to)) < 1e-9)
            #expect(abs(Self.turn(poses[30].heading, to)) < 1e-9) // holds after the last keyframe
            var total = 0.0
            for k in 0..<20 {
                let step = Self.turn(poses[k].heading, poses[k + 1].heading)
                #expect(step * (to == 10 ? 1 : -1) >= 0)
                total += step
            }
            #expect(abs(abs(total) - 20) < 1e-9)
            // Eased: slow at both ends, fastest in the middle.
            #expect(
                abs(Self.turn(poses[0].heading, poses[1].heading)) < abs(Self.turn(poses[9].heading, poses[10].heading))
            )
        }
    }

    /// Scripts whose poses depend on frames far ahead: keyframes of different properties, unsorted, at frame
    /// numbers and distances, beyond the end of the route, shots with transitions.
    static let settlingScripts: [CameraScript] = {
        var mixed = CameraScript(
            lookAhead: 40, shots: [Shot(start: .frame(0), mode: .keyframes)],
            keyframes: [
                Keyframe(.frame(0), heading: 0, easing: .linear), Keyframe(.frame(50), pitch: 0),
                Keyframe(.frame(115), heading: 90)
            ])
        mixed.transitionFrames = 0
        var unsorted = CameraScript(
            shots: [Shot(start: .frame(0), mode: .keyframes)],
            keyframes: [
                Keyframe(.frame(115), heading: 90), Keyframe(.frame(99), heading: 45), Keyframe(.frame(0), heading: 0)
            ])
        unsorted.lookAhead = 0
        let beyond = CameraScript(keyframes: [
            Keyframe(.distance(120), pitch: -10), Keyframe(.frame(90), pitch: 10, fov: 70),
            Keyframe(.distance(5000), pitch: 0, fov: 90), Keyframe(.frame(30), fov: 100)
        ])
        let shots = CameraScript(
            lookAhead: 30, transitionFrames: 12,
            shots: [
                Shot(start: .frame(0), mode: .route(offset: 0)), Shot(start: .distance(200), mode: .fixed(heading: 45)),
                Shot(start: .frame(100), mode: .route(offset: 30))
            ])
        return [CameraScript(lookAhead: 40), mixed, unsorted, beyond, shots]
    }()

    /// A route looked up piece by piece, as the hyperlapse does it: after each piece the newly settled poses are
    /// computed from the frames known so far (`poses(for:in:)` of just those frames); all of them together equal
    /// the poses of the whole path, and no pose is settled beyond the look-ahead.
    @Test("poses settle as the route is looked up piece by piece", arguments: 0..<5)
    func settledPrefixes(script index: Int) throws {
        let script = Self.settlingScripts[index]
        let frames = try Self.frames([(90, 300), (0, 300), (300, 200)]) // a frame every 5 m, two corners
        let path = try CameraPath(script)
        let whole = path.poses(for: frames)
        var streamed: [CameraPose] = []
        var known = 0
        var generator = SystemRandomNumberGenerator()
        while streamed.count < frames.count {
            known = min(frames.count, known + Int.random(in: 1...23, using: &generator))
            let prefix = Array(frames[..<known])
            let complete = known == frames.count
            let settled = path.settledCount(of: prefix, complete: complete)
            #expect(settled >= streamed.count, "settled frames never go back")
            if !complete && settled > 0 {
                #expect(
                    prefix[settled - 1].distanceAlongRoute + script.lookAhead < prefix[known - 1].distanceAlongRoute)
            }
            streamed += path.poses(for: prefix, in: streamed.count..<settled)
        }
        #expect(streamed.count == whole.count)
        for (i, (a, b)) in zip(streamed, whole).enumerated() {
            #expect(
                abs(angleDifference(from: a.heading, to: b.heading)) < 1e-9 && abs(a.pitch - b.pitch) < 1e-9
                    && abs(a.fov - b.fov) < 1e-9, "script \(index), frame \(i): \(a) vs \(b)")
        }
    }

    /// Keyframes beyond the end of the route hold every pose after the last key placed until the route is complete;
    /// without keyframes only the look-ahead (40 m = 8 frames at 5 m) holds frames back.
    @Test func settlingWaitsForTheNextKeyframeOnly() throws {
        let frames = try Self.frames([(90, 600)])
        let plain = try CameraPath(CameraScript(lookAhead: 40))
        #expect(plain.settledCount(of: Array(frames[..<60]), complete: false) == 60 - 9)
        let keyed = try CameraPath(
            CameraScript(
                lookAhead: 40,
                keyframes: [
                    Keyframe(.frame(10), pitch: 0),
                    Keyframe(.distance(5000), pitch: 20)
                ]))
        #expect(keyed.settledCount(of: Array(frames[..<60]), complete: false) == 10)
        #expect(keyed.settledCount(of: Array(frames[..<60]), complete: true) == 60)
    }

    @Test("keyframes by distance, pitch and fov tracks with easing")
    func keyframesByDistance() throws {
        let frames = try Self.frames([(90, 200)]) // a frame every 5 m
        let script = CameraScript(keyframes: [
            Keyframe(.distance(50), pitch: 0, fov: 90, easing: .linear),
            Keyframe(.distance(100), pitch: -20, fov: 60)
        ])
        let poses = try CameraPath(script).poses(for: frames)
        #expect(poses[5].pitch == 0 && poses[0].pitch == 0) // 25 m: before the first key
        #expect(abs(poses[15].pitch + 10) < 1e-9) // 75 m: halfway, linear
        #expect(abs(poses[15].fov - 75) < 1e-9)
        #expect(abs(poses[20].pitch + 20) < 1e-9 && poses[30].fov == 60)
    }

    @Test("switching modes is eased over the transition, never a jump")
    func easedSwitch() throws {
        let frames = try Self.frames([(90, 800)])
        let target = Self.start.destination(bearing: 0, distance: 2000) // far north: look-at ≈ 0°
        let script = CameraScript(
            transitionFrames: 30,
            shots: [
                Shot(start: .frame(0), mode: .route(offset: 0)),
                Shot(start: .frame(40), mode: .fixed(heading: 200)),
                Shot(start: .distance(400), mode: .lookAt(target: target, elevation: nil))
            ])
        let poses = try CameraPath(script).poses(for: frames)
        #expect(abs(Self.turn(poses[39].heading, 90)) < 0.5)
        #expect(abs(Self.turn(poses[70].heading, 200)) < 1e-9)
        var maxStep = 0.0
        for (a, b) in zip(poses, poses.dropFirst()) { maxStep = max(maxStep, abs(Self.turn(a.heading, b.heading))) }
        // Ease-in-out's steepest slope is 1.5: 110° over 30 frames → ≤ 5.5° a frame; 200° → 0° is a 160° turn.
        #expect(maxStep <= 160.0 / 30 * 1.5 + 0.5, "largest step \(maxStep)°")
        let lookAtStart = 80 // 400 m
        #expect(
            abs(
                Self.turn(
                    poses[lookAtStart + 30].heading,
                    Self.flatBearing(from: frames[lookAtStart + 30].coordinate, to: target))) < 0.5)
        // 200° → ~20° (the target is north-west by then) goes the short way, through west.
        for k in lookAtStart..<(lookAtStart + 30) {
            let h = poses[k].heading
            #expect(h >= 199 || h <= 1, "went the long way: \(h)° at frame \(k)")
        }
    }

    /// A camera file larger than a camera file can be is refused before it is read (issue #42: a million
    /// keyframes took 3.1 GB); one just under the limit is read.
    @Test func aCameraFileHasALimit() throws {
        let dir = TestData.scratchDirectory("camera-limit")
        func file(keyframes n: Int) throws -> String {
            let lines = (0..<n).map { "{\"frame\": \($0), \"heading\": \($0 % 360)}" }
            let json =
                "{\"shots\": [{\"frame\": 0, \"mode\": \"keyframes\"}], \"keyframes\": ["
                + lines.joined(separator: ",") + "]}"
            let path = dir.appendingPathComponent("k\(n).json").path
            try Data(json.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        let big = try file(keyframes: 40_000)
        #expect { try CameraScript.read(URL(fileURLWithPath: big)) } throws: { error in
            let e = error as? LapseError
            return e?.code == .invalidInput && e?.subject == big
                && e?.reason.hasSuffix("bytes, more than a camera file holds (1048576 bytes, about 30 000 keyframes)")
                    == true
        }
        let fits = try file(keyframes: 30_000)
        #expect(try CameraScript.read(URL(fileURLWithPath: fits)).keyframes.count == 30_000)
    }

    @Test("camera files: JSON round trip and readable errors")
    func cameraFile() throws {
        let json = """
            {"fov": 80, "pitch": -3, "lookAhead": 40, "transitionFrames": 15,
             "shots": [{"frame": 0, "mode": "route", "offset": -90},
                       {"distance": 500, "mode": "lookAt", "target": "48.8584,2.2945", "elevation": 330},
                       {"frame": 300, "mode": "fixed", "heading": 270},
                       {"frame": 400, "mode": "keyframes"}],
             "keyframes": [{"frame": 400, "heading": 350}, {"frame": 430, "heading": 10, "easing": "linear"},
                           {"distance": 120.5, "fov": 60, "pitch": 10}]}
            """
        let script = try CameraScript.decode(Data(json.utf8))
        #expect(
            script.fov == 80 && script.lookAhead == 40 && script.transitionFrames == 15 && script.cameraHeight == 2.5)
        #expect(script.shots.count == 4 && script.keyframes.count == 3)
        #expect(script.shots[1].start == .distance(500))
        #expect(
            script.shots[1].mode
                == .lookAt(target: try Coordinate(latitude: 48.8584, longitude: 2.2945), elevation: 330))
        #expect(script.keyframes[1].easing == .linear && script.keyframes[0].easing == .easeInOut)
        let again = try CameraScript.decode(try JSONEncoder().encode(script))
        #expect(again == script)
        #expect(try CameraScript.decode(Data("{}".utf8)) == CameraScript())

        let bad: [(String, String)] = [
            (#"{"shots": [{"frame": 0, "mode": "orbit"}]}"#, "unknown mode 'orbit'"),
            (#"{"keyframes": [{"heading": 10}]}"#, "frame"),
            (#"{"keyframes": [{"frame": 3}]}"#, "sets no heading"),
            (#"{"fov": 190}"#, "fov"),
            (#"{"keyframes": [{"frame": 1, "pitch": 100}]}"#, "pitch"),
            (#"{"shots": [{"mode": "lookAt", "target": "91,0"}]}"#, "latitude"),
            (#"{"shots": []}"#, "at least one shot"),
            ("not json", "not valid JSON"),
            (#"{"fovv": 80}"#, "unknown key 'fovv'"),
            (#"{"keyframes": [{"frame": 1, "headng": 3}]}"#, "unknown key 'keyframes[0].headng'"),
            // Finite but out of range: would overflow or stall a render.
            (#"{"cameraHeight": 1e308}"#, "cameraHeight must be -1000…10000 metres"),
            (#"{"lookAhead": 1e308}"#, "lookAhead must be 0…10000000 metres"),
            (#"{"transitionFrames": 100000000000}"#, "transitionFrames must be 0…100000"),
            (
                #"{"keyframes": [{"frame": 0, "heading": 1e308}, {"frame": 5, "heading": -1e308}]}"#,
                "keyframe 1: heading must be -36000…36000"
            ),
            (#"{"shots": [{"mode": "fixed", "heading": -1e308}]}"#, "shot 1: heading must be"),
            (#"{"shots": [{"mode": "route", "offset": 4e4}]}"#, "shot 1: offset must be")
        ]
        for (text, words) in bad {
            #expect {
                try CameraScript.decode(Data(text.utf8), source: "cam.json")
            } throws: { error in
                guard let e = error as? LapseError else { return false }
                return e.code == .invalidInput && e.subject == "cam.json" && e.description.contains(words)
            }
        }
    }
}
