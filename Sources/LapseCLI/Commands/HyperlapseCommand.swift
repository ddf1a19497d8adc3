// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit

enum HyperlapseCommand: Command {
    static let name = "hyperlapse"
    static let summary = "Make a hyperlapse video from a route and street-level 360° panoramas"
    // Route.
    static let from = Option(
        "--from", value: "LAT,LNG", setting: "from", help: "plan a route with a directions service, from here")
    static let to = Option("--to", value: "LAT,LNG", setting: "to", help: "to here")
    static let via = Option(
        "--via", value: "LAT,LNG", setting: "via",
        help: "a point on the way (repeatable; the Routes API passes through it)")
    static let provider = Option(
        "--provider", value: "NAME", setting: "provider",
        help: """
            google (Routes API, GOOGLE_MAPS_API_KEY; default) | google-directions (the legacy Directions API) | osrm \
            (OpenStreetMap data)
            """)
    static let keyFile = Option(
        "--key-file", value: "FILE", setting: "keyFile",
        help: "file holding the Google API key instead of GOOGLE_MAPS_API_KEY")
    static let osrmURL = Option(
        "--osrm-url", value: "URL", setting: "osrmURL",
        help: "your own OSRM server (default: $LAPSE_OSRM_URL or the public demo server)")
    static let route = Option(
        "--route", value: "FILE", setting: "route",
        help:
            """
            GPX, GeoJSON, KML, 'lat,lng' lines, an encoded polyline or a saved Google Directions/Routes API \
            answer instead
            """
    )
    static let spacing = Option(
        "--spacing", value: "M", setting: "spacing",
        help: """
            metres between route points (default 10; your photos without --route: every photo, stops left out); \
            500 000 points at most
            """)
    // Panoramas.
    static let source = Option(
        "--source", value: "SOURCE", setting: "source",
        help: """
            google | panoramax | mapillary (token in MAPILLARY_ACCESS_TOKEN) | local:DIR (360° photos with GPS) | \
            video:FILE (a 360° video, or a GoPro MAX .360); other API roots: $LAPSE_PANORAMAX_URL, $LAPSE_MAPILLARY_URL
            """)
    static let track = Option(
        "--track", value: "GPX", setting: "track",
        help: "positions of a video source by time (video time 0 = the track's first time)")
    static let equirectangular = Option(
        "--equirectangular",
        help: """
            a 2:1 video or photo is 360° though nothing says so (no spherical metadata or GPano tags, edges that do \
            not meet as a 360° picture's do)
            """)
    static let radius = Option(
        "--radius", value: "M", setting: "radius", help: "search radius for the nearest panorama (default 50)")
    static let zoom = Option(
        "--zoom", value: "auto|0-5", setting: "zoom", help: "Street View zoom (default auto: from --size and --fov)")
    static let includeIndoor = Option(
        "--include-indoor", help: "Street View: take indoor panoramas too (default: left out, counted as gaps)")
    static let panoHeading = Option(
        "--pano-heading", value: "D",
        help: """
            compass heading of the first panorama's centre column when the source has none (a video: default 0, and \
            keyframe headings are relative to it; your photos without a compass); the rest follow from the pictures
            """)
    static let frameStep = Option(
        "--frame-step", value: "N", setting: "frameStep",
        help: """
            video without a track: every N-th frame (default 1; the video plays N × fps / its frame rate times as \
            fast)
            """)
    static let cacheDir = Option(
        "--cache-dir", value: "DIR",
        help: """
            download cache (default $XDG_CACHE_HOME/lapse); Google tiles are kept as their Cache-Control allows \
            (README: "What is kept on disk")
            """)
    static let sharedCache = Option(
        """
        --shared-cache
        """,
        help: "the cache folder is shared with other users: answers marked private are not written to it")
    static let timeout = NetworkOptions.timeout.described(
        """
        give up on an HTTP request (route, metadata, tile) after this long, retries included (default: 30 s an \
        attempt, 5 attempts)
        """)
    // Stabilisation.
    static let forward = Option(
        "--forward", value: "D",
        help: """
            the direction of travel in the pictures, D degrees right of their centre column (default: measured from \
            the motion between them); a camera fixed to a vehicle then looks along the vehicle's axis, D in every \
            picture
            """)
    static let noToneMatch = Option(
        "--no-tone-match",
        help: """
            keep each panorama's exposure and white balance as it is (a video's are always kept: its exposure \
            follows the light smoothly)
            """)
    static let noStabilize = Option(
        "--no-stabilize",
        help: """
            pose every panorama as its source says (no motion analysis; --forward still turns those whose heading is \
            not known: a video, bare photos)
            """)
    // Camera.
    static let lookAt = Option(
        "--look-at", value: "LAT,LNG", setting: "lookAt",
        help: "always aim at this point (needs positions: not for a video without --track)")
    static let headingOffset = Option(
        "--heading-offset", value: "D", setting: "headingOffset",
        help: "look D degrees right of the road (negative: left, 180: back)")
    static let keyframes = Option(
        "--keyframes", value: "FILE", setting: "keyframes",
        help: "a camera file: shots and heading/pitch/fov keyframes (JSON)")
    static let fov = ViewOptions.fov.described("horizontal field of view (default 90)")
    // Output.
    static let output = OutputOptions.output.described(
        "the video (.mp4, .m4v, .mov); OUT.credits.txt and OUT.job.json are written beside it", value: "OUT.mp4")
    static let gif = Option("--gif", value: "OUT.gif", help: "a GIF as well (default width: a third of the video's)")
    static let gifWidth = Option("--gif-width", value: "W", setting: "gifWidth", help: "the GIF's width")
    static let size = ViewOptions.size.described("frame size (default 1280x720)")
    static let fps = Option(
        "--fps", value: "N", help: "frames per second, 1-120 (default 12; 12.5, 29.97, 30000/1001)")
    static let crossfade = Option(
        "--crossfade", help: "blend consecutive panoramas (a blended frame between each two: twice the frames)")
    static let crf = EncoderOptions.crf.described("H.264 quality (default 20)")
    static let preset = EncoderOptions.preset.described("x264 preset (default medium)")
    static let creditPosition = Option(
        "--credit-position", value: "CORNER", setting: "creditPosition",
        help: """
            where each frame's credit goes: bottom-right (default), bottom-left, top-left, top-right; small white \
            text on a dark box, in the GIF too. Google: "Google Maps · © 2024 Google" (the panorama's copyright \
            line); Panoramax: "© author · licence · Panoramax"; Mapillary: "© creator · CC BY-SA 4.0 · Mapillary"; \
            your photos and videos: nothing. none: no credit, for your own photos and videos only (refused for \
            google, panoramax and mapillary: their terms require it)
            """)
    static let copyright = Option(
        "--copyright", value: "TEXT",
        help: """
            your imagery's copyright line (e.g. "© 2026 Ada Lovelace") for the MP4's copyright tag and the credits \
            file (default: none for your own media)
            """)
    static let report = Option(
        "--report", value: "OUT.html",
        help: """
            a report page beside the video: the route coloured by coverage, a marker per panorama, the video and \
            GIF, a frame strip, the camera's heading, the summary and credits (thumbnails in OUT_files/; see also \
            lapse preview)
            """)
    static let config = Option(
        "--config", value: "JOB.json",
        help: """
            settings from a job file (flags override it; its outputs are relative to it and may not leave its \
            folder)
            """)
    static let segment = Option(
        "--segment", value: "K/N", setting: "segment",
        help: """
            render only part K of N (frames ⌊(K−1)·F/N⌋ … ⌊K·F/N⌋−1 of the job's F), e.g. on N machines sharing \
            --cache-dir; join the parts with 'lapse concat' (README: "Many machines"). Not with --gif: make it from \
            the joined video
            """)
    static let overwrite = OutputOptions.overwrite.described("replace existing outputs")

    static let page = CommandHelp(
        usage: """
            lapse hyperlapse --source SOURCE [--from LAT,LNG --to LAT,LNG [--via LAT,LNG]... | --route FILE] \
            -o OUT.mp4 [options]
              (a route for google, panoramax, mapillary; local:DIR and video:FILE follow their own positions)
            """,
        about: """
            Plans a route (or reads one), finds the 360° panorama nearest to every point, renders a perspective frame
            from each with a camera that follows the road or looks at a target, and encodes an H.264 MP4 (and a GIF).
            """,
        sections: [
            HelpSection("Route", [from, to, via, provider, keyFile, osrmURL, route, spacing]),
            HelpSection(
                "Panoramas",
                [
                    source, track, equirectangular, radius, zoom, includeIndoor, panoHeading, frameStep, cacheDir,
                    sharedCache, timeout
                ]),
            HelpSection(
                """
                Stabilisation (default: on; off for google: Street View is posed from its metadata, as Google's terms
                allow no analysis of its pictures)
                """,
                [forward, noToneMatch, noStabilize]),
            HelpSection("Camera (one of; default: along the road)", [lookAt, headingOffset, keyframes, fov]),
            HelpSection(
                "Output",
                [
                    output, gif, gifWidth, size, fps, crossfade, crf, preset, creditPosition, copyright, report, config,
                    segment, overwrite
                ], more: [GlobalOptions.row(progress: true)])
        ],
        examples: [
            "lapse hyperlapse --source video:overpass.mp4 --keyframes camera.json -o demo.mp4 --gif demo.gif",
            "lapse hyperlapse --from 48.8584,2.2945 --to 48.8738,2.2950 --source google -o champs.mp4",
            "lapse hyperlapse --route walk.gpx --source panoramax --look-at 48.8606,2.3376 -o louvre.mp4",
            "lapse hyperlapse --config demo/hyperlapse.job.json --overwrite"
        ])

    /// The route and panorama options `lapse hyperlapse` and `lapse preview` share.
    static func parseRouteAndSource(_ arguments: inout Arguments, into flags: inout HyperlapseSettings) throws {
        flags.from = try arguments.value(Self.from)
        flags.to = try arguments.value(Self.to)
        let via = try arguments.values(Self.via)
        flags.via = via.isEmpty ? nil : via
        flags.provider = try arguments.choice(Self.provider, DirectionsService.allCases.map(\.rawValue)).flatMap(
            DirectionsService.init(rawValue:))
        flags.route = try arguments.value(Self.route).map { URL(fileURLWithPath: $0) }
        flags.source = try arguments.value(Self.source).map(PanoramaSourceSetting.init(parsing:))
        flags.track = try arguments.value(Self.track).map { URL(fileURLWithPath: $0) }
        flags.spacing = try arguments.double(Self.spacing, in: HyperlapseSettings.spacingRange)
        flags.radius = try arguments.double(Self.radius, in: HyperlapseSettings.radiusRange)
        flags.frameStep = try arguments.int(Self.frameStep, in: HyperlapseSettings.frameStepRange)
        flags.cacheDir = try arguments.value(Self.cacheDir).map { URL(fileURLWithPath: $0, isDirectory: true) }
        flags.keyFile = try arguments.value(Self.keyFile).map { URL(fileURLWithPath: $0) }
        flags.osrmURL = try arguments.value(Self.osrmURL)
        flags.timeout = try NetworkOptions(&arguments).timeout
        flags.includeIndoor = arguments.flag(Self.includeIndoor) ? true : nil
        flags.sharedCache = arguments.flag(Self.sharedCache) ? true : nil
        flags.equirectangular = arguments.flag(Self.equirectangular) ? true : nil
    }

    /// The files and folders a job of `settings` reads (route, track, camera file, the photos' folder or the
    /// video, the cache), tilde-expanded: a report may not be written over or into them.
    static func readPaths(_ settings: HyperlapseSettings) -> [URL] {
        [settings.route, settings.track, settings.keyframes, settings.source?.ownPictures, settings.cacheDir]
            .compactMap { $0 }
    }

    static func run(_ arguments: inout Arguments, console: Console) async throws {
        var flags = HyperlapseSettings()
        try parseRouteAndSource(&arguments, into: &flags)
        let view = try ViewOptions(&arguments)
        flags.size = view.size
        flags.fov = view.fov
        flags.fps = try arguments.frameRate(Self.fps, in: HyperlapseSettings.fpsRange)
        flags.lookAt = try arguments.value(Self.lookAt)
        flags.headingOffset = try arguments.double(Self.headingOffset, in: HyperlapseSettings.angleRange)
        flags.keyframes = try arguments.value(Self.keyframes).map { URL(fileURLWithPath: $0) }
        flags.zoom = try arguments.choice(Self.zoom, ["auto"] + HyperlapseSettings.zoomRange.map(String.init)).flatMap(
            HyperlapseSettings.Zoom.init(parsing:))
        flags.crossfade = arguments.flag(Self.crossfade) ? true : nil
        let out = try OutputOptions(&arguments)
        flags.output = out.path.map { URL(fileURLWithPath: $0) }
        flags.gif = try arguments.value(Self.gif).map { URL(fileURLWithPath: $0) }
        flags.gifWidth = try arguments.int(Self.gifWidth, in: HyperlapseSettings.gifWidthRange)
        let encoder = try EncoderOptions(&arguments)
        flags.crf = encoder.crf
        flags.preset = encoder.preset
        flags.panoHeading = try arguments.double(Self.panoHeading, in: HyperlapseSettings.angleRange)
        flags.forward = try arguments.double(Self.forward, in: HyperlapseSettings.angleRange)
        flags.toneMatch = arguments.flag(Self.noToneMatch) ? false : nil
        flags.stabilize = arguments.flag(Self.noStabilize) ? false : nil
        flags.creditPosition = try arguments.choice(Self.creditPosition, HyperlapseSettings.CreditPosition.names)
            .flatMap(HyperlapseSettings.CreditPosition.init(parsing:))
        flags.copyright = try arguments.value(Self.copyright)
        let segment = try arguments.value(Self.segment).map { try HyperlapseJob.Segment(parsing: $0) }
        let config = try arguments.value(Self.config)
        let report = try arguments.value(Self.report).map { URL(fileURLWithPath: $0) }
        let overwrite = out.overwrite
        let rest = try arguments.positionals()
        guard rest.isEmpty else { throw LapseError.usage("unexpected argument '\(rest[0])'") }
        if flags.forward != nil, flags.source == .google {
            console.warn(
                """
                --forward turns only panoramas whose heading is not known: Street View's are posed as Google says \
                (their pictures are not analysed)
                """
            )
        }

        let settings =
            try config.map { URL(fileURLWithPath: $0) }
            .map { try HyperlapseSettings.read($0).confiningOutputs(toJobFile: $0, except: flags) }
            .map { $0.overridden(by: flags) } ?? flags
        var job = try settings.makeJob(overwrite: overwrite)
        if let segment {
            guard job.gif == nil else {
                throw LapseError.usage(
                    "--gif with --segment: make the GIF from the joined video (lapse concat … --gif OUT.gif)")
            }
            job.segment = segment
        }
        if let report {
            guard segment == nil else {
                throw LapseError.usage("--report with --segment: report the whole job, not a part")
            }
            let inputs = readPaths(settings) + [job.output, job.gif].compactMap { $0 }
            try ReportPage.checkOutput(report, overwrite: overwrite, inputs: inputs)
            job.recordsReport = true
        }
        try job.checkOutputs() // before any route or panorama request
        job.settings?.report = report?.standardizedFileURL
        if overwrite, FileManager.default.fileExists(atPath: job.output.path) {
            for earlier in HyperlapseJob.earlierOutputs(of: job.output, except: [job.gif, report].compactMap { $0 }) {
                console.warn(
                    """
                    \(earlier.file.path): the \(earlier.kind) of the earlier run of \(job.output.shown) is left as \
                    it was (this run makes none): it shows the earlier run
                    """)
            }
        }
        let feed = try await settings.makeFeed(
            progress: console.progress, warning: console.warning,
            environment: ProcessInfo.processInfo.environment)
        let started = Date()
        let s = try await job.run(feed: feed, progress: console.progress, warning: console.warning)
        let seconds = Date().timeIntervalSince(started)
        if let part = s.segment, !part.written {
            console.summary(
                [
                    """
                    segment \(part.segment): no frames (the job has \(counted(part.jobFrames, "frame")), fewer \
                    than \(part.segment.count) segments); nothing written
                    """
                ],
                json: CommandSummary(s, seconds: seconds))
            return
        }
        var lines = Self.summaryLines(s, seconds: seconds)
        if s.gaps * 2 > s.routePoints {
            console.warn(
                "\(s.gaps) of \(s.routePoints) \(s.pointUnit) had no panorama within the search radius (--radius)"
                    + (settings.track != nil ? "; does the track cover the video's time?" : ""))
        }
        var json = CommandSummary(s, seconds: seconds)
        if let reportFile = report, let report = s.report {
            json.report = reportFile.filePath
            let page = ReportPage(
                title: "Hyperlapse: " + s.output.lastPathComponent, report: report,
                summaryJSON: try SummaryJSON.data(console.warned(json), compact: true),
                video: s.output, gif: s.gif, credits: s.creditLines)
            let written = try page.write(to: reportFile, overwrite: overwrite)
            let thumbnails =
                written.filesDirectory.map { " (\(counted(written.thumbnails, "thumbnail")) in \($0.filePath))" }
                ?? ""
            lines.insert("wrote \(written.page.filePath): the report\(thumbnails)", at: lines.count - 1)
        }
        console.summary(lines, json: json)
    }

    /// The summary's lines of a finished hyperlapse: what was written, the source, the tiles, the stabilisation
    /// and the credits (the report's line goes in before the last).
    static func summaryLines(_ s: HyperlapseJob.Summary, seconds: Double) -> [String] {
        var lines = [
            "wrote \(s.output.shown): \(s.width)x\(s.height), \(counted(s.frames, "frame")) at \(s.frameRate) fps, "
                + String(format: "%.1f", s.duration) + " s, \(formatBytes(s.bytes))"
        ]
        if let part = s.segment {
            lines.append(
                """
                segment \(part.segment): frames \(part.frames.lowerBound)–\(part.frames.upperBound - 1) of the \
                job's \(part.jobFrames), from pts \(part.firstPTS) (join the parts with 'lapse concat')
                """
            )
        }
        if let gif = s.gifSummary {
            lines.append(
                """
                wrote \(gif.url.shown): \(gif.width)x\(gif.height), \(counted(gif.frameCount, "frame")), \
                \(formatBytes(gif.bytes))
                """
            )
        }
        // "24 video frames" of a 120-frame video says which: every 5th.
        let taken = s.videoFrames.flatMap { video in
            video.step > 1 ? " (every \(Self.ordinal(video.step)) of \(video.count))" : nil
        }
        lines.append(
            "source \(s.feed): " + (s.distance > 0 ? String(format: "%.2f km, ", s.distance / 1000) : "")
                + """
                \(counted(s.routePoints, plural: s.pointUnit))\(taken ?? ""), \
                \(counted(s.panoramas, "panorama")) used, \(counted(s.duplicatesDropped, "duplicate")) dropped, \
                \(counted(s.gaps, "gap"))
                """
                + (s.speed.map { "; plays at \(NumberText.compact($0, digits: 2))× the video's speed" } ?? "")
        )
        if let downloaded = s.tilesDownloaded, let cached = s.tilesFromCache {
            lines.append(
                "tiles: \(downloaded) downloaded, \(cached) from the cache"
                    + (s.panoramasAtLowerZoom > 0
                        ? """
                        ; \(counted(s.panoramasAtLowerZoom, "panorama")) at a lower zoom (no imagery at the zoom \
                        asked for)
                        """
                        : ""))
        }
        if s.panoramasUnavailable > 0 {
            lines.append(
                """
                \(counted(s.panoramasUnavailable, "panorama")) could not be had: \
                \(s.panoramasUnavailable == 1 ? "its frame" : "their frames") left out (see the warnings)
                """
            )
        }
        if let st = s.stabilization { lines.append(stabilizationLine(st)) }
        if let why = s.posedFromMetadata {
            lines.append("posed as the panoramas' metadata says, not stabilised or tone matched: \(why)")
        }
        lines.append("credits in \(s.credits.shown); done in " + String(format: "%.1f", seconds) + " s")
        return lines
    }

    /// What the stabilisation found, in one line.
    static func stabilizationLine(_ st: StabilizationReport) -> String {
        var line = "stabilised: "
        if let f = st.forward {
            line += "travel \(StabilizationReport.fromCentreColumn(f)) (given)"
        } else if let m = st.mountLongitude {
            line += "travel \(StabilizationReport.fromCentreColumn(m)) (measured"
            if st.followsVehicleAxis, let v = st.mountVotes {
                line += String(
                    format: "; the view follows the vehicle's axis: spread %.0f°, %d of %d pairs agree", v.spread,
                    v.agreeing, v.checked)
                if st.mountBreaks > 0 { line += "; the camera was moved on it \(counted(st.mountBreaks, "time"))" }
            }
            line += ")"
        } else {
            line += "direction of travel not measured"
        }
        if let b = st.jitterBefore, let a = st.jitterAfter {
            line += String(
                format: "; turn between frames of a measured pair %.1f° median, %.1f° p90 (source alone %.1f°, %.1f°)",
                a.median, a.p90, b.median, b.p90)
        }
        line += "; \(counted(st.pairsMeasured, "pair")) measured, \(st.pairsUnmeasured) not"
        if st.analysisStride > 1 { line += " (every \(st.analysisStride) frames; those between share the motion)" }
        if st.stationaryDropped > 0 { line += "; \(counted(st.stationaryDropped, "stationary frame")) dropped" }
        if st.toneMatched > 0 { line += "; tone matched in \(counted(st.toneMatched, "frame"))" }
        return line
    }

    /// `n` as an English ordinal: 2nd, 3rd, 5th, 11th, 21st, 112th.
    static func ordinal(_ n: Int) -> String {
        let suffix =
            (11...13).contains(n % 100) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th"
        return "\(n)\(suffix)"
    }
}
