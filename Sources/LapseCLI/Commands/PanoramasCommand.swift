// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit

enum PanoramasCommand: Command {
    static let name = "panoramas"
    static let summary =
        "Find and download the 360° panoramas along a route (Panoramax, own photos/video)"
    private typealias H = HyperlapseCommand
    static let every = Option("--every", value: "N", help: "the old name of --frame-step")
    static let width = Option(
        "--width", value: "W",
        help: """
            the width the panoramas are needed at, for --zoom auto and to scale down Panoramax/Mapillary/local/video \
            images (default 4096)
            """)
    static let noCache = Option("--no-cache", help: "neither read nor write the cache")
    static let concurrency = Option("--concurrency", value: "N", help: "HTTP requests at once (default 8)")
    static let mapTilesURL = Option(
        "--maptiles-url", value: "URL", setting: "mapTilesBaseURL",
        help: "Map Tiles API base (default https://tile.googleapis.com, or $LAPSE_MAPTILES_URL)")
    static let panoramaxURL = Option(
        "--panoramax-url", value: "URL", setting: "panoramaxBaseURL",
        help: "Panoramax API (default https://api.panoramax.xyz/api, or $LAPSE_PANORAMAX_URL)")
    static let mapillaryURL = Option(
        "--mapillary-url", value: "URL", setting: "mapillaryBaseURL",
        help: """
            Mapillary API (default https://graph.mapillary.com, or $LAPSE_MAPILLARY_URL; https, or http to this \
            machine only)
            """)
    static let output = OutputOptions.output.also("--out").described(
        "folder for the images and manifest.json (created when missing)", value: "DIR")

    static let page = CommandHelp(
        usage: """
            lapse panoramas (--route FILE | --from LAT,LNG --to LAT,LNG [--via LAT,LNG]...) --source SOURCE -o DIR \
            [options]
            """,
        about: """
            Finds the 360° panorama nearest to every point of a route, downloads each distinct one (tiles run
            concurrently and are cached), and writes them as equirectangular JPEGs plus manifest.json (each route
            point with the pano id chosen, its distance, heading and date). Prints a coverage summary: points with
            and without imagery, unique panoramas, consecutive duplicates dropped. A run that was killed or
            interrupted is completed by running the same command again: the panoramas it wrote are kept.
            """,
        sections: [
            HelpSection(
                "Route",
                [
                    H.route.described("GPX, GeoJSON, KML, 'lat,lng' lines or an encoded polyline"),
                    H.from.described("plan the route with a directions service instead, from here"), H.to,
                    H.via.described("a point on the way (repeatable)"),
                    H.provider.described(
                        """
                        google (Routes API) | google-directions (legacy) | osrm (default google; the key is \
                        GOOGLE_MAPS_API_KEY)
                        """
                    ),
                    H.osrmURL.described("your own OSRM server (default: $LAPSE_OSRM_URL or the public demo server)"),
                    H.spacing.described("metres between route points (default 10; 500 000 points at most)")
                ]),
            HelpSection(
                "Panoramas",
                [
                    H.source.described(
                        """
                        panoramax    Panoramax, open imagery, no key
                        mapillary    Mapillary, open imagery (CC BY-SA 4.0), a free client token
                                     in MAPILLARY_ACCESS_TOKEN
                        local:DIR    your own equirectangular JPEGs with GPS in EXIF
                        video:FILE   a 360° video: equirectangular, or a GoPro MAX .360 (positions
                                     from --track or the file's own GPS)
                        (not google: Google's terms do not allow storing Street View images)
                        """),
                    H.equirectangular,
                    H.track.described(
                        """
                        for video: a GPS track with times (video time 0 = the track's first time); without --route the \
                        track itself is the route
                        """),
                    H.frameStep.described(
                        "for video without a track: take every N-th frame (default 30; as hyperlapse's --frame-step)"),
                    every,
                    H.radius.described("search radius in metres (default 50)"),
                    H.zoom.described("Google zoom level; auto picks the lowest at least --width wide (default auto)"),
                    width
                ]),
            HelpSection(
                "Network and cache",
                [
                    H.cacheDir.described("tile and metadata cache (default $XDG_CACHE_HOME/lapse or ~/.cache/lapse)"),
                    noCache, concurrency, NetworkOptions.timeout, H.keyFile, mapTilesURL, panoramaxURL, mapillaryURL
                ]),
            HelpSection(
                "Output",
                [output, OutputOptions.overwrite.described("replace files from an earlier run")],
                more: [GlobalOptions.row(progress: false)])
        ],
        notes: """
            Without a route, local:DIR writes every usable photo and video:FILE every N-th frame.
            A rerun after an interruption fetches only the tiles missing from the cache.
            """,
        examples: [
            "lapse panoramas --route ride.gpx --source panoramax --out panos/",
            "lapse panoramas --from 48.8584,2.2945 --to 48.8606,2.3376 --provider osrm --source panoramax --out paris/",
            "lapse panoramas --route walk.gpx --source local:~/Pictures/theta --radius 20 --out walk/",
            "lapse panoramas --source video:drive.mp4 --track drive.gpx --spacing 20 --out frames/"
        ])

    static func run(_ arguments: inout Arguments, console: Console) async throws {
        let env = ProcessInfo.processInfo.environment
        let output = try OutputOptions(&arguments, output: Self.output)
        let sourceGiven = try arguments.value(H.source)
        let routeFile = try arguments.value(H.route)
        let from = try arguments.value(H.from).map { try coordinate($0, "--from") }
        let to = try arguments.value(H.to).map { try coordinate($0, "--to") }
        let via = try arguments.values(H.via).map { try coordinate($0, "--via") }
        let provider = try arguments.choice(H.provider, DirectionsService.allCases.map(\.rawValue)) ?? "google"
        let osrmURL = try arguments.value(H.osrmURL)
        let spacing = try arguments.double(H.spacing, in: 0.1...100_000) ?? 10
        let trackFile = try arguments.value(H.track)
        // One name in every command (hyperlapse's --frame-step); --every, the old name, still works.
        let stepFlag = try arguments.int(H.frameStep, in: HyperlapseSettings.frameStepRange)
        let oldFlag = try arguments.int(Self.every, in: HyperlapseSettings.frameStepRange)
        if stepFlag != nil && oldFlag != nil { throw LapseError.usage("give --frame-step or --every, not both") }
        if oldFlag != nil { console.warn("--every is now --frame-step (the same as hyperlapse's)") }
        let every = stepFlag ?? oldFlag ?? 30
        let radius = try arguments.double(H.radius, in: 1...10_000) ?? 50
        let zoomText = try arguments.value(H.zoom) ?? "auto"
        let width = try arguments.int(Self.width, in: 64...32768) ?? 4096
        let cacheDir = try arguments.value(H.cacheDir)
        let noCache = arguments.flag(Self.noCache)
        let concurrency = try arguments.int(Self.concurrency, in: 1...64) ?? 8
        let keyFile = try arguments.value(H.keyFile)
        let maptilesURL = try arguments.value(Self.mapTilesURL)
        let panoramaxURL = try arguments.value(Self.panoramaxURL)
        let mapillaryURL = try arguments.value(Self.mapillaryURL)
        let equirectangular = arguments.flag(H.equirectangular)
        let overwrite = output.overwrite
        let timeout = try NetworkOptions(&arguments).timeout
        let extra = try arguments.positionals()
        guard extra.isEmpty else { throw LapseError.usage("unexpected argument '\(extra[0])'") }
        guard let out = output.path else { throw LapseError.usage("no output folder (-o DIR)") }
        guard let sourceText = sourceGiven else {
            throw LapseError.usage("no panorama source (--source google|panoramax|mapillary|local:DIR|video:FILE)")
        }

        let resolution: PanoramaResolution
        if zoomText == "auto" {
            resolution = .atLeast(width: width)
        } else if let z = Int(zoomText), (0...5).contains(z) {
            resolution = .zoom(z)
        } else {
            throw LapseError.usage("--zoom takes auto or 0 to 5, not '\(zoomText)'")
        }
        if routeFile != nil && (from != nil || to != nil || !via.isEmpty) {
            throw LapseError.usage("give either --route or --from/--to, not both")
        }
        if (from == nil) != (to == nil) { throw LapseError.usage("give both --from and --to") }
        if !via.isEmpty && from == nil { throw LapseError.usage("--via needs --from and --to") }
        let source = try PanoramaSourceSetting(parsing: sourceText)
        if trackFile != nil && source.videoFile == nil {
            throw LapseError.usage("--track is for --source video:FILE")
        }

        if source == .google { throw LapseError.usage(PanoramasJob.googleRefusal) }
        if routeFile == nil && from == nil && (source == .panoramax || source == .mapillary) {
            throw LapseError.usage("no route: give --route FILE or --from/--to")
        }

        var options = PanoramaSourceOptions(source: source, environment: env)
        options.track = trackFile.map { URL(fileURLWithPath: $0) }
        options.keyFile = keyFile.map { URL(fileURLWithPath: $0) }
        options.mapTilesBaseURL = maptilesURL
        options.panoramaxBaseURL = panoramaxURL
        options.mapillaryBaseURL = mapillaryURL
        options.equirectangular = equirectangular
        options.cacheDirectory = cacheDir.map { URL(fileURLWithPath: $0, isDirectory: true) }
        options.useCache = !noCache
        options.concurrency = concurrency
        options.timeout = timeout
        let route: PanoramasJob.RouteChoice
        if let routeFile {
            route = .file(URL(fileURLWithPath: routeFile))
        } else if let from, let to {
            route = .directions(
                DirectionsRequest(origin: from, destination: to, waypoints: via),
                service: DirectionsService(rawValue: provider) ?? .google, osrmBaseURL: osrmURL)
        } else {
            route = .none
        }
        var job = PanoramasJob(
            source: options, route: route, outputDirectory: URL(fileURLWithPath: out, isDirectory: true))
        job.spacing = spacing
        job.videoFrameStep = every
        job.radius = radius
        job.resolution = resolution
        job.overwrite = overwrite
        let run = try await job.run(progress: console.progress, warning: console.warning)
        let result = run.export
        let placeholders = run.placeholderTiles

        let c = result.coverage
        var lines = [
            "\(c.points) route points: \(c.withImagery) with imagery, \(c.withoutImagery) without",
            """
            \(counted(c.uniquePanoramas, "unique panorama")), \
            \(counted(c.consecutiveDuplicates, "consecutive duplicate")) dropped
            """,
            "wrote \(counted(result.written.count, "panorama")) and manifest.json to \(out)"
                + (result.resumed > 0 ? " (\(result.resumed) of them kept from the unfinished earlier run)" : "")
        ]
        if result.tilesDownloaded + result.tilesFromCache > 0 {
            lines.append("downloads: \(result.tilesDownloaded) fetched, \(result.tilesFromCache) from the cache")
        }
        if !result.failed.isEmpty {
            lines.append("\(counted(result.failed.count, "panorama")) could not be fetched (see warnings)")
        }
        if placeholders > 0 { lines.append("\(placeholders) all-black placeholder tiles detected and not used") }
        console.summary(
            lines,
            json: run)
        // What was written stays (and is in the manifest); the run still failed.
        if let first = result.failed.first {
            let more = result.failed.count > 1 ? " (and \(result.failed.count - 1) more, see the warnings)" : ""
            throw LapseError(
                .other, out,
                """
                \(counted(result.failed.count, "panorama")) could not be fetched: pano \(first.id): \
                \(first.reason)\(more)
                """
            )
        }
    }

    private static func coordinate(_ text: String, _ option: String) throws -> Coordinate {
        do { return try Coordinate.parse(text) } catch let error as LapseError {
            throw LapseError.usage("\(option) \(error.reason)")
        }
    }
}
