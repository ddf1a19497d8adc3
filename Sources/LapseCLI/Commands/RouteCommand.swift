// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit

enum RouteCommand: Command {
    static let name = "route"
    static let summary = "Plan a route (Google Routes API, OSRM) or read a route file, optionally every N metres"
    static let help = """
        lapse route (--from LAT,LNG --to LAT,LNG [--via LAT,LNG]... [--provider NAME] | --input FILE) \
        [--spacing M] -o FILE

        Plans a route with a directions service, or reads one from a file, and writes it as GPX or GeoJSON,
        optionally resampled to a point every M metres. Prints the distance, the number of points and the provider.

        Route from a directions service:
          --from LAT,LNG          start, in decimal degrees (e.g. 43.6532,-79.3832)
          --to LAT,LNG            end
          --via LAT,LNG           a point on the way, repeat in travel order (Google: any number, 25 a request;
                                  the Routes API passes through it, the legacy API and OSRM stop there)
          --provider NAME         google (the Routes API; default) | google-directions (the legacy Directions
                                  API, for keys of projects that still have it) | osrm (OpenStreetMap data)
          --mode MODE             driving | walking | cycling (default driving)
          --key-file FILE         file holding the Google Maps API key (default: $GOOGLE_MAPS_API_KEY)
          --google-url URL        the Google service's base URL (default https://routes.googleapis.com or
                                  $LAPSE_GOOGLE_ROUTES_URL; legacy: https://maps.googleapis.com or
                                  $LAPSE_GOOGLE_DIRECTIONS_URL)
          --osrm-url URL          OSRM server (default https://router.project-osrm.org, or $LAPSE_OSRM_URL);
                                  your own server works, e.g. http://localhost:5000
          --timeout SECONDS       give up on an HTTP request after this long, retries included (default: 30 s
                                  an attempt)
        Route from a file:
          --input FILE            .gpx (tracks or routes), .geojson/.json, .kml, .txt/.csv (lat,lng lines),
                                  .polyline / .polyline6 (encoded polyline), a saved Google Directions or Routes
                                  API answer (.json); other names: detected from the content
                                  (also --route FILE, as hyperlapse and preview name it)
          --input-format FMT      gpx | geojson | kml | lines | polyline | polyline6 | google-directions |
                                  google-routes (overrides the detection)
        Output:
          -o, --output FILE       .gpx or .geojson
          --spacing M             resample to a point every M metres along the path (start and end kept;
                                  500 000 points at most)
          --smoothing M           with --spacing: heading window, metres before and after each point (default 20);
                                  the headings are written with the points (GPX gpxtpx:course, GeoJSON headings)
          -y, --overwrite         replace FILE if it exists
          --quiet, --json         no summary / a JSON summary on stdout

        Examples:
          GOOGLE_MAPS_API_KEY=… lapse route --from 43.6532,-79.3832 --to 45.5017,-73.5673 -o toronto-montreal.geojson
          lapse route --from 52.5163,13.3777 --to 52.5079,13.3376 --provider osrm --spacing 10 -o tiergarten.gpx
          lapse route --input ride.gpx --spacing 10 -o ride-10m.geojson
        """

    static func run(_ arguments: inout Arguments, console: Console) async throws {
        let out = try OutputOptions(&arguments)
        let output = try out.required("FILE.gpx or FILE.geojson")
        let from = try arguments.value("--from").map { try coordinate($0, option: "--from") }
        let to = try arguments.value("--to").map { try coordinate($0, option: "--to") }
        let via = try arguments.values("--via").map { try coordinate($0, option: "--via") }
        let providerName = try arguments.choice("--provider", DirectionsService.allCases.map(\.rawValue))
        let mode =
            try arguments.choice("--mode", TravelMode.allCases.map(\.rawValue)).flatMap(TravelMode.init(rawValue:))
            ?? .driving
        let keyFile = try arguments.value("--key-file")
        let googleURL = try arguments.value("--google-url")
        let osrmURL = try arguments.value("--osrm-url")
        let input = try arguments.value("--input", "-i", "--route")
        let inputFormat = try arguments.choice("--input-format", RouteFileFormat.allCases.map(\.rawValue)).flatMap(
            RouteFileFormat.init(rawValue:))
        let spacing = try arguments.double("--spacing", in: 0.01...1_000_000)
        let smoothing = try arguments.double("--smoothing", in: 0...100_000)
        let overwrite = out.overwrite
        let timeout = try NetworkOptions(&arguments).timeout
        let extra = try arguments.positionals()
        guard extra.isEmpty else { throw LapseError.usage("unexpected argument '\(extra[0])'") }
        guard let outputFormat = RouteFileFormat(pathExtension: output), outputFormat.isWritable else {
            throw LapseError.usage("the output must end in .gpx or .geojson, not '\(output)'")
        }
        if smoothing != nil && spacing == nil { throw LapseError.usage("--smoothing needs --spacing") }

        let source: RouteSource
        if let input {
            guard from == nil, to == nil, via.isEmpty, providerName == nil else {
                throw LapseError.usage("give either --input or --from/--to/--via, not both")
            }
            source = .file(input, format: inputFormat)
        } else {
            guard let from, let to else {
                throw LapseError.usage(
                    from == nil && to == nil
                        ? "no route: give --from and --to, or --input FILE"
                        : "give both --from and --to")
            }
            if inputFormat != nil { throw LapseError.usage("--input-format is for --input") }
            source = .directions(DirectionsRequest(origin: from, destination: to, waypoints: via, mode: mode))
        }
        var configuration = DirectionsConfiguration(
            service: providerName.flatMap(DirectionsService.init(rawValue:)) ?? .google,
            keyFile: keyFile, googleBaseURL: googleURL, osrmBaseURL: osrmURL,
            environment: ProcessInfo.processInfo.environment)
        if let timeout {
            var client = HTTPClient.Configuration()
            client.requestTimeout = timeout
            client.totalTimeout = timeout
            configuration.client = HTTPClient(configuration: client)
        }
        if !overwrite && FileManager.default.fileExists(atPath: output) { // before any network request
            throw LapseError(.output, output, "file exists (use --overwrite to replace it)")
        }
        let loaded = try await source.load(configuration)
        for warning in loaded.warnings { console.warn(warning) }
        var route = loaded.route
        let provider = loaded.provider

        let points: Int
        let length: Double
        if let spacing {
            let resampled = try route.resampled(every: spacing, smoothing: smoothing ?? 20)
            var planned = Route(resampled, name: route.name)
            (planned.retrieved, planned.notice, planned.copyright) = (route.retrieved, route.notice, route.copyright)
            route = planned
            points = resampled.count
            length = resampled.last?.distanceAlongRoute ?? 0
        } else {
            points = route.points.count
            length = route.length
        }
        if provider.hasPrefix("google") {
            // The Google Maps Platform service terms let route coordinates be kept for at most 30 days.
            let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            let iso = ISO8601DateFormatter()
            let until = iso.string(from: now.addingTimeInterval(30 * 86_400)).prefix(10)
            route.retrieved = now
            route.notice =
                """
                Route from Google Maps Platform (\(provider == "google" ? "Routes API" : "Directions API")), retrieved \
                \(iso.string(from: now)); Google's terms allow keeping its coordinates for at most 30 days: delete or \
                plan it again by \(until).
                """
            console.warn("\(output): \(route.notice!)")
        } else if route.isGoogles, let notice = route.notice {
            console.warn("\(output): \(notice)") // a Google route from a file: its notice goes with it
        }
        try AtomicOutput.checkDistinct(output: output, from: [input].compactMap { $0 })
        try RouteFile.write(route, to: output, format: outputFormat, overwrite: overwrite)

        let summary = Summary.Route(
            input: input, requests: loaded.reportedDistance == nil ? nil : loaded.requestCount,
            reportedDistanceM: loaded.reportedDistance, spacingM: spacing, output: output,
            format: outputFormat.rawValue,
            provider: provider, points: points, distanceM: (length * 1000).rounded() / 1000,
            distanceKm: (length / 10).rounded() / 100)
        var lines = [
            "\(output): \(String(format: "%.2f", length / 1000)) km, \(counted(points, "point"))"
                + (spacing.map { " (every \(NumberText.compact($0)) m)" } ?? "") + ", provider \(provider)"
        ]
        if let requests = summary.requests, requests > 1 { lines[0] += " (\(requests) requests)" }
        console.summary(lines, json: summary)
    }

    private static func coordinate(_ text: String, option: String) throws -> Coordinate {
        do { return try Coordinate.parse(text) } catch let error as LapseError {
            throw LapseError.usage("\(option) \(error.reason)")
        }
    }
}
