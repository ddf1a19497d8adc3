// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit

enum RouteCommand: Command {
    static let name = "route"
    static let summary = "Plan a route (Google Routes API, OSRM) or read a route file, optionally every N metres"
    private typealias H = HyperlapseCommand
    static let from = H.from.described("start, in decimal degrees (e.g. 43.6532,-79.3832)")
    static let to = H.to.described("end")
    static let via = H.via.described(
        """
        a point on the way, repeat in travel order (Google: any number, 25 a request; the Routes API passes through \
        it, the legacy API and OSRM stop there)
        """)
    static let provider = H.provider.described(
        """
        google (the Routes API; default) | google-directions (the legacy Directions API, for keys of projects that \
        still have it) | osrm (OpenStreetMap data)
        """)
    static let mode = Option("--mode", value: "MODE", help: "driving | walking | cycling (default driving)")
    static let keyFile = H.keyFile.described("file holding the Google Maps API key (default: $GOOGLE_MAPS_API_KEY)")
    static let googleURL = Option(
        "--google-url", value: "URL", setting: "googleBaseURL",
        help: """
            the Google service's base URL (default https://routes.googleapis.com or $LAPSE_GOOGLE_ROUTES_URL; legacy: \
            https://maps.googleapis.com or $LAPSE_GOOGLE_DIRECTIONS_URL)
            """)
    static let osrmURL = Option(
        "--osrm-url", value: "URL", setting: "osrmBaseURL",
        help: """
            OSRM server (default https://router.project-osrm.org, or $LAPSE_OSRM_URL); your own server works, e.g. \
            http://localhost:5000
            """)
    static let input = Option(
        "-i", "--input", value: "FILE", aliases: ["--route"],
        help: """
            .gpx (tracks or routes), .geojson/.json, .kml, .txt/.csv (lat,lng lines), .polyline / .polyline6 \
            (encoded polyline), a saved Google Directions or Routes API answer (.json); other names: detected from \
            the content
            """)
    static let inputFormat = Option(
        "--input-format", value: "FMT",
        help: """
            gpx | geojson | kml | lines | polyline | polyline6 | google-directions | google-routes (overrides the \
            detection)
            """)
    static let spacing = H.spacing.described(
        "resample to a point every M metres along the path (start and end kept; 500 000 points at most)")
    static let smoothing = Option(
        "--smoothing", value: "M",
        help: """
            with --spacing: heading window, metres before and after each point (default 20); the headings are \
            written with the points (GPX gpxtpx:course, GeoJSON headings)
            """)

    static let page = CommandHelp(
        usage: """
            lapse route (--from LAT,LNG --to LAT,LNG [--via LAT,LNG]... [--provider NAME] | --input FILE) \
            [--spacing M] -o FILE
            """,
        about: """
            Plans a route with a directions service, or reads one from a file, and writes it as GPX or GeoJSON,
            optionally resampled to a point every M metres. Prints the distance, the number of points and the provider.
            """,
        sections: [
            HelpSection(
                "Route from a directions service",
                [from, to, via, provider, mode, keyFile, googleURL, osrmURL, NetworkOptions.timeout]),
            HelpSection(
                "Route from a file",
                [input, inputFormat]),
            HelpSection(
                "Output",
                [
                    OutputOptions.output.described(".gpx or .geojson"), spacing, smoothing,
                    OutputOptions.overwrite.described("replace FILE if it exists")
                ], more: [GlobalOptions.row(progress: false)])
        ],
        examples: [
            """
            GOOGLE_MAPS_API_KEY=… lapse route --from 43.6532,-79.3832 --to 45.5017,-73.5673 -o \
            toronto-montreal.geojson
            """,
            "lapse route --from 52.5163,13.3777 --to 52.5079,13.3376 --provider osrm --spacing 10 -o tiergarten.gpx",
            "lapse route --input ride.gpx --spacing 10 -o ride-10m.geojson"
        ])

    static func run(_ arguments: inout Arguments, console: Console) async throws {
        let out = try OutputOptions(&arguments)
        let from = try arguments.value(Self.from).map { try coordinate($0, option: "--from") }
        let to = try arguments.value(Self.to).map { try coordinate($0, option: "--to") }
        let via = try arguments.values(Self.via).map { try coordinate($0, option: "--via") }
        let providerName = try arguments.choice(Self.provider, DirectionsService.allCases.map(\.rawValue))
        let mode =
            try arguments.choice(Self.mode, TravelMode.allCases.map(\.rawValue)).flatMap(TravelMode.init(rawValue:))
            ?? .driving
        let keyFile = try arguments.value(Self.keyFile)
        let googleURL = try arguments.value(Self.googleURL)
        let osrmURL = try arguments.value(Self.osrmURL)
        let input = try arguments.value(Self.input)
        let inputFormat = try arguments.choice(Self.inputFormat, RouteFileFormat.allCases.map(\.rawValue)).flatMap(
            RouteFileFormat.init(rawValue:))
        let spacing = try arguments.double(Self.spacing, in: 0.01...1_000_000)
        let smoothing = try arguments.double(Self.smoothing, in: 0...100_000)
        let overwrite = out.overwrite
        let timeout = try NetworkOptions(&arguments).timeout
        let extra = try arguments.positionals()
        guard extra.isEmpty else { throw LapseError.usage("unexpected argument '\(extra[0])'") }
        let output = try out.required("FILE.gpx or FILE.geojson")
        let outputFile = URL(fileURLWithPath: output)
        guard let outputFormat = RouteFileFormat(file: outputFile), outputFormat.isWritable else {
            throw LapseError.usage("the output must end in .gpx or .geojson, not '\(output)'")
        }
        if smoothing != nil && spacing == nil { throw LapseError.usage("--smoothing needs --spacing") }

        let source: RouteSource
        if let input {
            guard from == nil, to == nil, via.isEmpty, providerName == nil else {
                throw LapseError.usage("give either --input or --from/--to/--via, not both")
            }
            source = .file(URL(fileURLWithPath: input), format: inputFormat)
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
            keyFile: keyFile.map { URL(fileURLWithPath: $0) }, googleBaseURL: googleURL, osrmBaseURL: osrmURL,
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
        try AtomicOutput.checkDistinct(
            output: outputFile, from: [input].compactMap { $0.map { URL(fileURLWithPath: $0) } })
        try RouteFile.write(route, to: outputFile, format: outputFormat, overwrite: overwrite)

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
