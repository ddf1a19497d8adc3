// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo

/// Where the camera of a hyperlapse looks, frame by frame: a list of shots (each a camera mode starting at a
/// frame or a distance along the route), keyframes for heading, pitch and field of view, and defaults.
/// Turned into one ``CameraPose`` a frame by ``CameraPath``.
///
/// Codable as the JSON *camera file* described in <doc:CameraFiles>.
public struct CameraScript: Sendable, Equatable, Codable {
    /// Horizontal field of view in degrees when no keyframe sets one (default 90).
    public var fov: Double
    /// Pitch in degrees when neither a keyframe nor a look-at target sets one (default 0).
    public var pitch: Double
    /// How far ahead along the route, in metres, the camera averages the road's direction in
    /// ``CameraMode/route(offset:)`` mode (default 50). Together with the route's own heading smoothing (±20 m) a 90°
    /// corner turns the camera over about `lookAhead + 40` metres, at most 90°/`lookAhead` a metre.
    public var lookAhead: Double
    /// Frames over which a switch from one shot's mode to the next is eased (default 30; 0 cuts).
    public var transitionFrames: Int
    /// Height of the camera above the route's elevation in metres, for look-at pitch (default 2.5, a car roof).
    public var cameraHeight: Double
    /// The shots in order of their start; the first one's start is treated as frame 0.
    public var shots: [Shot]
    /// Keyframes for heading (used by ``CameraMode/keyframes`` shots), pitch and fov (used everywhere).
    public var keyframes: [Keyframe]

    /// The camera of most hyperlapses: along the road, 90° wide, level.
    public init(
        fov: Double = 90, pitch: Double = 0, lookAhead: Double = 50, transitionFrames: Int = 30,
        cameraHeight: Double = 2.5, shots: [Shot] = [Shot(start: .frame(0), mode: .route(offset: 0))],
        keyframes: [Keyframe] = []
    ) {
        self.fov = fov
        self.pitch = pitch
        self.lookAhead = lookAhead
        self.transitionFrames = transitionFrames
        self.cameraHeight = cameraHeight
        self.shots = shots
        self.keyframes = keyframes
    }

    /// A script with one shot.
    public init(mode: CameraMode, fov: Double = 90, pitch: Double = 0) {
        self.init(fov: fov, pitch: pitch, shots: [Shot(start: .frame(0), mode: mode)])
    }

    /// The largest camera file read, bytes: 1 MB, about 30 000 keyframes (decoding takes about 100 times the file's
    /// size; a file of a million keyframes took 3.1 GB).
    public static let maximumFileBytes = 1 << 20

    /// Reads a camera file (JSON) of at most ``maximumFileBytes``.
    /// - Throws: ``LapseError`` `.invalidInput` naming the file and what is wrong (larger than the limit, bad JSON,
    ///   unknown mode, a keyframe without a position, values out of range).
    public static func read(_ url: URL) throws -> CameraScript {
        let path = url.filePath
        var info = stat()
        if stat(path, &info) == 0, Int(info.st_size) > maximumFileBytes {
            throw LapseError(
                .invalidInput, path,
                """
                \(info.st_size) bytes, more than a camera file holds (\(maximumFileBytes) bytes, about 30 000 \
                keyframes)
                """
            )
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw LapseError(.invalidInput, path, "cannot read the camera file")
        }
        defer { try? handle.close() }
        let data: Data
        do { data = try handle.read(upToCount: maximumFileBytes + 1) ?? Data() } catch {
            throw LapseError(.invalidInput, path, "cannot read the camera file")
        }
        guard data.count <= maximumFileBytes else {
            throw LapseError(.invalidInput, path, "more than a camera file holds (\(maximumFileBytes) bytes)")
        }
        return try decode(data, source: path)
    }

    /// Decodes a camera file's JSON. `source` names it in errors.
    public static func decode(_ data: Data, source: String = "camera file") throws -> CameraScript {
        let script: CameraScript
        if let unknown = unknownKey(in: data) {
            throw LapseError(.invalidInput, source, "unknown key '\(unknown)'")
        }
        do {
            script = try JSONDecoder().decode(CameraScript.self, from: data)
        } catch let error as DecodingError {
            throw LapseError(.invalidInput, source, Self.describe(error))
        } catch let error as LapseError {
            throw LapseError(.invalidInput, source, error.reason)
        }
        try script.validate(source: source)
        return script
    }

    /// The first key the camera file format does not have (a misspelling such as `fovv` would otherwise be
    /// ignored silently), as `key`, `shots[i].key` or `keyframes[i].key`; `nil` when all are known or the data is
    /// not a JSON object (the decoder reports that).
    static func unknownKey(in data: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        let top: Set = ["fov", "pitch", "lookAhead", "transitionFrames", "cameraHeight", "shots", "keyframes"]
        let shot: Set = ["frame", "distance", "mode", "offset", "target", "elevation", "heading"]
        let keyframe: Set = ["frame", "distance", "heading", "pitch", "fov", "easing"]
        if let k = object.keys.sorted().first(where: { !top.contains($0) }) { return k }
        for (list, known) in [("shots", shot), ("keyframes", keyframe)] {
            for (i, item) in ((object[list] as? [Any]) ?? []).enumerated() {
                if let d = item as? [String: Any], let k = d.keys.sorted().first(where: { !known.contains($0) }) {
                    return "\(list)[\(i)].\(k)"
                }
            }
        }
        return nil
    }

    /// Checks ranges: fov in (0, 180), pitch in −90…90, look-ahead 0…10 000 km (longer than any route: one
    /// heading for all of it), transition 0…100 000 frames, camera height −1 000…10 000 m, headings and offsets
    /// within ±36 000° (any compass direction, however written), at least one shot, every keyframe setting
    /// something.
    /// - Throws: ``LapseError`` `.invalidInput` with `source` as subject.
    public func validate(source: String = "camera file") throws {
        func fail(_ why: String) -> LapseError { LapseError(.invalidInput, source, why) }
        func checkFOV(_ f: Double, _ what: String) throws {
            guard f.isFinite, f > 0, f < 180 else {
                throw fail("\(what): fov must be more than 0 and less than 180, not \(f)")
            }
        }
        func checkPitch(_ p: Double, _ what: String) throws {
            guard p.isFinite, (-90...90).contains(p) else { throw fail("\(what): pitch must be -90…90, not \(p)") }
        }
        func checkHeading(_ h: Double, _ what: String) throws {
            guard h.isFinite, (-36_000...36_000).contains(h) else {
                throw fail("\(what) must be -36000…36000 degrees, not \(h)")
            }
        }
        try checkFOV(fov, "fov")
        try checkPitch(pitch, "pitch")
        guard lookAhead.isFinite, (0...10_000_000).contains(lookAhead) else {
            throw fail("lookAhead must be 0…10000000 metres, not \(lookAhead)")
        }
        guard (0...100_000).contains(transitionFrames) else {
            throw fail("transitionFrames must be 0…100000, not \(transitionFrames)")
        }
        guard cameraHeight.isFinite, (-1_000...10_000).contains(cameraHeight) else {
            throw fail("cameraHeight must be -1000…10000 metres, not \(cameraHeight)")
        }
        guard !shots.isEmpty else { throw fail("at least one shot is needed") }
        for (i, k) in keyframes.enumerated() {
            let what = "keyframe \(i + 1)"
            guard k.heading != nil || k.pitch != nil || k.fov != nil else {
                throw fail("\(what) sets no heading, pitch or fov")
            }
            if let f = k.fov { try checkFOV(f, what) }
            if let p = k.pitch { try checkPitch(p, what) }
            if let h = k.heading { try checkHeading(h, "\(what): heading") }
        }
        for (i, s) in shots.enumerated() {
            if case .fixed(let h) = s.mode { try checkHeading(h, "shot \(i + 1): heading") }
            if case .route(let o) = s.mode { try checkHeading(o, "shot \(i + 1): offset") }
        }
    }

    /// Reads a camera file's JSON: `shots`, `keyframes`, `transitionFrames`.
    /// - Throws: `DecodingError` for a key or value the format does not have (the message names it).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        fov = try c.decodeIfPresent(Double.self, forKey: .fov) ?? 90
        pitch = try c.decodeIfPresent(Double.self, forKey: .pitch) ?? 0
        lookAhead = try c.decodeIfPresent(Double.self, forKey: .lookAhead) ?? 50
        transitionFrames = try c.decodeIfPresent(Int.self, forKey: .transitionFrames) ?? 30
        cameraHeight = try c.decodeIfPresent(Double.self, forKey: .cameraHeight) ?? 2.5
        shots = try c.decodeIfPresent([Shot].self, forKey: .shots) ?? [Shot(start: .frame(0), mode: .route(offset: 0))]
        keyframes = try c.decodeIfPresent([Keyframe].self, forKey: .keyframes) ?? []
    }

    private enum CodingKeys: String, CodingKey {
        case fov, pitch, lookAhead, transitionFrames, cameraHeight, shots, keyframes
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ p: [any CodingKey]) -> String {
            p.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingCharacters(in: ["."])
        }
        switch error {
        case .dataCorrupted(let c):
            return c.codingPath.isEmpty ? "not valid JSON" : "\(path(c.codingPath)): \(c.debugDescription)"
        case .keyNotFound(let k, let c): return "\(path(c.codingPath + [k])) is missing"
        case .typeMismatch(_, let c), .valueNotFound(_, let c): return "\(path(c.codingPath)): \(c.debugDescription)"
        @unknown default: return "invalid camera file"
        }
    }
}

/// A place on the route: a frame number (0-based) or metres from the route's start.
/// JSON: `{"frame": 120}` or `{"distance": 850.5}` (inside a shot or keyframe object).
public enum PathPosition: Sendable, Hashable {
    case frame(Int)
    case distance(Double)
}

/// How the camera chooses its heading (and, for look-at, its pitch) during a shot.
public enum CameraMode: Sendable, Hashable {
    /// Along the road: the mean direction of the route over the next ``CameraScript/lookAhead`` metres, turned by
    /// `offset` degrees (−90 looks left, 90 right, 180 back). Never faces backwards at corners.
    case route(offset: Double)
    /// Always at `target`; pitch from the distance and the height difference when `elevation` (metres above
    /// sea level) and the route's elevation are known, else the pitch keyframes/default.
    case lookAt(target: Coordinate, elevation: Double?)
    /// A constant compass heading.
    case fixed(heading: Double)
    /// Heading from the heading keyframes (interpolated along the shortest arc, eased).
    case keyframes
}

/// One shot: from `start` on, the camera works in `mode` (until the next shot starts).
/// JSON: `{"frame": 0, "mode": "route", "offset": 0}`, `{"distance": 500, "mode": "lookAt", "target":
/// {"latitude": 48.8584, "longitude": 2.2945}, "elevation": 330}`, `{"frame": 300, "mode": "fixed", "heading": 270}`,
/// `{"frame": 400, "mode": "keyframes"}`. The target may also be written `"48.8584,2.2945"`.
public struct Shot: Sendable, Hashable, Codable {
    /// Where the shot starts: a frame number or a distance along the route.
    public var start: PathPosition
    /// What the camera does in the shot (along the road, at a target, by keyframes).
    public var mode: CameraMode

    /// A shot starting at `start` in `mode`.
    public init(start: PathPosition, mode: CameraMode) {
        self.start = start
        self.mode = mode
    }

    private enum CodingKeys: String, CodingKey { case frame, distance, mode, offset, target, elevation, heading }

    /// Reads a shot's JSON (see the type's documentation).
    /// - Throws: `DecodingError` for a missing start or mode, or both a frame and a distance.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        start = try Self.position(c) ?? .frame(0)
        let name = try c.decodeIfPresent(String.self, forKey: .mode) ?? "route"
        switch name {
        case "route":
            mode = .route(offset: try c.decodeIfPresent(Double.self, forKey: .offset) ?? 0)
        case "lookAt":
            let target: Coordinate
            if let text = try? c.decode(String.self, forKey: .target) {
                target = try Coordinate.parse(text)
            } else {
                target = try c.decode(Coordinate.self, forKey: .target)
            }
            mode = .lookAt(target: target, elevation: try c.decodeIfPresent(Double.self, forKey: .elevation))
        case "fixed":
            mode = .fixed(heading: try c.decode(Double.self, forKey: .heading))
        case "keyframes":
            mode = .keyframes
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .mode, in: c,
                debugDescription: "unknown mode '\(name)' (route, lookAt, fixed or keyframes)")
        }
    }

    /// Writes the shot's JSON (see the type's documentation).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try Self.encode(start, into: &c)
        switch mode {
        case .route(let offset):
            try c.encode("route", forKey: .mode)
            try c.encode(offset, forKey: .offset)
        case .lookAt(let target, let elevation):
            try c.encode("lookAt", forKey: .mode)
            try c.encode(target, forKey: .target)
            try c.encodeIfPresent(elevation, forKey: .elevation)
        case .fixed(let heading):
            try c.encode("fixed", forKey: .mode)
            try c.encode(heading, forKey: .heading)
        case .keyframes:
            try c.encode("keyframes", forKey: .mode)
        }
    }

    private static func position(_ c: KeyedDecodingContainer<CodingKeys>) throws -> PathPosition? {
        if let f = try c.decodeIfPresent(Int.self, forKey: .frame) {
            guard f >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: .frame, in: c, debugDescription: "frame must be ≥ 0")
            }
            return .frame(f)
        }
        if let d = try c.decodeIfPresent(Double.self, forKey: .distance) {
            guard d.isFinite, d >= 0 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .distance, in: c, debugDescription: "distance must be ≥ 0 metres")
            }
            return .distance(d)
        }
        return nil
    }

    private static func encode(_ p: PathPosition, into c: inout KeyedEncodingContainer<CodingKeys>) throws {
        switch p {
        case .frame(let f): try c.encode(f, forKey: .frame)
        case .distance(let d): try c.encode(d, forKey: .distance)
        }
    }
}

/// How a value moves between two keyframes (and through a switch between shots).
public enum Easing: String, Sendable, Hashable, Codable, CaseIterable {
    /// Constant speed.
    case linear
    /// Starts slowly (quadratic).
    case easeIn
    /// Ends slowly (quadratic).
    case easeOut
    /// Starts and ends slowly (cubic smoothstep 3t² − 2t³). The default.
    case easeInOut

    /// The eased fraction for `t` in 0…1 (clamped).
    public func callAsFunction(_ t: Double) -> Double {
        let t = min(max(t, 0), 1)
        switch self {
        case .linear: return t
        case .easeIn: return t * t
        case .easeOut: return t * (2 - t)
        case .easeInOut: return t * t * (3 - 2 * t)
        }
    }
}

/// A keyframe: at `position`, the camera has these values (those left `nil` are not keyed here).
/// Values between two keyframes of the same property are interpolated with the *earlier* keyframe's easing;
/// headings along the shortest arc (350° → 10° turns 20° through north).
/// JSON: `{"frame": 30, "heading": 10, "pitch": -5, "fov": 70, "easing": "easeInOut"}` or with `"distance"`.
public struct Keyframe: Sendable, Hashable, Codable {
    /// Where the keyframe is: a frame number or a distance along the route.
    public var position: PathPosition
    /// Compass heading in degrees (used by ``CameraMode/keyframes`` shots).
    public var heading: Double?
    /// Pitch in degrees, −90…90.
    public var pitch: Double?
    /// Horizontal field of view in degrees, (0, 180).
    public var fov: Double?
    /// How the camera moves from this keyframe to the next.
    public var easing: Easing

    /// A keyframe at `position` with the given heading, pitch and fov (nil: carried from the keyframe before) and
    /// easing.
    public init(
        _ position: PathPosition, heading: Double? = nil, pitch: Double? = nil, fov: Double? = nil,
        easing: Easing = .easeInOut
    ) {
        self.position = position
        self.heading = heading
        self.pitch = pitch
        self.fov = fov
        self.easing = easing
    }

    private enum CodingKeys: String, CodingKey { case frame, distance, heading, pitch, fov, easing }

    /// Reads a keyframe's JSON (see the type's documentation).
    /// - Throws: `DecodingError` for a missing position, or both a frame and a distance.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if let f = try c.decodeIfPresent(Int.self, forKey: .frame) {
            guard f >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: .frame, in: c, debugDescription: "frame must be ≥ 0")
            }
            position = .frame(f)
        } else if let d = try c.decodeIfPresent(Double.self, forKey: .distance) {
            guard d.isFinite, d >= 0 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .distance, in: c, debugDescription: "distance must be ≥ 0 metres")
            }
            position = .distance(d)
        } else {
            throw DecodingError.keyNotFound(
                CodingKeys.frame,
                .init(
                    codingPath: c.codingPath,
                    debugDescription: "a keyframe needs \"frame\" or \"distance\""))
        }
        heading = try c.decodeIfPresent(Double.self, forKey: .heading)
        pitch = try c.decodeIfPresent(Double.self, forKey: .pitch)
        fov = try c.decodeIfPresent(Double.self, forKey: .fov)
        easing = try c.decodeIfPresent(Easing.self, forKey: .easing) ?? .easeInOut
    }

    /// Writes the keyframe's JSON (see the type's documentation).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch position {
        case .frame(let f): try c.encode(f, forKey: .frame)
        case .distance(let d): try c.encode(d, forKey: .distance)
        }
        try c.encodeIfPresent(heading, forKey: .heading)
        try c.encodeIfPresent(pitch, forKey: .pitch)
        try c.encodeIfPresent(fov, forKey: .fov)
        try c.encode(easing, forKey: .easing)
    }
}
