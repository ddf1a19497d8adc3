// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The 360° panoramas along a route, exported to a folder with a manifest (`lapse panoramas`): the route planned
/// with a directions service, read from a file, taken from a video's track or — for your photos and a video
/// without a track — the source's own sequence; the panorama nearest every point, each written once.
///
/// One HTTP client and one cache serve the route and the panoramas (``PanoramaSourceOptions/makeClient()``). The
/// manifest is checked before the directions service is asked, so a refused overwrite costs no request.
public struct PanoramasJob: Sendable {
    /// Where the route comes from.
    public enum RouteChoice: Sendable {
        /// A route file (GPX, GeoJSON, KML, `lat,lng` lines, an encoded polyline, a saved Google answer).
        case file(URL)
        /// Planned by a directions service; `osrmBaseURL` for ``DirectionsService/osrm`` (nil: the environment's
        /// `LAPSE_OSRM_URL`, else the public demo server).
        case directions(DirectionsRequest, service: DirectionsService, osrmBaseURL: String?)
        /// None: a video's track, else the source's own sequence (your photos in capture order, every
        /// ``PanoramasJob/videoFrameStep``-th frame of a video).
        case none
    }

    /// Which panorama source, and how to reach it.
    public var source: PanoramaSourceOptions
    /// The route to look panoramas up along (a file, a planned route, or none where the source has a sequence).
    public var route: RouteChoice
    /// The folder to write the images and `manifest.json` to (created when missing).
    public var outputDirectory: URL
    /// Metres between route points (default 10).
    public var spacing: Double = 10
    /// A video without a track: every N-th frame (default 30).
    public var videoFrameStep = 30
    /// Search radius for the nearest panorama, metres (default 50).
    public var radius: Double = 50
    /// The size the panoramas are written at (default: at least 4096 pixels wide).
    public var resolution: PanoramaResolution = .atLeast(width: 4096)
    /// Replace the files of an earlier run.
    public var overwrite = false

    /// A job writing the panoramas of `source` along `route` into `outputDirectory` (created when missing).
    public init(source: PanoramaSourceOptions, route: RouteChoice, outputDirectory: URL) {
        self.source = source
        self.route = route
        self.outputDirectory = outputDirectory
    }

    /// Why Street View panoramas are not exported: the Google Maps Platform terms forbid pre-fetching, storing
    /// and bulk-downloading its content outside the services.
    public static let googleRefusal =
        """
        `source` google: Google's terms do not allow storing or bulk-downloading Street View images, so they are not \
        exported; make a hyperlapse of them instead (lapse hyperlapse --source google)
        """

    /// What was exported, and from which source. Encoded as `lapse panoramas --json` prints it
    /// (``LapseCore/SummaryKey``): source, output (the folder), manifest, points, withImagery, withoutImagery,
    /// uniquePanoramas, consecutiveDuplicates, written (file names), failed (`id`, `reason`), downloaded, fromCache,
    /// placeholderTiles, resumed.
    public struct Result: Sendable, Encodable {
        /// The source's name (`google`, `panoramax`, `local`, `video`).
        public var sourceName: String
        /// The folder written to, as the job was given it.
        public var outputDirectory: URL
        /// What the export did: matches, coverage, files written, failures, downloads.
        public var export: PanoramaExport.Result
        /// All-black placeholder tiles found (and not used) in the panoramas written.
        public var placeholderTiles: Int { export.written.reduce(0) { $0 + $1.placeholderTiles.count } }

        /// See the type's documentation for the keys.
        public func encode(to encoder: any Encoder) throws {
            struct Failure: Encodable {
                var id: String
                var reason: String
            }
            let c0 = export.coverage
            var c = encoder.container(keyedBy: SummaryKey.self)
            try c.encode(sourceName, forKey: "source")
            try c.encode(outputDirectory.shown, forKey: "output")
            try c.encode(export.manifest.path, forKey: "manifest")
            try c.encode(c0.points, forKey: "points")
            try c.encode(c0.withImagery, forKey: "withImagery")
            try c.encode(c0.withoutImagery, forKey: "withoutImagery")
            try c.encode(c0.uniquePanoramas, forKey: "uniquePanoramas")
            try c.encode(c0.consecutiveDuplicates, forKey: "consecutiveDuplicates")
            try c.encode(export.written.map(\.file), forKey: "written")
            try c.encode(export.failed.map { Failure(id: $0.id, reason: $0.reason) }, forKey: "failed")
            try c.encode(export.tilesDownloaded, forKey: "downloaded")
            try c.encode(export.tilesFromCache, forKey: "fromCache")
            try c.encode(placeholderTiles, forKey: "placeholderTiles")
            try c.encode(export.resumed, forKey: "resumed")
        }
    }

    /// Runs the job. Panoramas that cannot be fetched are in ``Result/export``'s `failed` (what was written stays).
    /// - Parameters:
    ///   - progress: receives download progress.
    ///   - warning: receives one line per file skipped, per routing warning and per panorama that failed.
    /// - Throws: ``LapseError`` `.usage` for Google Street View (``googleRefusal``), a `.track` with another source
    ///   than a video, or no route where the
    ///   source has no sequence of its own; `.output` for a manifest that exists without ``overwrite``; the
    ///   source's, the route file's and the directions service's errors.
    /// - Returns: what was exported, and from which source.
    public func run(progress: ProgressHandler? = nil, warning: WarningHandler? = nil) async throws -> Result {
        if source.source == .google { throw LapseError.usage(Self.googleRefusal) }
        let client = try source.makeClient()
        let made = try source.make(client: client, videoFrameStep: videoFrameStep, progress: progress, warning: warning)

        var export = PanoramaExport(
            source: made.source, outputDirectory: outputDirectory)
        export.radius = radius
        export.resolution = resolution
        export.overwrite = overwrite
        export.progress = progress
        export.warning = warning
        try export.checkManifest() // before the directions service is asked

        let planned: Route?
        switch route {
        case .file(let path):
            planned = try await RouteSource.file(path).load().route
        case .directions(let request, let service, let osrmBaseURL):
            let configuration = DirectionsConfiguration(
                service: service, keyFile: source.keyFile, osrmBaseURL: osrmBaseURL,
                environment: source.environment, client: client)
            let loaded = try await RouteSource.directions(request).load(configuration)
            for w in loaded.warnings { warning?(w) }
            planned = loaded.route
        case .none:
            planned = made.track
        }
        let result: PanoramaExport.Result
        if let planned {
            result = try await export.run(points: try planned.resampled(every: spacing))
        } else if let sequence = made.sequence {
            // Your photos of two trips: said as the hyperlapse says it (photos farther apart than two radii), once
            // the export has run (a run refused says only why).
            let jumps = try Route(coordinates: sequence.map(\.coordinate)).vertices(jumpsOver: 2 * radius).jumps
            result = try await export.run(panoramas: sequence)
            if let warning, let longest = jumps.max(by: { $0.length < $1.length }) {
                warning(
                    HyperlapseSettings.jumpWarning(
                        jumps.count, longest, sequence, source: SourcePanoramaFeed.displayName(made.source.name),
                        meaning: "two trips (neither photo's heading is taken from the other)"))
            }
        } else {
            throw LapseError.usage("no route: give a route file, or a start and an end to plan one")
        }
        return Result(sourceName: made.source.name, outputDirectory: outputDirectory, export: result)
    }
}
