// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit

enum PanoramasCommand: Command {
    static let name = "panoramas"
    static let summary =
        "Find and download the 360° panoramas along a route (Panoramax, own photos/video)"
    static let help = """
        lapse panoramas (--route FILE | --from LAT,LNG --to LAT,LNG [--via LAT,LNG]...) --source SOURCE \
        -o DIR [options]

        Finds the 360° panorama nearest to every point of a route, downloads each distinct one (tiles run
        concurrently and are cached), and writes them as equirectangular JPEGs plus manifest.json (each route
        point with the pano id chosen, its distance, heading and date). Prints a coverage summary: points with
        and without imagery, unique panoramas, consecutive duplicates dropped. A run that was killed or
        interrupted is completed by running the same command again: the panoramas it wrote are kept.

        Route:
          --route FILE            GPX, GeoJSON, KML, 'lat,lng' lines or an encoded polyline
          --from LAT,LNG --to LAT,LNG [--via LAT,LNG]...
                                  plan the route with a directions service instead
          --provider NAME         google (Routes API) | google-directions (legacy) | osrm (default google;
                                  the key is GOOGLE_MAPS_API_KEY)
          --spacing M             metres between route points (default 10; 500 000 points at most)
        Panoramas:
          --source SOURCE         panoramax    Panoramax, open imagery, no key
                                  mapillary    Mapillary, open imagery (CC BY-SA 4.0), a free client token
                                               in MAPILLARY_ACCESS_TOKEN
                                  local:DIR    your own equirectangular JPEGs with GPS in EXIF
                                  video:FILE   a 360° video: equirectangular, or a GoPro MAX .360 (positions
                                               from --track or the file's own GPS)
                                  (not google: Google's terms do not allow storing Street View images)
          --equirectangular       a 2:1 video or photo is 360° though nothing says so (no spherical metadata or
                                  GPano tags, edges that do not meet as a 360° picture's do)
          --track GPX             for video: a GPS track with times (video time 0 = the track's first time);
                                  without --route the track itself is the route
          --frame-step N          for video without a track: take every N-th frame (default 30; as
                                  hyperlapse's --frame-step; --every N is the old name)
          --radius M              search radius in metres (default 50)
          --zoom auto|0-5         Google zoom level; auto picks the lowest at least --width wide (default auto)
          --width W               the width the panoramas are needed at, for --zoom auto and to scale down
                                  Panoramax/Mapillary/local/video images (default 4096)
        Network and cache:
          --cache-dir DIR         tile and metadata cache (default $XDG_CACHE_HOME/lapse or ~/.cache/lapse)
          --no-cache              neither read nor write the cache
          --concurrency N         HTTP requests at once (default 8)
          --timeout SECONDS       give up on an HTTP request after this long, retries included (default: 30 s
                                  an attempt)
          --key-file FILE         file holding the Google API key instead of GOOGLE_MAPS_API_KEY
          --maptiles-url URL      Map Tiles API base (default https://tile.googleapis.com, or $LAPSE_MAPTILES_URL)
          --panoramax-url URL     Panoramax API (default https://api.panoramax.xyz/api, or $LAPSE_PANORAMAX_URL)
          --mapillary-url URL     Mapillary API (default https://graph.mapillary.com, or $LAPSE_MAPILLARY_URL;
                                  https, or http to this machine only)
        Output:
          -o, --output DIR        folder for the images and manifest.json (created when missing; --out too)
          -y, --overwrite         replace files from an earlier run
          --quiet, --json         no summary / a JSON summary on stdout

        Without a route, local:DIR writes every usable photo and video:FILE every N-th frame.
        A rerun after an interruption fetches only the tiles missing from the cache.

        Examples:
          lapse panoramas --route ride.gpx --source panoramax --out panos/
          lapse panoramas --from 48.8584,2.2945 --to 48.8606,2.3376 --provider osrm --source panoramax --out paris/
          lapse panoramas --route walk.gpx --source local:~/Pictures/theta --radius 20 --out walk/
          lapse panoramas --source video:drive.mp4 --track drive.gpx --spacing 20 --out frames/
        """

    static func run(_ arguments: inout Arguments, console: Console) async throws {
        let env = ProcessInfo.processInfo.environment
        let output = try OutputOptions(&arguments, aliases: ["--out"])
        guard let out = output.path else { throw LapseError.usage("no output folder (-o DIR)") }
        guard let sourceText = try arguments.value("--source") else {
            throw LapseError.usage("no panorama source (--source google|panoramax|mapillary|local:DIR|video:FILE)")
        }
        let routeFile = try arguments.value("--route")
        let from = try arguments.value("--from").map { try coordinate($0, "--from") }
        let to = try arguments.value("--to").map { try coordinate($0, "--to") }
        let via = try arguments.values("--via").map { try coordinate($0, "--via") }
        let provider = try arguments.choice("--provider", DirectionsService.allCases.map(\.rawValue)) ?? "google"
        let osrmURL = try arguments.value("--osrm-url")
        let spacing = try arguments.double("--spacing", in: 0.1...100_000) ?? 10
        let trackFile = try arguments.value("--track")
        // One name in every command (hyperlapse's --frame-step); --every, the old name, still works.
        let stepFlag = try arguments.int("--frame-step", in: HyperlapseSettings.frameStepRange)
        let oldFlag = try arguments.int("--every", in: HyperlapseSettings.frameStepRange)
        if stepFlag != nil && oldFlag != nil { throw LapseError.usage("give --frame-step or --every, not both") }
        if oldFlag != nil { console.warn("--every is now --frame-step (the same as hyperlapse's)") }
        let every = stepFlag ?? oldFlag ?? 30
        let radius = try arguments.double("--radius", in: 1...10_000) ?? 50
        let zoomText = try arguments.value("--zoom") ?? "auto"
        let width = try arguments.int("--width", in: 64...32768) ?? 4096
        let cacheDir = try arguments.value("--cache-dir")
        let noCache = arguments.flag("--no-cache")
        let concurrency = try arguments.int("--concurrency", in: 1...64) ?? 8
        let keyFile = try arguments.value("--key-file")
        let maptilesURL = try arguments.value("--maptiles-url")
        let panoramaxURL = try arguments.value("--panoramax-url")
        let mapillaryURL = try arguments.value("--mapillary-url")
        let equirectangular = arguments.flag("--equirectangular")
        let overwrite = output.overwrite
        let timeout = try NetworkOptions(&arguments).timeout
        let extra = try arguments.positionals()
        guard extra.isEmpty else { throw LapseError.usage("unexpected argument '\(extra[0])'") }

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
        options.track = trackFile
        options.keyFile = keyFile
        options.mapTilesBaseURL = maptilesURL
        options.panoramaxBaseURL = panoramaxURL
        options.mapillaryBaseURL = mapillaryURL
        options.equirectangular = equirectangular
        options.cacheDirectory = cacheDir
        options.useCache = !noCache
        options.concurrency = concurrency
        options.timeout = timeout
        let route: PanoramasJob.RouteChoice
        if let routeFile {
            route = .file(routeFile)
        } else if let from, let to {
            route = .directions(
                DirectionsRequest(origin: from, destination: to, waypoints: via),
                service: DirectionsService(rawValue: provider) ?? .google, osrmBaseURL: osrmURL)
        } else {
            route = .none
        }
        var job = PanoramasJob(source: options, route: route, outputDirectory: out)
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
            json: Summary.Panoramas(
                source: run.sourceName, output: out, manifest: result.manifestPath, points: c.points,
                withImagery: c.withImagery, withoutImagery: c.withoutImagery, uniquePanoramas: c.uniquePanoramas,
                consecutiveDuplicates: c.consecutiveDuplicates, written: result.written.map(\.file),
                failed: result.failed.map { .init(id: $0.id, reason: $0.reason) }, downloaded: result.tilesDownloaded,
                fromCache: result.tilesFromCache, placeholderTiles: placeholders, resumed: result.resumed))
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
