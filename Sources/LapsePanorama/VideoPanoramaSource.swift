// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseMedia
import LapseRender
import LapseTelemetry

/// An equirectangular 360° video (e.g. from a camera on a car), optionally with a GPS track giving its
/// positions over time: the one type of a 360° video, checked (2:1) and described (size, duration, frame rate)
/// here, whether its frames are then looked up by the track's times or read front to back (LapseKit's
/// `VideoPanoramaFeed`, which holds one).
///
/// With a track (timed points, e.g. GPX): video time 0 is the track's first time plus ``trackOffset``; a route
/// point's panorama is the frame taken where the track passes nearest to it (within the radius), and the heading
/// of that frame is the track's direction of travel there (the camera is assumed to face forward at the image
/// centre). Without a track there are no positions: ``frames(every:)`` lists every N-th frame instead.
/// Frames are decoded with ``LapseMedia/VideoFrameReader`` (rotation applied).
///
/// A GoPro MAX `.360` file (two HEVC streams of an equi-angular cubemap, ``LapseRender/GoProEAC``) is read as it
/// is: its frames are the two streams' atlas (``projection``), rendered from straight, unfolded only for analysis
/// and export; its size here is the equirectangular one of its faces (5376 × 2688 for 5.6K, 2944 × 1472 for 3K).
/// Its telemetry's gravity (GPMF `GRAV`) gives each frame's tilt and roll (``level(at:)``): the file's frames are
/// the camera's own, the front lens at the centre column. (An exported video is not levelled by it: GoPro's player
/// may have levelled or turned it already.)
public struct VideoPanoramaSource: PanoramaSource {
    /// `video`.
    public let name = "video"
    /// The video (or `.360` file).
    public let url: URL
    /// Size of the frames as equirectangular pictures, pixels (for a `.360` file: its faces' equirectangular size).
    public let width: Int
    /// Height of the frames as equirectangular pictures, pixels.
    public let height: Int
    /// Equirectangular frames, or a GoPro MAX `.360` file's cube-map atlas.
    public let projection: SourceProjection
    /// Duration in seconds.
    public let duration: Double
    /// Frames per second.
    public let frameRate: Double
    /// The track with times, or `nil`.
    public let track: Route?
    /// Seconds added to video time to get track time (default 0).
    public let trackOffset: Double
    /// The camera's telemetry (``LapseTelemetry/CameraTelemetry``), when its file has some and it was read.
    public let telemetry: CameraTelemetry?
    private let trackStart: Date?

    /// Opens the video (and checks it is 2:1) and the track.
    /// - Throws: ``LapseError`` `.invalidInput` for an unreadable or non-2:1 video, or a track without times.
    public init(
        url: URL, track: Route? = nil, trackOffset: Double = 0, equirectangular: Bool = false,
        telemetry: CameraTelemetry? = nil
    ) throws {
        try self.init(
            reader: try VideoFrameReader(url), url: url, track: track, trackOffset: trackOffset,
            equirectangular: equirectangular, telemetry: telemetry)
    }

    /// As ``init(url:track:trackOffset:)`` for a video its caller has opened already (`reader`, at its start),
    /// which is only read for its size, duration and frame rate.
    public init(
        reader: VideoFrameReader, url: URL, track: Route? = nil, trackOffset: Double = 0,
        equirectangular: Bool = false, telemetry: CameraTelemetry? = nil
    ) throws {
        self.telemetry = telemetry
        projection = try Self.projection(of: reader, url: url, equirectangular: equirectangular)
        self.url = url
        if case .goproEAC(let eac) = projection {
            width = eac.equirectangularWidth
            height = eac.equirectangularWidth / 2
        } else {
            width = reader.displayWidth
            height = reader.displayHeight
        }
        frameRate = reader.frameRate ?? 30
        duration = reader.duration ?? 0
        if let track {
            guard let start = track.points.first?.time, track.points.allSatisfy({ $0.time != nil }) else {
                throw LapseError(
                    .invalidInput, track.name ?? "track",
                    "the track needs a time on every point to place the video's frames")
            }
            trackStart = start
        } else {
            trackStart = nil
        }
        self.track = track
        self.trackOffset = trackOffset
    }

    /// What the reader's frames are: the atlas of a GoPro MAX `.360` file's two streams, or equirectangular — a 2:1
    /// video whose spherical metadata says so (``LapseMedia/VideoFrameReader/sphericalProjection``), or, without
    /// any, whose first frame wraps around as a 360° picture does (``wrapsAround(_:)``: its left and right edges
    /// meet) and is not two fisheye pictures (``isDualFisheye(_:)``), or which `equirectangular` says is one.
    /// - Throws: ``LapseError`` `.invalidInput` for anything else, saying what it is: an Insta360 original (`.insv`,
    ///   dual fisheye, which may well be 2:1) and any other video of two fisheye circles say to export an
    ///   equirectangular video first; a flat video of 2:1 names `--equirectangular` for one that is 360° after all.
    public static func projection(of reader: VideoFrameReader, url: URL, equirectangular: Bool = false) throws
        -> SourceProjection
    {
        let path = url.shown
        if url.lowercasedExtension == "insv" || (url.isFileURL && Self.hasInsta360Trailer(url.filePath)) {
            throw LapseError(
                .invalidInput, path,
                "an Insta360 original (.insv: two fisheye pictures, not equirectangular): export an equirectangular "
                    + "video from it first (Insta360 Studio)")
        }
        if reader.streamCount == 2 {
            let w = reader.displayWidth
            let h = reader.displayHeight / 2
            guard let eac = GoProEAC.layout(streamWidth: w, streamHeight: h) else {
                throw LapseError(
                    .invalidInput, path,
                    "two video streams of \(w)×\(h): not a GoPro MAX .360 file's (4096×1344 or 2272×736 each)")
            }
            return .goproEAC(eac)
        }
        guard reader.displayWidth == 2 * reader.displayHeight else {
            throw LapseError(
                .invalidInput, path,
                "not an equirectangular 360° video: \(reader.displayWidth)×\(reader.displayHeight) is not 2:1")
        }
        switch reader.sphericalProjection {
        case "equirectangular": return .equirectangular
        case .some(let other):
            throw LapseError(
                .invalidInput, path,
                "its spherical metadata says \(other), not equirectangular: export an equirectangular video from it")
        case nil:
            if equirectangular { return .equirectangular }
            let first = try VideoFrameReader(url)
            first.outputSize = (512, 256)
            guard let frame = try first.nextFrame()?.pixels else { return .equirectangular }
            if isDualFisheye(frame) {
                throw LapseError(.invalidInput, path, dualFisheyeReason + " video from it first")
            }
            if wrapsAround(frame) { return .equirectangular }
            throw LapseError(
                .invalidInput, path,
                "not known to be a 360° video: it has no spherical metadata and its left and right edges do not meet "
                    + "as a 360° picture's do; if it is one, give --equirectangular")
        }
    }

    /// Whether the file ends with the trailer Insta360's cameras append to their originals (its last 32 bytes the
    /// ASCII magic `8db42d694ccc418790edff439fe026bf`), whatever the file is called.
    static func hasInsta360Trailer(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let end = try? handle.seekToEnd(), end >= 32 else { return false }
        try? handle.seek(toOffset: end - 32)
        guard let tail = try? handle.read(upToCount: 32) else { return false }
        return tail == Data("8db42d694ccc418790edff439fe026bf".utf8)
    }

    /// Whether an equirectangular-sized picture wraps around as a 360° one does: its first and last columns (which
    /// are neighbours on the sphere) differ no more than neighbouring columns inside it do — at most 3 times their
    /// median difference and 2 luma levels (rows within 60° of the horizon; the poles say nothing). A flat picture's
    /// two edges are two unrelated places.
    public static func wrapsAround(_ p: PixelBuffer) -> Bool {
        let w = p.width
        let h = p.height
        guard w >= 16, h >= 8 else { return true }
        func luma(_ x: Int, _ y: Int) -> Double { Self.luma(p, x, y) }
        let rows = (h / 6)..<(h - h / 6)
        func difference(_ a: Int, _ b: Int) -> Double {
            rows.reduce(0) { $0 + abs(luma(a, $1) - luma(b, $1)) } / Double(rows.count)
        }
        let seam = difference(0, w - 1)
        let inside = stride(from: 1, to: w - 2, by: max(1, w / 64)).map { difference($0, $0 + 1) }.sorted()
        return seam <= 3 * inside[inside.count / 2] + 2
    }

    /// The tilt and roll (degrees, as ``LapseRender/PanoramaPose``'s) of the frame at `time` seconds from the
    /// camera's gravity (``LapseTelemetry/CameraGravity/level``), for a GoPro MAX `.360` file whose telemetry has
    /// it within half a second; nil otherwise.
    public func level(at time: Double) -> (tilt: Double, roll: Double)? {
        guard case .goproEAC = projection, let g = telemetry?.gravity(at: time) else { return nil }
        return CameraGravity(time: time, vector: g).level
    }

    /// The BT.709 luma of pixel (x, y) of an RGBA picture, 0…255.
    private static func luma(_ p: PixelBuffer, _ x: Int, _ y: Int) -> Double {
        let i = (y * p.width + x) * 4
        return 0.2126 * Double(p.bytes[i]) + 0.7152 * Double(p.bytes[i + 1]) + 0.0722 * Double(p.bytes[i + 2])
    }

    /// Why a picture of two fisheye circles is refused, less what to export.
    static let dualFisheyeReason =
        "two fisheye pictures side by side (a dual-fisheye original), not equirectangular: export an equirectangular"

    /// Whether a 2:1 picture is two fisheye circles side by side, as dual-lens 360° cameras record before
    /// stitching (Insta360 `.insv`/`.insp`, GoPro Fusion, Ricoh Theta's dual-fisheye output): outside the two circles
    /// of the picture's height (beyond 1.06 radii of both centres: the corners, and the middle of the top and bottom
    /// edges) every pixel is black and even — its 95th-percentile luma at most 24, its spread at most 8 — while inside
    /// them (within 0.9 radii) the picture is at least 20 luma levels brighter on average, and the circles' rims are
    /// edges: in at least 60 % of the directions from each centre (32 each) where the picture goes on past the rim,
    /// it is at least 12 levels brighter just inside (0.90–0.96 radii) than outside (1.08–1.2). An equirectangular
    /// picture's corners are sky and ground, not one black, and where they are dark (under a bridge, at night) they
    /// are as dark on both sides of where a rim would be (real frames under an overpass at half exposure: at most
    /// 23 % of the directions); a black picture has nothing inside either.
    public static func isDualFisheye(_ p: PixelBuffer) -> Bool {
        let w = p.width
        let h = p.height
        guard h >= 16, abs(w - 2 * h) <= 2 else { return false }
        let r = Double(h) / 2
        var outside: [Double] = []
        var inside: [Double] = []
        let step = max(1, h / 128)
        for y in stride(from: 0, to: h, by: step) {
            for x in stride(from: 0, to: w, by: step) {
                let dy = Double(y) + 0.5 - r
                let dx = min(abs(Double(x) + 0.5 - r), abs(Double(x) + 0.5 - 3 * r))
                let d = (dx * dx + dy * dy).squareRoot() / r
                guard d > 1.06 || d < 0.9 else { continue }
                let luma = Self.luma(p, x, y)
                if d > 1.06 { outside.append(luma) } else { inside.append(luma) }
            }
        }
        guard outside.count >= 16, !inside.isEmpty else { return false }
        outside.sort()
        let mean = outside.reduce(0, +) / Double(outside.count)
        let spread = (outside.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(outside.count)).squareRoot()
        let insideMean = inside.reduce(0, +) / Double(inside.count)
        guard outside[outside.count * 95 / 100] <= 24, spread <= 8, insideMean >= mean + 20 else { return false }
        func luma(_ x: Double, _ y: Double) -> Double? {
            let xi = Int(x)
            let yi = Int(y)
            guard x >= 0, y >= 0, xi < w, yi < h else { return nil }
            return Self.luma(p, xi, yi)
        }
        var rims = 0
        var directions = 0
        for centre in [r, 3 * r] {
            for k in 0..<32 {
                let angle = 2 * Double.pi * (Double(k) + 0.5) / 32
                func at(_ f: Double) -> Double? { luma(centre + f * r * cos(angle), r + f * r * sin(angle)) }
                let outer = [1.08, 1.12, 1.2].compactMap(at)
                let inner = [0.9, 0.93, 0.96].compactMap(at)
                guard !outer.isEmpty, !inner.isEmpty else { continue }
                directions += 1
                let brighter = inner.reduce(0, +) / Double(inner.count) - outer.reduce(0, +) / Double(outer.count)
                if brighter >= 12 { rims += 1 }
            }
        }
        return directions > 0 && Double(rims) >= 0.6 * Double(directions)
    }

    /// The panorama of the frame shown at `time` seconds (its tilt and roll from ``level(at:)``, else 0).
    public func panorama(at time: Double, coordinate: Coordinate? = nil, heading: Double = 0) -> PanoramaMetadata {
        let t = (time * 1000).rounded() / 1000
        let level = self.level(at: t)
        return PanoramaMetadata(
            source: name, id: "video@\(String(format: "%.3f", t))",
            coordinate: coordinate ?? Coordinate(uncheckedLatitude: 0, longitude: 0),
            heading: heading, tilt: level?.tilt ?? 0, roll: level?.roll ?? 0, width: width, height: height,
            file: url,
            time: t)
    }

    /// Every `n`-th frame (0, n, 2n, …), for videos without a track.
    public func frames(every n: Int) -> [PanoramaMetadata] {
        let frameCount = max(1, Int((duration * frameRate).rounded()))
        return stride(from: 0, to: frameCount, by: max(1, n)).map { panorama(at: Double($0) / frameRate) }
    }

    /// The frame nearest each coordinate within `radius` metres, by the track's position at the frame's time; nil
    /// where there is none (without a track: none anywhere).
    public func nearest(to coordinates: [Coordinate], radius: Double) async throws -> [PanoramaMetadata?] {
        guard let track, let trackStart else {
            throw LapseError.usage(
                "a video without a track has no positions: give `track` GPX, or no route to take every N frames")
        }
        let points = track.points
        return coordinates.map { c in
            // Closest point on each segment (flat approximation, fine over metres), then time by interpolation.
            var best: (distance: Double, time: Double, heading: Double, at: Coordinate)?
            for i in 0..<max(1, points.count - 1) {
                let a = points[i]
                let b = points[min(i + 1, points.count - 1)]
                let length = a.coordinate.distance(to: b.coordinate)
                var f = 0.0
                if length > 0 {
                    let along =
                        a.coordinate.distance(to: c)
                        * cos(
                            (a.coordinate.initialBearing(to: c) - a.coordinate.initialBearing(to: b.coordinate)) * .pi
                                / 180)
                    f = min(1, max(0, along / length))
                }
                let p = a.coordinate.interpolated(to: b.coordinate, fraction: f)
                let d = p.distance(to: c)
                let ta = a.time!.timeIntervalSince(trackStart)
                let tb = b.time!.timeIntervalSince(trackStart)
                let heading = length > 0 ? a.coordinate.initialBearing(to: b.coordinate) : (best?.heading ?? 0)
                if best == nil || d < best!.distance { best = (d, ta + (tb - ta) * f, heading, p) }
            }
            guard let best, best.distance <= radius else { return nil }
            let videoTime = best.time - trackOffset
            guard videoTime >= 0, videoTime <= duration + 0.5 / frameRate else { return nil }
            return panorama(
                at: min(videoTime, max(0, duration - 0.5 / frameRate)), coordinate: best.at, heading: best.heading)
        }
    }

    /// The frame: equirectangular at the size `resolution` asks for, or a `.360` file's atlas, scaled as the
    /// equirectangular picture of its faces would be (``PanoramaImage/projection`` says which).
    public func image(for panorama: PanoramaMetadata, resolution: PanoramaResolution) async throws -> PanoramaImage {
        let reader = try VideoFrameReader(url)
        let (w, h) = LocalPhotoSource.size(for: resolution, width: width, height: height)
        if case .goproEAC(let eac) = projection {
            reader.outputSize = eac.atlasSize(forEquirectangularWidth: w)
        } else {
            reader.outputSize = (w, h)
        }
        let t = panorama.time ?? 0
        if t > 1 { try reader.seek(to: t) }
        var image = PanoramaImage(metadata: panorama, pixels: try reader.frame(at: t))
        image.projection = projection
        return image
    }

    /// The frame as an equirectangular picture about `width` wide (a `.360` file's atlas unfolded).
    public func analysisImage(for panorama: PanoramaMetadata, width: Int) async throws -> PanoramaImage {
        var image = try await self.image(for: panorama, resolution: .atLeast(width: width))
        guard case .goproEAC(let eac) = projection else { return image }
        image.pixels = try eac.equirectangular(image.pixels, width: width)
        image.projection = .equirectangular
        return image
    }
}
