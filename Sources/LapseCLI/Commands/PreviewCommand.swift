// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit

enum PreviewCommand: Command {
    static let name = "preview"
    static let summary = "See a hyperlapse's coverage before making it: the route and its lookups on a report page"
    // The route and panorama options are hyperlapse's (``HyperlapseCommand/parseRouteAndSource(_:into:)``).
    private typealias H = HyperlapseCommand
    static let report = OutputOptions.output.shown(as: ["-o", "--report"]).setting(nil).described(
        "the page (required); nothing else is written", value: "OUT.html")
    static let overwrite = OutputOptions.overwrite.described("replace the page if it exists")

    static let page = CommandHelp(
        usage: """
            lapse preview --source SOURCE [--from LAT,LNG --to LAT,LNG [--via LAT,LNG]... | --route FILE] \
            --report OUT.html [options]
              (a route for google, panoramax, mapillary; local:DIR and video:FILE follow their own positions)
            """,
        about: """
            Plans the route (or reads it) and looks up the panorama nearest to every point, as lapse hyperlapse would,
            but fetches no image or tile and renders nothing: a page shows the route coloured by coverage (points with
            a panorama, without one, duplicates), a marker per panorama (pano id, date, distance from the route) and
            the summary, so you see the coverage before spending quota or time. Open OUT.html in a browser; the map
            needs the network only for its OpenStreetMap background.
            """,
        sections: [
            HelpSection(
                "Route",
                [
                    H.from, H.to, H.via.described("a point on the way (repeatable)"),
                    H.provider.described("google (Routes API; default) | google-directions | osrm"), H.keyFile,
                    H.osrmURL.described("your own OSRM server"),
                    H.route.described(
                        """
                        GPX, GeoJSON, KML, 'lat,lng' lines, an encoded polyline or a saved Google Directions/Routes \
                        API answer
                        """),
                    H.spacing.described(
                        """
                        metres between route points (default 10; your photos without --route: every photo); 500 000 \
                        points at most
                        """)
                ]),
            HelpSection(
                "Panoramas",
                [
                    H.source.described(
                        """
                        google | panoramax | mapillary (token in MAPILLARY_ACCESS_TOKEN) | local:DIR | video:FILE; \
                        other API roots: $LAPSE_PANORAMAX_URL, $LAPSE_MAPILLARY_URL
                        """),
                    H.track.described("positions of a video source by time"),
                    H.equirectangular.described("a 2:1 video or photo is 360° though nothing says so"), H.radius,
                    H.includeIndoor, H.frameStep.described("video without a track: every N-th frame (default 1)"),
                    H.cacheDir.described("download cache (default $XDG_CACHE_HOME/lapse)"), H.sharedCache,
                    NetworkOptions.timeout
                ]),
            HelpSection("Output", [report, overwrite], more: [GlobalOptions.row(progress: false)])
        ],
        examples: [
            "lapse preview --from 48.8584,2.2945 --to 48.8738,2.2950 --source google --report champs.html",
            "lapse preview --route walk.gpx --source panoramax --report walk.html"
        ])

    static func run(_ arguments: inout Arguments, console: Console) async throws {
        var settings = HyperlapseSettings()
        try HyperlapseCommand.parseRouteAndSource(&arguments, into: &settings)
        let out = try OutputOptions(&arguments, output: Self.report)
        let report = out.path
        let overwrite = out.overwrite
        let rest = try arguments.positionals()
        guard rest.isEmpty else { throw LapseError.usage("unexpected argument '\(rest[0])'") }
        guard let report else { throw LapseError.usage("no report page (--report OUT.html)") }
        // before any request
        try ReportPage.checkOutput(
            URL(fileURLWithPath: report), overwrite: overwrite, inputs: HyperlapseCommand.readPaths(settings))

        let started = Date()
        let feed = try await settings.makeFeed(
            progress: console.progress, warning: console.warning,
            environment: ProcessInfo.processInfo.environment)
        let s = try await PreviewJob().run(feed: feed, progress: console.progress)
        let seconds = Date().timeIntervalSince(started)
        let json = CommandSummary(s, seconds: seconds, report: report)
        let page = ReportPage(
            title: "Preview: " + s.feed, report: s.report,
            summaryJSON: try SummaryJSON.data(console.warned(json), compact: true),
            credits: Set(s.report.panoramas.compactMap(\.credit)).sorted())
        try page.write(to: URL(fileURLWithPath: report), overwrite: overwrite)
        let lines = [
            "wrote \(report): the preview",
            "source \(s.feed): " + (s.distance > 0 ? String(format: "%.2f km, ", s.distance / 1000) : "")
                + """
                \(counted(s.routePoints, plural: s.pointUnit)), \(counted(s.panoramas, "panorama")), \
                \(counted(s.duplicatesDropped, "duplicate")), \(counted(s.gaps, "gap")); done in 
                """
                + String(format: "%.1f", seconds) + " s"
        ]
        console.summary(lines, json: json)
    }
}
