// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseTelemetry
import Synchronization

extension HyperlapseSettings {
    /// The network timeouts accepted, seconds (``timeout``).
    public static let timeoutRange: ClosedRange<Double> = 0.1...3600
    /// Metres between route points accepted (``spacing``).
    public static let spacingRange: ClosedRange<Double> = 0.5...10000
    /// Search radii accepted, metres (``radius``).
    public static let radiusRange: ClosedRange<Double> = 1...1000
    /// Frame steps accepted (``frameStep``).
    public static let frameStepRange: ClosedRange<Int> = 1...10000
    /// GIF widths accepted, pixels (``gifWidth``).
    public static let gifWidthRange: ClosedRange<Int> = 16...4096
    /// Constant rate factors accepted (``crf``, x264's scale).
    public static let crfRange: ClosedRange<Double> = 0...51
    /// Horizontal fields of view accepted, degrees (``fov``).
    public static let fovRange: ClosedRange<Double> = 1...179
    /// Output frame rates accepted, frames per second (``fps``).
    public static let fpsRange: ClosedRange<Double> = 1...120
    /// Angles accepted for ``headingOffset``, ``panoHeading`` and ``forward``, degrees.
    public static let angleRange: ClosedRange<Double> = -360...360
    /// Frame sizes accepted, pixels each way (``size``; odd sizes are rounded down to even).
    public static let sizeRange: ClosedRange<Int> = 16...8192

    // The defaults, one place for each: ``defaults`` is made of them, and what reads a setting falls back on them.
    /// 1280×720.
    public static let defaultSize = FrameSize(width: 1280, height: 720)
    /// 90°.
    public static let defaultFOV = 90.0
    /// 12 frames a second.
    public static let defaultFPS = FrameRate(12)
    /// 50 m.
    public static let defaultRadius = 50.0
    /// x264's CRF 20.
    public static let defaultCRF = 20.0
    /// x264's `medium`.
    public static let defaultPreset = EncoderPreset.medium
    /// Every frame of a video.
    public static let defaultFrameStep = 1
    /// Street View zoom levels accepted (``zoom``).
    public static let zoomRange: ClosedRange<Int> = 0...5

    /// Metres between route points when ``spacing`` is not given (your own photos without a route are then
    /// every photo instead).
    public static let defaultSpacing = 10.0

    /// Defaults that make a good first video: 1280×720, 90° fov, 12 fps, H.264 CRF 20, medium; 10 m between
    /// route points (``defaultSpacing``), or every one of your photos.
    public static let defaults: HyperlapseSettings = {
        var s = HyperlapseSettings()
        s.size = defaultSize
        s.fov = defaultFOV
        s.fps = defaultFPS
        s.zoom = .auto
        s.crossfade = false
        s.radius = defaultRadius
        s.crf = defaultCRF
        s.preset = defaultPreset
        s.provider = .google
        s.frameStep = defaultFrameStep
        return s
    }()

    /// The job these settings describe (camera, size, outputs), checked.
    /// - Throws: ``LapseError`` `.usage` for missing or contradictory settings, `.invalidInput` for an
    ///   unreadable camera file.
    public func makeJob(overwrite: Bool) throws -> HyperlapseJob {
        let s = HyperlapseSettings.defaults.overridden(by: self)
        guard let output = s.output else { throw LapseError.usage("no output file (-o OUT.mp4)") }
        var job = HyperlapseJob(output: output)
        let size = s.size ?? Self.defaultSize
        let (low, high) = (Self.sizeRange.lowerBound, Self.sizeRange.upperBound)
        guard Self.sizeRange.contains(size.width), Self.sizeRange.contains(size.height) else {
            throw LapseError.usage("size takes \(low)x\(low) to \(high)x\(high), not \(size)")
        }
        job.width = size.width & ~1
        job.height = size.height & ~1
        job.frameRate = s.fps ?? Self.defaultFPS
        job.crossfade = s.crossfade ?? false
        job.gif = s.gif
        job.gifWidth = s.gifWidth
        job.crf = s.crf ?? Self.defaultCRF
        job.preset = s.preset ?? Self.defaultPreset
        // A job file's numbers are held to the ranges the command line's are, with the same constants (a frame
        // step of 2⁶³ − 1 overflowed; a zoom of 9 was found only after the route was planned).
        try Self.checkNumbers(s)
        job.stabilization = StabilizationOptions(
            enabled: s.stabilize ?? true, forward: s.forward, toneMatch: s.toneMatch ?? true)
        job.overwrite = overwrite
        let camerasGiven = [s.lookAt != nil, s.headingOffset != nil, s.keyframes != nil].filter { $0 }.count
        guard camerasGiven <= 1 else {
            throw LapseError.usage("give only one of `lookAt`, `headingOffset` and `keyframes`")
        }
        let fov = s.fov ?? Self.defaultFOV
        if let keyframes = s.keyframes {
            job.camera = try CameraScript.read(keyframes)
            if self.fov != nil { job.camera.fov = fov }
        } else if let lookAt = s.lookAt {
            job.camera = CameraScript(mode: .lookAt(target: try Coordinate.parse(lookAt), elevation: nil), fov: fov)
        } else {
            job.camera = CameraScript(mode: .route(offset: s.headingOffset ?? 0), fov: fov)
        }
        try job.camera.validate()
        job.creditPosition = try Self.creditCorner(s.creditPosition, source: s.source)
        job.copyright = s.copyright
        let service = try s.directionsService()
        if service == .osrm { job.routeCredit = HyperlapseJob.openStreetMapRouteCredit }
        // The job file records the provider only when it planned the route (the default's is no setting of this job).
        var recorded = s
        if service == nil { recorded.provider = nil }
        job.settings = recorded
        return job
    }

    /// The directions service that plans the route: the `provider` (default Google) when `from`/`to` are given,
    /// nil for a route from a file, a track or your photos' positions.
    /// - Throws: ``LapseError`` `.usage` for a provider that is not one of ``DirectionsService``'s names.
    func directionsService() throws -> DirectionsService? {
        guard from != nil || to != nil || !(via ?? []).isEmpty else { return nil }
        return provider ?? .google
    }

    /// The credit corner of `position` (nil: the default, bottom right); nil for `none`.
    /// - Throws: ``LapseError`` `.usage` for `none` with Google Street View, Panoramax or Mapillary, whose imagery
    ///   must be credited in the picture.
    static func creditCorner(_ position: CreditPosition?, source: PanoramaSourceSetting?) throws -> CreditCorner? {
        switch position ?? .corner(.bottomRight) {
        case .corner(let corner):
            return corner
        case .none:
            if let name = source?.creditedName {
                throw LapseError.usage(
                    "`creditPosition` none is for your own photos and videos: \(name) imagery must carry its credit")
            }
            return nil
        }
    }

    /// The panorama feed these settings name: the route (planned with a directions service or read from a file,
    /// resampled every ``spacing`` metres) and the source to look its panoramas up in. Own photos without a route
    /// are their own route, in capture order, with no points where two consecutive photos are more than two
    /// ``radius``es apart (a warning names the farthest such pair).
    /// - Parameters:
    ///   - progress: receives route and download progress.
    ///   - warning: receives what is not as asked for (photos that jump, photos skipped).
    ///   - environment: where keys, tokens and base URLs not set here are read (the command line passes its
    ///     process's; empty by default).
    /// - Returns: the feed, ready for ``HyperlapseJob/run(feed:progress:warning:)``.
    /// - Throws: ``LapseError`` `.usage` for a missing or unknown source, a missing route, Google without a key,
    ///   a ``spacing``, ``radius`` or ``frameStep`` outside the command line's ranges; `.invalidInput` for
    ///   unreadable route files or videos; the directions service's errors.
    public func makeFeed(
        progress: ProgressHandler? = nil, warning: WarningHandler? = nil,
        environment: [String: String] = [:]
    ) async throws -> any PanoramaFeed {
        let s = HyperlapseSettings.defaults.overridden(by: self)
        try Self.checkFeedNumbers(s)
        guard let source = s.source else {
            throw LapseError.usage("no panorama source (`source` google|panoramax|mapillary|local:DIR|video:FILE)")
        }
        let hasDirections = s.from != nil || s.to != nil || !(s.via ?? []).isEmpty
        if hasDirections && s.route != nil { throw LapseError.usage("give either `route` or `from`/`to`, not both") }
        if hasDirections && (s.from == nil || s.to == nil) { throw LapseError.usage("give both `from` and `to`") }
        if let provider = self.provider, !hasDirections {
            warning?(
                "the directions provider \(provider.rawValue) plans nothing here: the route comes from "
                    + (s.route != nil
                        ? "the route file"
                        : source.videoFile != nil && s.track == nil
                            ? "the video's frames" : "the panoramas' positions or the track"))
        }
        // A 360° video without a track is read front to back: the efficient path for its frames; one whose telemetry
        // has GPS positions is placed by them, as by a track.
        let videoPath = source.videoFile
        // The video's own telemetry, read once (reading it demuxes the whole file): its GPS places the frames unless
        // a track is given; a .360 file's gravity levels them either way.
        let telemetry = try videoPath.flatMap {
            try PanoramaSourceOptions.telemetry(ofVideo: $0, trackGiven: s.track != nil)
        }
        let ownTrack = s.track == nil ? telemetry.flatMap(PanoramaSourceOptions.track(of:)) : nil
        if let videoPath, s.track == nil && s.route == nil && !hasDirections, ownTrack == nil {
            if s.lookAt != nil {
                throw LapseError.usage(
                    """
                    `lookAt` needs positions, and a video without `track` has none: give `track` GPX, or use \
                    `headingOffset` or `keyframes`
                    """
                )
            }
            return try VideoPanoramaFeed(
                url: videoPath, frameStep: s.frameStep ?? Self.defaultFrameStep, panoHeading: s.panoHeading ?? 0,
                equirectangular: s.equirectangular ?? false, telemetry: telemetry)
        }
        var options = PanoramaSourceOptions(source: source, environment: environment)
        options.track = s.track
        options.keyFile = s.keyFile
        options.cacheDirectory = s.cacheDir
        options.timeout = s.timeout
        options.includeIndoor = s.includeIndoor ?? false
        options.sharedCache = s.sharedCache ?? false
        options.equirectangular = s.equirectangular ?? false
        if videoPath != nil { options.telemetry = .read(telemetry) }
        if videoPath != nil, let step = self.frameStep, step > 1, s.track != nil || ownTrack != nil {
            // Placed by positions, the video gives a frame every `spacing` metres: the frame step does not apply.
            warning?(
                "`frameStep` is for a video without positions: this one's "
                    + (s.track != nil ? "track" : "own GPS") + " places a frame every `spacing` metres instead")
        }
        if videoPath == nil, let step = self.frameStep, step > 1 {
            warning?("`frameStep` is for a video: \(source) has no frames to step over, so it is not used")
        }
        let client = try options.makeClient()
        // Tiles come a panorama at a time, several at once: report them as one running count.
        let made = try options.make(
            client: client, videoFrameStep: s.frameStep ?? Self.defaultFrameStep,
            progress: progress.map { DownloadTally(forwardingTo: $0).handler }, warning: warning)

        var route: Route
        var photoPoints: [RoutePoint]?
        var jumped = 0.0
        var afterJumps: Set<Int> = []
        if let file = s.route {
            route = try await RouteSource.file(file).load().route
        } else if let from = s.from, let to = s.to {
            let request = DirectionsRequest(
                origin: try Coordinate.parse(from), destination: try Coordinate.parse(to),
                waypoints: try (s.via ?? []).map { try Coordinate.parse($0) })
            let configuration = DirectionsConfiguration(
                service: try s.directionsService() ?? .google, keyFile: s.keyFile,
                osrmBaseURL: s.osrmURL, environment: environment, client: client)
            progress?(ProgressEvent(stage: .route, completed: 0, total: 1, unit: "routes"))
            let loaded = try await RouteSource.directions(request).load(configuration)
            for w in loaded.warnings { warning?(w) }
            progress?(ProgressEvent(stage: .route, completed: 1, total: 1, unit: "routes"))
            route = loaded.route
        } else if let track = made.track {
            route = track
        } else if let sequence = made.sequence, case .local = source {
            // Own photos without a route: their positions in capture order are the route, cut where two
            // consecutive photos are farther apart than two search radii (two trips in one folder): every point
            // inside such a jump would be a gap. Every photo is a point (each the photo taken there), unless a
            // spacing is given.
            route = Route(coordinates: sequence.map(\.coordinate))
            let jump = 2 * (s.radius ?? Self.defaultRadius)
            let (resampled, jumps) =
                try s.spacing.map { try route.resampled(every: $0, jumpsOver: jump) }
                ?? route.vertices(jumpsOver: jump)
            if let warning, let longest = jumps.max(by: { $0.length < $1.length }) {
                warning(Self.jumpWarning(jumps.count, longest, sequence, source: source.description))
            }
            photoPoints = resampled
            jumped = jumps.reduce(0) { $0 + $1.length }
            afterJumps = Self.pointsAfter(jumps, of: route, in: resampled)
        } else {
            throw LapseError.usage("no route: give `route` FILE or `from` LAT,LNG `to` LAT,LNG")
        }
        let points = try photoPoints ?? route.resampled(every: s.spacing ?? Self.defaultSpacing)
        let resolution: PanoramaResolution
        if case .level(let z) = s.zoom { // in range: checkFeedNumbers
            resolution = .zoom(z)
        } else {
            resolution = SourcePanoramaFeed.autoResolution(
                frameWidth: (s.size ?? Self.defaultSize).width, fov: s.fov ?? Self.defaultFOV)
        }
        var feed = SourcePanoramaFeed(
            source: made.source, points: points, radius: s.radius ?? Self.defaultRadius, resolution: resolution)
        feed.panoHeading = s.panoHeading
        feed.jumped = jumped
        feed.routeCopyright = route.copyright
        feed.positionsFrom = made.positionsFrom
        feed.pointsAfterJumps = afterJumps
        return feed
    }
}

extension HyperlapseSettings {
    /// Holds the numbers the feed uses (``spacing``, ``radius``, ``frameStep``, ``zoom``) to the command line's
    /// ranges.
    /// - Throws: ``LapseError`` `.usage` naming the setting, its range and the value.
    static func checkFeedNumbers(_ s: HyperlapseSettings) throws {
        try check(s.spacing, spacingRange, "spacing")
        try check(s.radius, radiusRange, "radius")
        try check(s.frameStep, frameStepRange, "frameStep")
        if case .level(let z) = s.zoom, !zoomRange.contains(z) {
            throw LapseError.usage("`zoom` takes auto or 0 to 5, not \(z)")
        }
    }

    /// Holds every number of `s` to the range its flag takes (the ranges above), so that a job file is checked
    /// exactly as the command line is.
    /// - Throws: ``LapseError`` `.usage` naming the setting, its range and the value.
    static func checkNumbers(_ s: HyperlapseSettings) throws {
        try checkFeedNumbers(s)
        try check(s.timeout, timeoutRange, "timeout")
        try check(s.gifWidth, gifWidthRange, "gifWidth")
        try check(s.crf, crfRange, "crf")
        try check(s.fov, fovRange, "fov")
        try check(s.fps?.value, fpsRange, "fps")
        try check(s.headingOffset, angleRange, "headingOffset")
        try check(s.panoHeading, angleRange, "panoHeading")
        try check(s.forward, angleRange, "forward")
    }

    private static func check(_ value: Double?, _ range: ClosedRange<Double>, _ name: String) throws {
        guard let value, !range.contains(value) else { return }
        let (low, high) = (NumberText.compact(range.lowerBound), NumberText.compact(range.upperBound))
        throw LapseError.usage("`\(name)` takes \(low) to \(high), not \(NumberText.compact(value))")
    }

    private static func check(_ value: Int?, _ range: ClosedRange<Int>, _ name: String) throws {
        guard let value, !range.contains(value) else { return }
        throw LapseError.usage("`\(name)` takes \(range.lowerBound) to \(range.upperBound), not \(value)")
    }

    /// The warning for own photos that jump: "local:DIR: photos A and B are 660 km apart (…)".
    /// The first of `points` past each of `route`'s jumps: a jump after vertex k spans the route's distances from
    /// vertex k to k + 1 (the points' distances along the route include the jumps).
    static func pointsAfter(_ jumps: [RouteJump], of route: Route, in points: [RoutePoint]) -> Set<Int> {
        var cumulative = [0.0]
        for (a, b) in zip(route.coordinates, route.coordinates.dropFirst()) {
            cumulative.append(cumulative.last! + a.distance(to: b))
        }
        return Set(
            jumps.compactMap { jump in
                let end = cumulative[jump.after + 1] - 1e-3
                return points.firstIndex { $0.distanceAlongRoute >= end }
            })
    }

    static func jumpWarning(
        _ count: Int, _ longest: RouteJump, _ photos: [PanoramaMetadata], source: String,
        meaning: String = "the video jumps there (no route points between)"
    ) -> String {
        let a = photos[longest.after].id
        let b = photos[longest.after + 1].id
        let metres = Int(longest.length.rounded())
        let far = metres >= 1000 ? "\(NumberText.compact(longest.length / 1000, digits: 1)) km" : "\(metres) m"
        let which = count == 1 ? "" : " (the farthest of \(count) such steps)"
        return
            "\(source): photos \(a) and \(b) are \(far) apart\(which): \(meaning)"
    }
}

/// Turns the per-panorama tile events of a source ("tiles: 3/6") into one running count for the whole job
/// ("download: 1234 tiles"); other events pass through.
final class DownloadTally: Sendable {
    private let tiles = Mutex(0)
    private let forward: ProgressHandler

    init(forwardingTo forward: @escaping ProgressHandler) { self.forward = forward }

    var handler: ProgressHandler {
        { [self] event in
            guard event.stage == .tiles else { return forward(event) }
            guard event.completed > 0 else { return }
            let count = tiles.withLock {
                $0 += 1
                return $0
            }
            forward(ProgressEvent(stage: .download, completed: count, total: nil, unit: "tiles"))
        }
    }
}
