// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

/// The main job (`lapse hyperlapse`): route → panoramas → perspective frames → MP4 (and GIF).
///
/// Stages, as a stream: the feed's points are looked up a window ahead of rendering (consecutive duplicates
/// dropped, gaps counted); the camera path gives each frame's heading/pitch/fov as soon as it is settled (see
/// ``CameraPath/settledCount(of:complete:)``); panoramas (only the tiles each view reads) are fetched and
/// rendered on all cores a bounded number ahead of the encoder, which receives the frames in order. Memory does
/// not grow with the route's length, except a few dozen bytes a frame for the camera path — and the frames held
/// back by a keyframe far ahead (one beyond the route's end holds frames until the whole route is looked up).
/// Every frame carries its panorama's credit in a corner (``creditPosition``, ``Attribution/credit``), drawn
/// into the MP4's frame and, at the GIF's own size, into the GIF's. Outputs (MP4, GIF, `OUT.credits.txt`,
/// `OUT.job.json`) are written to temporary files and renamed into place only when everything succeeded.
public struct HyperlapseJob: Sendable {
    /// Frame size in pixels (even).
    public var width = 1280
    /// Frame height in pixels, even, 16 or more (default 720).
    public var height = 720
    /// Output frame rate, 1–120 frames per second (exact fractions such as 30000/1001). Default 12.
    public var frameRate = FrameRate(12)
    /// The frame rate in whole frames per second (setting it sets ``frameRate`` to that number).
    public var fps: Int {
        get { Int(frameRate.value.rounded()) }
        set { frameRate = FrameRate(max(1, newValue)) }
    }
    /// How the camera moves; default: along the road, 90° fov.
    public var camera = CameraScript(mode: .route(offset: 0), fov: 90, pitch: 0)
    /// Blend consecutive panoramas: one extra frame, half of each, between every two.
    public var crossfade = false
    /// How the panoramas are steadied: orientation from the pictures, direction of travel, tone (default: all on).
    public var stabilization = StabilizationOptions()
    /// The video to write (.mp4, .m4v or .mov); `OUT.credits.txt` and `OUT.job.json` are written beside it.
    public var output: URL
    /// A GIF of the video as well, when set (a `.gif` file).
    public var gif: URL?
    /// GIF width in pixels (height keeps the aspect ratio); default a third of ``width``.
    public var gifWidth: Int?
    /// x264's constant rate factor, 0–51, lower is better (default 20).
    public var crf: Double = 20
    /// x264's preset, `ultrafast` … `veryslow` (default `medium`).
    public var preset = EncoderPreset.medium
    /// Replace outputs that exist (else an existing output is an `.output` error before anything is fetched).
    public var overwrite = false
    /// Written as `OUT.job.json` so the hyperlapse can be rendered again; `nil` writes none.
    public var settings: HyperlapseSettings?
    /// The corner each frame's credit (``Attribution/credit``: "Google Maps · © 2024 Google", "© Ann · CC-BY-SA-4.0 ·
    /// Panoramax") is drawn in; default bottom right. Frames whose panorama has nothing to credit (your own
    /// photos and videos) get nothing. `nil` draws no credit at all: only for imagery you may show without one —
    /// Google's terms and CC BY-SA require it (``HyperlapseSettings`` refuses `none` for those sources).
    public var creditPosition: CreditCorner? = .bottomRight
    /// Who to credit for the route's data, in `OUT.credits.txt` and the MP4 metadata (e.g.
    /// ``openStreetMapRouteCredit`` for a route planned by OSRM); nil for none.
    public var routeCredit: String?
    /// The copyright line of your own imagery (`--copyright`), first in the MP4's `copyright` tag and the credits;
    /// nil: your own photos and videos get no copyright tag (other sources' credits are theirs).
    public var copyright: String?
    /// Render only one of several equal parts of the job (``Segment``), for many processes or machines at once;
    /// join the parts with ``ConcatJob``. Nil (the default) renders every frame.
    public var segment: Segment?
    /// Keep what every point had, the panoramas chosen and every frame's camera in ``Summary/report``, for a
    /// report page (``ReportPage``). Default false.
    public var recordsReport = false
    /// Render every frame through RGBA even where the panoramas come as Y′CbCr (to compare the two paths in tests).
    package var rgbaOnly = false

    /// A job writing `output`, every other setting at its default.
    public init(output: URL) { self.output = output }

    /// Part K of N of a hyperlapse (`--segment K/N`): frames ⌊(K−1)·F/N⌋ … ⌊K·F/N⌋−1 of the job's F frames.
    ///
    /// Every segment plans the whole job the same way — the lookups, the stabilisation and the camera path over
    /// every frame (the lookups and the stabiliser's small pictures are shared through the cache) — so the
    /// frames and their orientations do not depend on K; it then fetches and renders only its own frames (their
    /// tiles only). Its video starts with an IDR frame and carries the frames' global timestamps (frame n at
    /// n / fps), so parts can be joined by stream copy (``ConcatJob``).
    public struct Segment: Sendable, Equatable, CustomStringConvertible {
        /// 1 … ``count``.
        public var index: Int
        /// ≥ 1.
        public var count: Int

        /// - Throws: ``LapseError`` `.usage` unless 1 ≤ index ≤ count.
        public init(index: Int, count: Int) throws {
            guard count >= 1, (1...count).contains(index) else {
                throw LapseError.usage("a segment is K/N with 1 ≤ K ≤ N, not \(index)/\(count)")
            }
            self.index = index
            self.count = count
        }

        /// Parses "K/N".
        /// - Throws: ``LapseError`` `.usage` for anything else, or K outside 1 … N.
        public init(parsing text: String) throws {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let k = Int(parts[0].trimmingCharacters(in: .whitespaces)),
                let n = Int(parts[1].trimmingCharacters(in: .whitespaces))
            else {
                throw LapseError.usage("`segment` takes K/N (e.g. 2/8), not '\(text)'")
            }
            try self.init(index: k, count: n)
        }

        /// The frames of this segment among `frames` (a job's F): ⌊(K−1)·F/N⌋ ..< ⌊K·F/N⌋ (empty when N > F for
        /// some K).
        public func range(of frames: Int) -> Range<Int> {
            // In full width: K·F overflows for a K near Int.max (`--segment 9223372036854775807/…` trapped).
            func part(_ k: Int) -> Int { count.dividingFullWidth(k.multipliedFullWidth(by: frames)).quotient }
            return part(index - 1)..<part(index)
        }

        /// `K/N`, as `--segment` takes it.
        public var description: String { "\(index)/\(count)" }
    }

    /// What a finished hyperlapse made. Encoded as `lapse hyperlapse --json` prints it (``LapseCore/SummaryKey``;
    /// see `encode(to:)`); a segment with no frames (``SegmentSummary/written`` false) as the segment alone.
    public struct Summary: Sendable, Encodable {
        /// The feed's name (`video overpass-clip.mp4`, `panoramax`, …).
        public var feed: String
        /// Frame width in pixels.
        public var width: Int
        /// Frame height in pixels.
        public var height: Int
        /// The video's frame rate.
        public var frameRate: FrameRate
        /// A video's frames taken without a track: every `step`-th of `count` (nil for other sources, or a track).
        public var videoFrames: (step: Int, count: Int)?
        /// How many times as fast as the source video the hyperlapse plays: the video's time its frames were
        /// taken from (frame step ÷ the video's frame rate each) over the output's duration (with a crossfade, the
        /// blended frames between make it slower); nil unless the source is a video without a track.
        public var speed: Double?
        /// Route length in metres (0 without positions: a video without a track).
        public var distance: Double
        /// Points of the route looked up (``pointUnit`` says what they are).
        public var routePoints: Int
        /// What ``routePoints`` counts: "route points", or "video frames" for a video without a track.
        public var pointUnit: String
        /// Panoramas rendered (frames before a crossfade's blends).
        public var panoramas: Int
        /// Points whose panorama was the one before (left out).
        public var duplicatesDropped: Int
        /// Points without a panorama within the search radius (left out).
        public var gaps: Int
        /// Tiles downloaded and read from the cache (tiled sources only).
        public var tilesDownloaded: Int?
        /// Tiles read from the cache (tiled sources only).
        public var tilesFromCache: Int?
        /// Panoramas rendered from a lower zoom than asked for: the service had no imagery at that zoom.
        public var panoramasAtLowerZoom: Int = 0
        /// Panoramas found by the lookup whose images could not be had (gone, no imagery, not decodable): their
        /// frames are left out (a warning names each).
        public var panoramasUnavailable: Int = 0
        /// Frames written to the video.
        public var frames: Int
        /// The video's duration, seconds.
        public var duration: Double
        /// The video.
        public var output: URL
        /// The video's size in bytes.
        public var bytes: Int64
        /// The GIF, when one was made.
        public var gif: URL?
        /// The GIF's size in bytes, when one was made.
        public var gifBytes: Int64?
        /// The GIF as written (size, delays, loop count), when one was asked for.
        public var gifSummary: GIFSummary?
        /// The credits sidecar (`OUT.credits.txt`).
        public var credits: URL
        /// The attributions of the imagery used, each once, in order of first use.
        public var attributions: [Attribution]
        /// What the sidecar credits, a line each without its list marks: the imagery's attributions, the route's
        /// credit, the video's licence when the imagery's requires one (empty when no frame was made).
        public var creditLines: [String] = []
        /// What the stabilisation found (nil when it was off).
        public var stabilization: StabilizationReport?
        /// Why the panoramas were posed from their metadata alone, without stabilisation or tone matching, though
        /// the job asked for it (``PanoramaFeed/analysisRestriction``: Street View's); nil otherwise.
        public var posedFromMetadata: String?
        /// Every frame's orientation and where it came from, in order (empty when stabilisation was off).
        public var orientations: [FrameOrientation]
        /// With ``HyperlapseJob/segment``: which frames of the whole job this part rendered.
        public var segment: SegmentSummary?
        /// With ``HyperlapseJob/recordsReport``: every point, panorama and frame.
        public var report: HyperlapseReport?

        /// The keys: output, bytes, gif, gifBytes, distance (metres; `null` for a video without positions),
        /// routePoints, panoramas, tilesDownloaded, tilesFromCache, panoramasAtLowerZoom, panoramasUnavailable,
        /// width, height, fps (a number), frameRate (`"24/1"`), duplicatesDropped, gaps, frames, duration, credits,
        /// source, speed, segment, stabilization (``StabilizationReport``), posedFromMetadata; those that may be
        /// absent are `null` then. An empty segment: segment, jobFrames, frames (0), firstFrame, written (false),
        /// output (`null`).
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: SummaryKey.self)
            if let part = segment, !part.written {
                try c.encode(part.segment.description, forKey: "segment")
                try c.encode(part.jobFrames, forKey: "jobFrames")
                try c.encode(0, forKey: "frames")
                try c.encode(part.frames.lowerBound, forKey: "firstFrame")
                try c.encode(false, forKey: "written")
                try c.encodeNil(forKey: "output")
                return
            }
            try c.encode(output.shown, forKey: "output")
            try c.encode(bytes, forKey: "bytes")
            try c.encodeNullable(gif?.shown, forKey: "gif")
            try c.encodeNullable(gifBytes, forKey: "gifBytes")
            // A video without positions covers no distance anyone measured: null, not 0.
            try c.encodeNullable(videoFrames == nil ? distance : nil, forKey: "distance")
            try c.encode(routePoints, forKey: "routePoints")
            try c.encode(panoramas, forKey: "panoramas")
            try c.encodeNullable(tilesDownloaded, forKey: "tilesDownloaded")
            try c.encodeNullable(tilesFromCache, forKey: "tilesFromCache")
            try c.encode(panoramasAtLowerZoom, forKey: "panoramasAtLowerZoom")
            try c.encode(panoramasUnavailable, forKey: "panoramasUnavailable")
            try c.encodeFrameFormat(width: width, height: height, frameRate: frameRate)
            try c.encode(duplicatesDropped, forKey: "duplicatesDropped")
            try c.encode(gaps, forKey: "gaps")
            try c.encode(frames, forKey: "frames")
            try c.encode(duration, forKey: "duration")
            try c.encode(credits.shown, forKey: "credits")
            try c.encode(feed, forKey: "source")
            try c.encodeNullable(speed, forKey: "speed")
            try c.encodeNullable(segment, forKey: "segment")
            try c.encodeNullable(stabilization, forKey: "stabilization")
            try c.encodeNullable(posedFromMetadata, forKey: "posedFromMetadata")
        }
    }

    /// What a segment (``HyperlapseJob/Segment``) covered. Encoded as segment (`"K/N"`), jobFrames, firstFrame,
    /// frames (its count), firstPTS, written.
    public struct SegmentSummary: Sendable, Encodable {
        /// Which part of how many.
        public var segment: Segment
        /// The job's frames (before crossfading), and this segment's range of them.
        public var jobFrames: Int
        /// The job's frames this segment rendered (empty when it had none).
        public var frames: Range<Int>
        /// Timestamp of the segment's first frame in the video's time base (1/frame rate).
        public var firstPTS: Int64
        /// False when the segment had no frames (N larger than the job's frames): nothing was written.
        public var written: Bool

        /// See the type's documentation for the keys.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: SummaryKey.self)
            try c.encode(segment.description, forKey: "segment")
            try c.encode(jobFrames, forKey: "jobFrames")
            try c.encode(frames.lowerBound, forKey: "firstFrame")
            try c.encode(frames.count, forKey: "frames")
            try c.encode(firstPTS, forKey: "firstPTS")
            try c.encode(written, forKey: "written")
        }
    }

    /// Checks the settings and that every output can be written (the folder exists, nothing is in the way
    /// without ``overwrite``), without writing anything. Call it before making the feed, so a bad output path
    /// fails before any route or panorama request; ``run(feed:progress:warning:)`` checks again.
    /// - Throws: ``LapseError`` `.usage` for bad settings, `.output` for outputs that cannot be written.
    public func checkOutputs() throws {
        _ = try validated()
        let outputs = try openOutputs()
        outputs.video.discard()
        outputs.credits.discard()
        outputs.job?.discard()
    }

    private func validated() throws -> MediaContainer {
        guard width >= 16, height >= 16, width % 2 == 0, height % 2 == 0 else {
            throw LapseError.usage("the frame size must be even and at least 16x16, not \(width)x\(height)")
        }
        guard (1...120).contains(frameRate.value) else {
            throw LapseError.usage("the frame rate must be 1 to 120 fps, not \(frameRate)")
        }
        let container = try VideoJob.container(for: output)
        if let gif, gif.lowercasedExtension != "gif" {
            throw LapseError.usage("\(gif.shown): the GIF output must end in .gif")
        }
        if let gif {
            // The GIF encoder opens its file only later: check its folder and the overwrite rule now.
            try AtomicOutput(url: gif, overwrite: overwrite).discard()
        }
        try camera.validate()
        if creditPosition != nil { _ = try TextRenderer() } // the font, before any download
        return container
    }

    /// `OUT.credits.txt` and `OUT.job.json` beside the output.
    func sidecar(_ suffix: String) -> URL { output.replacingExtension(with: suffix) }

    private func openOutputs() throws -> (video: AtomicOutput, credits: AtomicOutput, job: AtomicOutput?) {
        // Files the job reads may not be written over (the video source, route, track and camera files).
        let source = settings?.source?.videoFile
        let inputs = [source, settings?.route, settings?.track, settings?.keyframes].compactMap { $0 }
        let video = try AtomicOutput(url: output, overwrite: overwrite, inputs: inputs)
        let credits = try AtomicOutput(url: sidecar(".credits.txt"), overwrite: overwrite, inputs: inputs)
        let jobFile = try settings.map { _ in
            try AtomicOutput(url: sidecar(".job.json"), overwrite: overwrite, inputs: inputs)
        }
        return (video, credits, jobFile)
    }

    /// Runs the job on `feed`.
    /// - Throws: ``LapseError``: `.notFound` when the route has no coverage, `.usage` for bad settings, `.output`
    ///   for outputs that cannot be written, `.invalidInput` when the credits' font is missing, the feed's errors
    ///   (network, invalid input), `.cancelled`.
    public func run(
        feed: any PanoramaFeed, progress: ProgressHandler? = nil,
        warning: WarningHandler? = nil
    ) async throws -> Summary {
        let container = try validated()
        // Check every output up front, before any download.
        let (video, credits, jobFile) = try openOutputs()
        defer {
            video.discard()
            credits.discard()
            jobFile?.discard()
        }
        let creditsPath = sidecar(".credits.txt")

        var planner = StopPlanner(
            feed: feed, path: try CameraPath(camera), stabilization: stabilization, progress: progress,
            recordsReport: recordsReport)
        defer { planner.cancel() }
        let crossfade = self.crossfade

        // A segment plans the whole job first (so its frames and poses are those of every other segment), then
        // renders only its own frames; with a crossfade, the frame before them too, to blend into the first.
        var planned: [StopPlanner.Frame]?
        var segmentSummary: SegmentSummary?
        var leadFrame = false
        if let segment {
            var all: [StopPlanner.Frame] = []
            while let frame = try await planner.next() { all.append(frame) }
            let range = segment.range(of: all.count)
            let start = crossfade && range.lowerBound > 0 ? range.lowerBound - 1 : range.lowerBound
            leadFrame = start < range.lowerBound
            planned = range.isEmpty ? [] : Array(all[start..<range.upperBound])
            // A feed that decodes ahead need not keep the frames before the segment.
            for frame in all[..<start] { feed.skip(frame.stop) }
            if let first = planned?.first, start > 0 { feed.startRendering(at: first.stop) }
            let firstPTS = Int64(crossfade ? max(0, 2 * range.lowerBound - 1) : range.lowerBound)
            segmentSummary = SegmentSummary(
                segment: segment, jobFrames: all.count, frames: range, firstPTS: firstPTS,
                written: !range.isEmpty)
            if range.isEmpty {
                return Summary(
                    feed: feed.name, width: width, height: height, frameRate: frameRate, distance: feed.distance,
                    routePoints: feed.pointCount, pointUnit: feed.pointUnit,
                    panoramas: 0, duplicatesDropped: planner.duplicatesDropped, gaps: planner.gaps,
                    tilesDownloaded: nil, tilesFromCache: nil, frames: 0, duration: 0, output: output, bytes: 0,
                    gif: nil, gifBytes: nil, gifSummary: nil, credits: creditsPath, attributions: [],
                    stabilization: planner.stabilization, orientations: [], segment: segmentSummary)
            }
        }

        var settings = VideoEncoderSettings(width: width, height: height, fps: fps)
        settings.frameRate = (frameRate.numerator, frameRate.denominator)
        settings.crf = crf
        settings.preset = preset
        settings.firstPTS = segmentSummary?.firstPTS ?? 0
        let encoder = try VideoEncoder(url: video.temporaryURL, container: container, settings: settings)
        if gif != nil, let gifWidth, gifWidth > width {
            warning?("the GIF width asked for (\(gifWidth)) is more than the video's: the GIF is \(width) wide")
        }
        let gifSize: (Int, Int)? = gif.map { _ in
            let gw = max(2, min(width, gifWidth ?? width / 3))
            return (gw, max(2, Int((Double(gw) * Double(height) / Double(width)).rounded())))
        }
        let gifEncoder = try gif.map { url in
            try GIFEncoder(
                url: url, width: gifSize!.0, height: gifSize!.1, options: GIFOptions(), overwrite: overwrite)
        }
        defer { gifEncoder?.cancel() }
        let crediting = FrameCrediting(
            overlay: try creditPosition.map { try CreditOverlay(corner: $0) },
            gifSize: gifSize.map { (width: $0.0, height: $0.1) })

        let renderer = FrameRenderer(
            feed: feed, projector: try Projector(width: width, height: height, source: feed.sourceProjection),
            crediting: crediting, crossfade: crossfade,
            yuvPath: feed.yuvImages && !crossfade && !rgbaOnly, warning: warning)
        var sink = EncoderSink(
            encoder: encoder, gifEncoder: gifEncoder, crediting: crediting, crossfade: crossfade, leadFrame: leadFrame,
            frameRate: frameRate, recordsReport: recordsReport, feed: feed, progress: progress)
        // Lookups run a window ahead (StopPlanner); panoramas are fetched and rendered a few frames ahead of the
        // encoder, fetching only the tiles each frame's view reads.
        var nextPlanned = 0
        try await forEachOrdered(
            pulling: {
                guard let planned else { return try await planner.next() }
                defer { nextPlanned += 1 }
                return nextPlanned < planned.count ? planned[nextPlanned] : nil
            },
            concurrency: max(2, ProcessInfo.processInfo.activeProcessorCount + 1),
            produce: { frame in try await renderer.render(frame) },
            consume: { index, frame in try await sink.take(index, frame) })
        guard sink.rendered > 0 || segment != nil else {
            if sink.unavailable > 0, let first = renderer.firstUnavailable.withLock({ $0 }) {
                throw LapseError(
                    first.code, feed.name,
                    "none of the \(sink.unavailable) panoramas found could be had; the first, \(first.reason)")
            }
            throw LapseError(
                .notFound, feed.name,
                "no panoramas along the route (\(planner.pointsLookedUp) points looked up, none covered)")
        }
        if segment == nil || segment?.index == 1 {
            let warnings = [
                planner.stationaryWarning, planner.duplicateWarning, planner.headingWarning, planner.travelWarning
            ]
            for said in warnings.compactMap({ $0 }) {
                warning?("\(feed.name): \(said)")
            }
        }
        if sink.rendered == 1 && segment == nil {
            warning?(
                """
                \(feed.name): one frame only (\(planner.pointsLookedUp) point\(planner.pointsLookedUp == 1 ? "" : "s") \
                looked up, one panorama along \
                them): a still picture, not a hyperlapse
                """
            )
        }
        if sink.lastPoint + 1 < feed.pointCount { // points without imagery at the end of the route
            progress?(
                ProgressEvent(
                    stage: .render, completed: feed.pointCount, total: feed.pointCount, unit: feed.pointUnit,
                    detail: Self.framesWritten(encoder.framesWritten)))
        }
        // A segment credits what its own frames showed; a whole job, every panorama used.
        let attributions =
            planned.map { frames in
                var seen = Set<Attribution>()
                return frames.compactMap(\.stop.attribution).filter { seen.insert($0).inserted }
            } ?? planner.attributions
        // The MP4 index (and its metadata) is written last: the credits of every panorama used go in.
        let routeCredit = routeCredit(of: feed)
        try encoder.finish(metadata: Self.creditsMetadata(attributions, routeCredit: routeCredit, copyright: copyright))
        try credits.write(
            Data(Self.creditsText(attributions, feed: feed.name, routeCredit: routeCredit, copyright: copyright).utf8))
        if let jobFile, var settings = self.settings {
            settings.frames = planner.orientations.isEmpty ? nil : planner.orientations
            let folder = jobFile.url.deletingLastPathComponent()
            try jobFile.write(settings.withAbsolutePaths().withOutputs(relativeTo: folder).jsonData())
        }
        let gifSummary = try await gifEncoder?.finish()
        try video.commit()
        try credits.commit()
        try jobFile?.commit()
        feed.jobFinished()
        let bytes =
            (try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? NSNumber)?.int64Value ?? 0
        let tiles = feed.tiles
        var summary = Summary(
            feed: feed.name, width: width, height: height, frameRate: frameRate, distance: feed.distance,
            routePoints: feed.pointCount, pointUnit: feed.pointUnit,
            panoramas: sink.rendered,
            duplicatesDropped: planner.duplicatesDropped, gaps: planner.gaps,
            tilesDownloaded: tiles?.downloaded, tilesFromCache: tiles?.fromCache, frames: encoder.framesWritten,
            duration: Double(encoder.framesWritten) / frameRate.value, output: output, bytes: bytes,
            gif: gif, gifBytes: gifSummary?.bytes, gifSummary: gifSummary, credits: creditsPath,
            attributions: attributions,
            stabilization: planner.stabilization, orientations: planner.orientations, segment: segmentSummary)
        if let video = feed as? VideoPanoramaFeed {
            summary.videoFrames = (video.frameStep, video.frameCount)
            if summary.duration > 0 {
                // To a thousandth (the frame counts and rates make long fractions: 2.0020000000000002).
                let speed =
                    Double(video.frameStep) * Double(summary.panoramas) / video.video.frameRate
                    / summary.duration
                summary.speed = (speed * 1000).rounded() / 1000
            }
        }
        summary.panoramasAtLowerZoom = feed.panoramasAtLowerZoom
        summary.panoramasUnavailable = sink.unavailable
        if stabilization.enabled || stabilization.toneMatch { summary.posedFromMetadata = feed.analysisRestriction }
        summary.creditLines = Self.creditLines(attributions, routeCredit: routeCredit, copyright: copyright)
        if var report = planner.report {
            for point in sink.unavailablePoints { report.mark(point: point, .unavailable) }
            // A panorama's frame is the one of its route point (the same panorama may come back further on).
            var frameOfPoint: [Int: Int] = [:]
            for f in sink.reportFrames where frameOfPoint[f.point] == nil { frameOfPoint[f.point] = f.index }
            for k in report.panoramas.indices { report.panoramas[k].frame = frameOfPoint[report.panoramas[k].point] }
            report.frames = sink.reportFrames
            summary.report = report
        }
        return summary
    }
}

/// The encoding stage of a hyperlapse: rendered frames in, in order, to the video (and the GIF beside it), with a
/// crossfade blended and credited here; it counts what was written and left out, and records each frame for the
/// report.
private struct EncoderSink {
    let encoder: VideoEncoder
    let gifEncoder: GIFEncoder?
    let crediting: FrameCrediting
    let crossfade: Bool
    /// The first frame is a segment's lead, only blended into the next.
    let leadFrame: Bool
    let frameRate: FrameRate
    let recordsReport: Bool
    let feed: any PanoramaFeed
    let progress: ProgressHandler?
    var frameDuration: Double { 1 / frameRate.value }
    /// The last frame written, clean, for a crossfade's blend.
    var previous: (frame: PixelBuffer, credit: String?)?
    /// Frames written (a crossfade's blends apart) and the route point of the last.
    var rendered = 0
    var lastPoint = -1
    /// Frames left out, their panoramas not to be had, and their route points.
    var unavailable = 0
    var unavailablePoints: [Int] = []
    var reportFrames: [HyperlapseReport.Frame] = []

    init(
        encoder: VideoEncoder, gifEncoder: GIFEncoder?, crediting: FrameCrediting, crossfade: Bool, leadFrame: Bool,
        frameRate: FrameRate, recordsReport: Bool, feed: any PanoramaFeed, progress: ProgressHandler?
    ) {
        self.encoder = encoder
        self.gifEncoder = gifEncoder
        self.crediting = crediting
        self.crossfade = crossfade
        self.leadFrame = leadFrame
        self.frameRate = frameRate
        self.recordsReport = recordsReport
        self.feed = feed
        self.progress = progress
    }

    mutating func take(_ index: Int, _ frame: RenderedFrame?) async throws {
        if leadFrame && index == 0 { // only blended into the segment's first frame
            previous = frame?.pixels.map { ($0, frame?.credit) }
            return
        }
        guard let frame, !frame.isMissing else {
            unavailable += 1
            if let frame { unavailablePoints.append(frame.point) }
            return
        }
        if let yuv = frame.yuv {
            try encoder.append(yuv)
            if let gifEncoder, let gif = frame.gif { try await gifEncoder.add(gif, duration: frameDuration) }
        } else if crossfade, let pixels = frame.pixels {
            var frames = [(pixels, frame.credit)]
            if let previous {
                frames.insert(
                    (
                        previous.frame.blended(with: pixels, amount: 0.5),
                        HyperlapseJob.blendedCredit(previous.credit, frame.credit)
                    ), at: 0)
            }
            previous = (pixels, frame.credit)
            for (pixels, credit) in frames {
                // A copy: `previous` keeps the frame without its credit for the next blend.
                var credited = pixels
                let gifFrame = try crediting.apply(credit, to: &credited)
                try encoder.append(credited)
                if let gifEncoder, let gifFrame { try await gifEncoder.add(gifFrame, duration: frameDuration) }
            }
        } else if let pixels = frame.pixels {
            try encoder.append(pixels)
            if let gifEncoder, let gif = frame.gif { try await gifEncoder.add(gif, duration: frameDuration) }
        }
        rendered += 1
        lastPoint = frame.point
        if recordsReport {
            let index = encoder.framesWritten - 1
            let stop = frame.planned.stop
            let camera = frame.planned.camera
            reportFrames.append(
                HyperlapseReport.Frame(
                    index: index, time: Double(index) / frameRate.value, pano: stop.panoramaID,
                    point: frame.point,
                    heading: camera.heading, pitch: camera.pitch, fov: camera.fov,
                    sourcePanoHeading: stop.orientation?.sourceHeading ?? stop.pose.heading,
                    panoHeading: stop.pose.heading))
        }
        // Progress along the route: the number of frames is known only once the lookup has reached the end.
        progress?(
            ProgressEvent(
                stage: .render, completed: frame.point + 1, total: feed.pointCount, unit: feed.pointUnit,
                detail: HyperlapseJob.framesWritten(encoder.framesWritten)))
    }
}

/// The render stage of a hyperlapse: one planned frame in, its picture out — fetched (only what its view reads),
/// projected, toned and credited, as Y′CbCr where the feed's panoramas come so (straight into the encoder's frames,
/// the GIF's frame scaled and converted from the view in one pass) and RGBA otherwise (and with a crossfade, which
/// blends and credits at the encoder). Called for several frames at once, from the pool.
private final class FrameRenderer: Sendable {
    let feed: any PanoramaFeed
    let projector: Projector
    let crediting: FrameCrediting
    let crossfade: Bool
    /// Panoramas that come as Y′CbCr (a video decoded as it is, JPEG tiles and pictures from their planes) are
    /// rendered plane by plane; a crossfade takes the RGBA path.
    let yuvPath: Bool
    let warning: WarningHandler?
    /// Why the first panorama left out could not be had: the error when none could.
    let firstUnavailable = Mutex<LapseError?>(nil)

    init(
        feed: any PanoramaFeed, projector: Projector, crediting: FrameCrediting, crossfade: Bool, yuvPath: Bool,
        warning: WarningHandler?
    ) {
        self.feed = feed
        self.projector = projector
        self.crediting = crediting
        self.crossfade = crossfade
        self.yuvPath = yuvPath
        self.warning = warning
    }

    func render(_ frame: StopPlanner.Frame) async throws -> RenderedFrame? {
        let projector = self.projector
        // The view is prepared once for the panorama's size (chosen by the source) and shared by the tile
        // selection and the render.
        let prepared = PreparedViewSlot()
        let region = PanoramaRegion { w, h, cw, ch in
            let view = try projector.prepare(
                sourceWidth: w, sourceHeight: h, pose: frame.stop.pose, camera: frame.camera)
            prepared.view = view
            return try projector.footprint(view, cellWidth: cw, cellHeight: ch)
        }
        // A panorama that cannot be had (gone since the lookup, no imagery at any zoom, a picture that does
        // not decode): its frame is left out, not the job.
        func available<T>(_ fetch: () async throws -> T) async throws -> T? {
            do { return try await fetch() } catch let error as LapseError
                where error.code == .notFound || error.code == .invalidInput
            {
                warning?("\(feed.name) pano \(frame.stop.panoramaID): \(error.reason); its frame is left out")
                let said = LapseError(error.code, feed.name, "pano \(frame.stop.panoramaID): \(error.reason)")
                firstUnavailable.withLock { if $0 == nil { $0 = said } }
                return nil
            }
        }
        if yuvPath {
            // What the Y′CbCr render reads: luma and chroma taps (a chroma tap may reach a pixel past the
            // luma's).
            let yuvRegion = PanoramaRegion { w, h, cw, ch in
                try projector.yuvFootprint(
                    sourceWidth: w, sourceHeight: h, pose: frame.stop.pose, camera: frame.camera, cellWidth: cw,
                    cellHeight: ch)
            }
            guard
                var made = try await available({ try await feed.yuvImage(for: frame.stop, region: yuvRegion) })
            else { return .missing(frame) }
            if let picture = made.take() {
                try Task.checkCancellation()
                var view = try projector.render(picture, pose: frame.stop.pose, camera: frame.camera)
                feed.recycle(consume picture)
                let credit = frame.stop.attribution?.credit
                // Tone and credit as the RGBA path draws them, in the frame's own Y′CbCr; the GIF's frame is
                // the toned view at the GIF's size, credited there.
                frame.tone?.apply(to: &view)
                var gifFrame = try crediting.gifSize.map { try view.rgba(width: $0.width, height: $0.height) }
                if let credit, let overlay = crediting.overlay {
                    overlay.draw(credit, into: &view)
                    if gifFrame != nil { overlay.draw(credit, into: &gifFrame!) }
                }
                return RenderedFrame(pixels: nil, yuv: view, gif: gifFrame, credit: credit, frame: frame)
            }
            // This panorama comes as RGBA only: rendered as such.
        }
        guard let panorama = try await available({ try await feed.image(for: frame.stop, region: region) })
        else {
            return .missing(frame)
        }
        try Task.checkCancellation()
        var view = prepared.view
        if view?.sourceWidth != panorama.width || view?.sourceHeight != panorama.height {
            view = try projector.prepare(
                sourceWidth: panorama.width, sourceHeight: panorama.height,
                pose: frame.stop.pose, camera: frame.camera)
        }
        var rendered = try projector.render(panorama, view: view!)
        frame.tone?.apply(to: &rendered)
        let credit = frame.stop.attribution?.credit
        // The credit goes in here, on all cores, into the frame no one else holds yet; with a crossfade the
        // frame is blended first (clean), and credited as it goes to the encoder.
        let gifFrame = crossfade ? nil : try crediting.apply(credit, to: &rendered)
        return RenderedFrame(pixels: rendered, yuv: nil, gif: gifFrame, credit: credit, frame: frame)
    }
}

/// A frame rendered for the encoder: its pixels (credited, unless crossfading) or, rendered as Y′CbCr and
/// needing nothing drawn, its Y′CbCr picture; its GIF frame (credited at the GIF's size), its credit, and the
/// frame planned (stop, camera, route point). Neither pixels nor Y′CbCr: its panorama could not be had.
private struct RenderedFrame: Sendable {
    var pixels: PixelBuffer?
    var yuv: YUVFrame?
    var gif: PixelBuffer?
    var credit: String?
    var planned: StopPlanner.Frame
    var point: Int { planned.point }
    var isMissing: Bool { pixels == nil && yuv == nil }

    init(pixels: PixelBuffer?, yuv: YUVFrame?, gif: PixelBuffer?, credit: String?, frame: StopPlanner.Frame) {
        self.pixels = pixels
        self.yuv = yuv
        self.gif = gif
        self.credit = credit
        planned = frame
    }

    static func missing(_ frame: StopPlanner.Frame) -> RenderedFrame {
        RenderedFrame(pixels: nil, yuv: nil, gif: nil, credit: nil, frame: frame)
    }
}

/// The view a frame's tile selection prepared, for its render (set from the source's task, read after it).
private final class PreparedViewSlot: Sendable {
    private let stored = Mutex<Projector.PreparedView?>(nil)
    var view: Projector.PreparedView? {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
