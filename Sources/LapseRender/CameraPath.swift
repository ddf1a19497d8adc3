// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo

/// Turns a ``CameraScript`` into one ``CameraPose`` per frame, given where each frame is taken.
///
/// - Route mode: the circular mean (LapseGeo's `circularMean`) of the headings of the frames within
///   ``CameraScript/lookAhead`` metres ahead, plus the shot's offset. The frames' own headings are the route's
///   smoothed direction of travel (``RoutePoint/heading``), so the camera starts turning before a corner and has
///   turned by its end; it never looks more than 90° away from the direction of travel (at a U-turn it keeps
///   the direction of travel).
/// - Look-at mode: heading = initial great-circle bearing from the frame's position to the target
///   (`Coordinate.initialBearing(to:)`); pitch = atan2(target elevation − (frame elevation + camera height),
///   distance) when both elevations are known.
/// - Keyframes: positions by frame or by distance (a distance falls between the frames around it); between
///   two keyframes of a property the value follows the earlier keyframe's easing, headings along the shortest arc.
///   Before the first keyframe and after the last the value holds.
/// - A switch to the next shot blends from the previous shot's pose to the new one over
///   ``CameraScript/transitionFrames`` frames with ease-in-out, headings along the shortest arc.
public struct CameraPath: Sendable {
    /// The shots and keyframes the path follows.
    public let script: CameraScript

    /// - Throws: ``LapseError`` `.invalidInput` when the script's values are out of range
    ///   (see ``CameraScript/validate(source:)``).
    public init(_ script: CameraScript) throws {
        try script.validate()
        self.script = script
    }

    /// One pose per frame; `frames[i]` is where frame `i` is taken (distances along the route must not decrease).
    /// Roll is 0. Headings are in [0, 360).
    /// - Parameters:
    ///   - frames: where each frame is taken, in order.
    ///   - range: only the poses of these frames (default all); the result has `range.count` poses.
    /// - Returns: the poses of `range`'s frames, in order.
    public func poses(for frames: [RoutePoint], in range: Range<Int>? = nil) -> [CameraPose] {
        let range = range ?? frames.indices
        guard !frames.isEmpty, !range.isEmpty else { return [] }
        let resolver = PositionResolver(frames: frames)
        let ahead = Self.headingsAhead(
            frames, lookAhead: script.lookAhead, from: range.lowerBound, to: range.upperBound)
        let headingTrack = Track(
            script.keyframes.compactMap { k in k.heading.map { (resolver.index(k.position), $0, k.easing) } },
            circular: true)
        let pitchTrack = Track(
            script.keyframes.compactMap { k in k.pitch.map { (resolver.index(k.position), $0, k.easing) } },
            circular: false)
        let fovTrack = Track(
            script.keyframes.compactMap { k in k.fov.map { (resolver.index(k.position), $0, k.easing) } },
            circular: false)
        var shots = script.shots.enumerated().map { (i, s) in
            (start: i == 0 ? 0 : resolver.index(s.start), mode: s.mode)
        }
        shots.sort { $0.start < $1.start }
        shots[0].start = 0
        let transition = Double(script.transitionFrames)

        return range.map { i in
            let x = Double(i)
            let basePitch = pitchTrack.value(at: x) ?? script.pitch
            func modePose(_ mode: CameraMode) -> (heading: Double, pitch: Double) {
                switch mode {
                case .route(let offset):
                    return (ahead[i - range.lowerBound] + offset, basePitch)
                case .lookAt(let target, let elevation):
                    let here = frames[i]
                    let distance = here.coordinate.distance(to: target)
                    guard distance > 0.01 else { return (ahead[i - range.lowerBound], basePitch) }
                    var pitch = basePitch
                    if let elevation, let ground = here.elevation {
                        pitch = atan2(elevation - (ground + script.cameraHeight), distance) * 180 / .pi
                    }
                    return (here.coordinate.initialBearing(to: target), pitch)
                case .fixed(let heading):
                    return (heading, basePitch)
                case .keyframes:
                    return (headingTrack.value(at: x) ?? ahead[i - range.lowerBound], basePitch)
                }
            }
            func shotPose(_ k: Int) -> (heading: Double, pitch: Double) {
                let pose = modePose(shots[k].mode)
                guard k > 0, transition > 0, x - shots[k].start < transition else { return pose }
                let t = Easing.easeInOut((x - shots[k].start) / transition)
                let previous = shotPose(k - 1)
                return (
                    previous.heading + angleDifference(from: previous.heading, to: pose.heading) * t,
                    previous.pitch + (pose.pitch - previous.pitch) * t
                )
            }
            let active = shots.lastIndex { $0.start <= x } ?? 0
            let pose = shotPose(active)
            return CameraPose(
                heading: normalizeDegrees(pose.heading), pitch: min(max(pose.pitch, -90), 90), roll: 0,
                fov: fovTrack.value(at: x) ?? script.fov)
        }
    }

    /// How many of `frames` have their final pose when more frames may follow (a route being looked up piece by
    /// piece): ``poses(for:in:)`` of `frames` gives those first poses as it would for the whole path (to within
    /// rounding, ~1e-12°).
    ///
    /// Frame `i` is settled when the frames known reach past `lookAhead` metres beyond it (its heading ahead cannot
    /// change) and, for each keyframed property (heading, pitch, fov) with a keyframe beyond the known frames (a
    /// later frame number or distance), a keyframe of that property already placed lies after frame `i`:
    /// interpolation towards a keyframe needs to know at which frame it falls. So poses wait for the route to be
    /// known as far as the next keyframe of each property, never further; a keyframe beyond the end of the route
    /// holds every frame after the last placed one until the route is complete.
    /// - Parameters:
    ///   - frames: the frames known so far, in order.
    ///   - complete: no frame follows: every frame is settled.
    /// - Returns: how many of the first frames are settled.
    public func settledCount(of frames: [RoutePoint], complete: Bool) -> Int {
        guard !complete else { return frames.count }
        guard let last = frames.last else { return 0 }
        let lastIndex = frames.count - 1
        // The look-ahead window: frames yet to come lie at or beyond the last known distance.
        var settled =
            frames.firstIndex { $0.distanceAlongRoute + script.lookAhead >= last.distanceAlongRoute } ?? frames.count
        let resolver = PositionResolver(frames: frames)
        let tracks: [[PathPosition]] = [
            script.keyframes.filter { $0.heading != nil }.map(\.position),
            script.keyframes.filter { $0.pitch != nil }.map(\.position),
            script.keyframes.filter { $0.fov != nil }.map(\.position)
        ]
        for positions in tracks where positions.count > 1 { // one key: a constant
            var placed: [Double] = []
            var pending = false
            for position in positions {
                // A key at the last known frame is left pending: a pending key is clamped there too, and
                // which of the two brackets a frame would then depend on the script's order.
                let index: Double? =
                    switch position {
                    case .frame(let f): f < lastIndex ? Double(f) : nil
                    case .distance(let d): d <= last.distanceAlongRoute ? resolver.index(position) : nil
                    }
                if let index, index < Double(lastIndex) { placed.append(index) } else { pending = true }
            }
            // Frames before the furthest key placed interpolate between keys already placed.
            if pending { settled = min(settled, Int((placed.max() ?? 0).rounded(.up))) }
        }
        return max(0, settled)
    }

    /// For each frame of `start..<stop` (default all), the mean heading of the frames from it to `lookAhead`
    /// metres ahead, kept within 90° of the frame's own heading.
    static func headingsAhead(_ frames: [RoutePoint], lookAhead: Double, from start: Int = 0, to stop: Int? = nil)
        -> [Double]
    {
        let stop = stop ?? frames.count
        var result = [Double](repeating: 0, count: stop - start)
        var s = 0.0
        var c = 0.0 // running sums of unit vectors over the window [i, end)
        var end = start
        for i in start..<stop {
            if end < i {
                end = i
                s = 0
                c = 0
            }
            while end < frames.count, frames[end].distanceAlongRoute <= frames[i].distanceAlongRoute + lookAhead {
                let a = frames[end].heading * .pi / 180
                s += sin(a)
                c += cos(a)
                end += 1
            }
            let own = frames[i].heading
            var mean = own
            if (s * s + c * c).squareRoot() > 1e-9 {
                let m = normalizeDegrees(atan2(s, c) * 180 / .pi)
                if abs(angleDifference(from: own, to: m)) <= 90 { mean = m }
            }
            result[i - start] = mean
            let a = own * .pi / 180 // frame i leaves the window
            s -= sin(a)
            c -= cos(a)
        }
        return result
    }
}

/// Frame indices (fractional) of path positions.
struct PositionResolver {
    let distances: [Double]

    init(frames: [RoutePoint]) { distances = frames.map(\.distanceAlongRoute) }

    /// A frame number as is (clamped to the frames); a distance as the fractional index between the frames
    /// around it (the first frame at or past it when several frames share a distance).
    func index(_ p: PathPosition) -> Double {
        let last = Double(distances.count - 1)
        switch p {
        case .frame(let f): return min(Double(f), last)
        case .distance(let d):
            guard let first = distances.first, d > first else { return 0 }
            guard let hi = distances.firstIndex(where: { $0 >= d }) else { return last }
            let lo = hi - 1
            let span = distances[hi] - distances[lo]
            return span > 0 ? Double(lo) + (d - distances[lo]) / span : Double(hi)
        }
    }
}

/// Keyed values of one property along the frames.
struct Track {
    /// (frame index, value, easing towards the next key), sorted by index.
    let keys: [(Double, Double, Easing)]
    let circular: Bool

    init(_ keys: [(Double, Double, Easing)], circular: Bool) {
        self.keys = keys.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element)
        self.circular = circular
    }

    /// The value at frame index `x`; nil when there are no keys.
    func value(at x: Double) -> Double? {
        guard let first = keys.first, let last = keys.last else { return nil }
        if x <= first.0 { return first.1 }
        if x >= last.0 { return last.1 }
        let hi = keys.firstIndex { $0.0 > x }!
        let a = keys[hi - 1]
        let b = keys[hi]
        let t = a.2((x - a.0) / (b.0 - a.0))
        let delta = circular ? angleDifference(from: a.1, to: b.1) : b.1 - a.1
        return a.1 + delta * t
    }
}
