// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseTelemetry

/// How to reach a panorama source, as `lapse panoramas` and `lapse hyperlapse` name it: `google`, `panoramax`,
/// `mapillary`, `local:DIR` or `video:FILE`, with its key, base URLs and cache.
///
/// Environment variables fill in what is not given: `GOOGLE_MAPS_API_KEY`, `MAPILLARY_ACCESS_TOKEN`,
/// `LAPSE_MAPTILES_URL`, `LAPSE_PANORAMAX_URL`, `LAPSE_MAPILLARY_URL` (the base URLs let tests and private mirrors
/// stand in for the public services).
public struct PanoramaSourceOptions: Sendable {
    /// Which source to make (``PanoramaSourceSetting``).
    public var source: PanoramaSourceSetting
    /// A GPX track giving a `video:` source's positions by time.
    public var track: URL?
    /// A file whose first line is the Google Maps API key (else `GOOGLE_MAPS_API_KEY`).
    public var keyFile: URL?
    /// The Map Tiles API's base URL (default `https://tile.googleapis.com`, or `LAPSE_MAPTILES_URL` from
    /// ``environment``).
    public var mapTilesBaseURL: String?
    /// The Panoramax API's base URL (default `https://api.panoramax.xyz/api`, or `LAPSE_PANORAMAX_URL`).
    public var panoramaxBaseURL: String?
    /// The Mapillary Graph API root (else `LAPSE_MAPILLARY_URL`, else `https://graph.mapillary.com`).
    public var mapillaryBaseURL: String?
    /// Cache folder; `nil` means the default (`$XDG_CACHE_HOME/lapse`).
    public var cacheDirectory: URL?
    /// Neither read nor write the cache.
    public var useCache = true
    /// The cache folder is shared with other users (``DiskCache/shared``): `private` answers are not written to it.
    public var sharedCache = false
    /// HTTP requests at once.
    public var concurrency = 8
    /// Deadline of each HTTP request in seconds, its retries included (nil: ``HTTPClient/Configuration``'s
    /// defaults: 30 s an attempt, no total).
    public var timeout: Double?
    /// Where the keys, tokens and base URLs not set here are read (`GOOGLE_MAPS_API_KEY`, `MAPILLARY_ACCESS_TOKEN`,
    /// `LAPSE_*_URL`, `XDG_CACHE_HOME`); empty by default: the library reads no environment itself.
    public var environment: [String: String]
    /// Google: take indoor panoramas too (``GoogleStreetViewSource/includeIndoor``).
    public var includeIndoor = false
    /// `video:` and `local:`: the video or the 2:1 photos are equirectangular though nothing says so (see
    /// ``VideoPanoramaSource/projection(of:url:equirectangular:)``, ``LocalPhotoSource/refusal(_:)``).
    public var equirectangular = false
    /// `video:`: its own telemetry (``LapseTelemetry/CameraTelemetry/read(ofVideo:)``) when the caller has read it
    /// already; `.unread` (the default): ``make(client:videoFrameStep:progress:warning:)`` reads it.
    public var telemetry = Telemetry.unread

    /// Whether a video's own telemetry has been read, and what it was.
    public enum Telemetry: Sendable {
        case unread
        case read(CameraTelemetry?)
    }

    /// - Parameters:
    ///   - source: which source to make.
    ///   - environment: where `GOOGLE_MAPS_API_KEY`, the `LAPSE_*_URL` base URLs and the cache's
    ///     `XDG_CACHE_HOME`/`HOME` are looked up (the library reads no environment of its own; the command line
    ///     passes its process's).
    public init(source: PanoramaSourceSetting, environment: [String: String] = [:]) {
        self.source = source
        self.environment = environment
    }

    /// The Google key from ``keyFile`` or the environment, when there is one.
    public func googleKey() throws -> String? {
        try GoogleDirections.apiKey(keyFile: keyFile, environment: environment)
    }

    /// The Mapillary access token from the environment (`MAPILLARY_ACCESS_TOKEN`), when there is one.
    public var mapillaryToken: String? {
        environment[MapillarySource.tokenVariable].map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .flatMap { $0.isEmpty ? nil : $0 }
    }

    /// One HTTP client for every request of a job (routes and panoramas), with the keys redacted from messages.
    public func makeClient() throws -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.maxConcurrentRequests = concurrency
        if let timeout {
            configuration.requestTimeout = timeout
            configuration.totalTimeout = timeout
        }
        if let key = try googleKey() { configuration.secrets.append(key) }
        if let token = mapillaryToken { configuration.secrets.append(token) }
        return HTTPClient(configuration: configuration)
    }

    /// A made source, with what a route-less job can use.
    public struct Made: Sendable {
        /// The source made.
        public var source: any PanoramaSource
        /// For `local:` the usable photos in capture order, for `video:` without a track every N-th frame
        /// (`videoFrameStep`): what to show when there is no route.
        public var sequence: [PanoramaMetadata]?
        /// For `local:` the files that were skipped (not 2:1, no GPS) and why.
        public var skipped: [(file: String, reason: String)]
        /// For `video:` the track, when one was given or the video's own telemetry has one (it is then the route
        /// unless another is given).
        public var track: Route?
        /// Where a `video:` source's positions came from when not from a given track: "the camera's GPS (GPMF)".
        public var positionsFrom: String?
    }

    /// A video's telemetry as a job needs it: read (and required to parse) when no track is given, for its GPS;
    /// with a track, only a GoPro MAX `.360` file's, for its gravity, and then a track that does not parse is left
    /// out rather than the video.
    /// - Throws: ``LapseError`` `.invalidInput` for telemetry that does not parse when no track is given.
    public static func telemetry(ofVideo url: URL, trackGiven: Bool) throws -> CameraTelemetry? {
        if !trackGiven { return try CameraTelemetry.read(ofVideo: url) }
        return url.lowercasedExtension == "360" ? try? CameraTelemetry.read(ofVideo: url) : nil
    }

    /// A video's own GPS track from its telemetry (GoPro's GPMF `gpmd` or Google's CAMM `camm` track), in the
    /// shape a given track takes: points timed in video seconds, and the offset that makes video time 0 the video's
    /// start (see ``VideoPanoramaSource/trackOffset``); nil when the telemetry has fewer than two positions with a
    /// fix. The track is named for where it came from: "the camera's GPS (GPMF)" or "(CAMM)".
    public static func track(of telemetry: CameraTelemetry) -> (track: Route, offset: Double)? {
        let fixes = telemetry.fixes
        guard fixes.count >= 2 else { return nil }
        let points = fixes.map {
            TrackPoint($0.coordinate, elevation: $0.altitude, time: Date(timeIntervalSince1970: $0.time))
        }
        return (Route(points: points, name: "the camera's GPS (\(telemetry.format.rawValue))"), -fixes[0].time)
    }

    /// Makes the source.
    /// - Parameters:
    ///   - client: the job's HTTP client (``makeClient()``).
    ///   - videoFrameStep: for `video:` without a track, the step of ``Made/sequence``.
    ///   - progress: download progress of tiles.
    ///   - warning: told of pictures a source leaves out: your photos that are skipped (``Made/skipped``, one line
    ///     each, here), and while looking up (Panoramax: a cropped 360° picture that cannot be placed in its full
    ///     frame; Mapillary: a 360° image that is not 2:1; Google: an indoor panorama left out), once each.
    /// - Throws: ``LapseError`` `.usage` for an unknown source, `--track` with another source or a bad base URL;
    ///   `.denied` for Google without a key or Mapillary without a token; `.invalidInput` for an unreadable folder,
    ///   video or track.
    /// - Returns: the source, with what a route-less job can use.
    public func make(
        client: HTTPClient, videoFrameStep: Int = 30, progress: ProgressHandler? = nil,
        warning: WarningHandler? = nil
    ) throws -> Made {
        if track != nil && source.videoFile == nil { throw LapseError.usage("`track` is for `source` video:FILE") }
        var cache: DiskCache? =
            useCache
            ? try DiskCache(
                directory: cacheDirectory
                    ?? DiskCache.defaultDirectory(environment: environment), shared: sharedCache)
            : nil
        cache?.warning = warning
        switch source {
        case .google:
            guard let key = try googleKey() else {
                throw LapseError(
                    .denied, "Google Street View", "no API key: set GOOGLE_MAPS_API_KEY or give `keyFile`")
            }
            let base =
                try DirectionsConfiguration.serviceURL(
                    mapTilesBaseURL ?? environment["LAPSE_MAPTILES_URL"], option: "`mapTilesBaseURL`")
                ?? GoogleStreetViewSource.defaultBaseURL
            var google = try GoogleStreetViewSource(
                apiKey: key, baseURL: base, client: client, cache: cache, progress: progress)
            google.includeIndoor = includeIndoor
            google.indoorWarning = warning
            return Made(source: google, sequence: nil, skipped: [], track: nil)
        case .panoramax:
            let base =
                try DirectionsConfiguration.serviceURL(
                    panoramaxBaseURL ?? environment["LAPSE_PANORAMAX_URL"], option: "`panoramaxBaseURL`")
                ?? PanoramaxSource.defaultBaseURL
            return Made(
                source: PanoramaxSource(baseURL: base, client: client, cache: cache, warning: warning),
                sequence: nil, skipped: [], track: nil)
        case .mapillary:
            guard let token = mapillaryToken else { throw MapillarySource.noToken }
            let option = mapillaryBaseURL != nil ? "`mapillaryBaseURL`" : "LAPSE_MAPILLARY_URL"
            let base =
                try DirectionsConfiguration.serviceURL(
                    mapillaryBaseURL ?? environment["LAPSE_MAPILLARY_URL"], option: option)
                ?? MapillarySource.defaultBaseURL
            // The token goes with every request: never in clear over the network (a stand-in on this machine may).
            if base.scheme?.lowercased() == "http",
                !["127.0.0.1", "localhost"].contains(base.host ?? "")
            {
                throw LapseError.usage(
                    "\(option) must be an https URL (the access token would travel in clear); plain http only to "
                        + "this machine (127.0.0.1, localhost)")
            }
            return Made(
                source: try MapillarySource(
                    token: token, baseURL: base, client: client, cache: cache, warning: warning),
                sequence: nil, skipped: [], track: nil)
        case .local(let directory):
            let local = try LocalPhotoSource(directory: directory, equirectangular: equirectangular)
            for s in local.skipped { warning?("skipped \(s.file): \(s.reason)") }
            return Made(
                source: local, sequence: local.panoramas, skipped: local.skipped.map { ($0.file, $0.reason) },
                track: nil)
        case .video(let file):
            let path = file
            var track = try track.map { try RouteFile.read($0) }
            var offset = 0.0
            var positionsFrom: String?
            let read: CameraTelemetry?
            switch telemetry {
            case .read(let given): read = given
            case .unread: read = try Self.telemetry(ofVideo: path, trackGiven: track != nil)
            }
            if track == nil, let own = read.flatMap(Self.track(of:)) {
                (track, offset, positionsFrom) = (own.track, own.offset, own.track.name)
            }
            let video = try VideoPanoramaSource(
                url: path, track: track, trackOffset: offset, equirectangular: equirectangular, telemetry: read)
            return Made(
                source: video, sequence: track == nil ? video.frames(every: videoFrameStep) : nil, skipped: [],
                track: track, positionsFrom: positionsFrom)
        }
    }
}
