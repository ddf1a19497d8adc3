// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseMedia
import LapseNet
import LapseRender

/// The `lapse panoramas` job: look up the panorama of each route point, download and stitch each distinct one,
/// write them as equirectangular JPEGs and a `manifest.json` into a folder.
public struct PanoramaExport: Sendable {
    /// One written panorama.
    public struct Written: Sendable, Codable, Equatable {
        /// The panorama's metadata, as the manifest records it.
        public var panorama: PanoramaMetadata
        /// File name inside the output folder.
        public var file: String
        /// Width of the JPEG written, pixels.
        public var width: Int
        /// Height of the JPEG written, pixels.
        public var height: Int
        /// Google zoom level used, for tiled sources.
        public var zoom: Int?
        /// All-black placeholder tiles met (and not used).
        public var placeholderTiles: [TileIndex]
    }

    /// What the job did.
    public struct Result: Sendable {
        /// Each route point's match (nil panorama: none within the radius).
        public var matches: [PanoramaMatch]
        /// Points with and without imagery, unique panoramas, consecutive duplicates.
        public var coverage: CoverageSummary
        /// The panoramas written, in route order.
        public var written: [Written]
        /// Panoramas that could not be fetched, with the reason (one line each).
        public var failed: [(id: String, reason: String)]
        /// Tiles downloaded (tiled sources).
        public var tilesDownloaded: Int
        /// Tiles read from the cache (tiled sources).
        public var tilesFromCache: Int
        /// Panoramas an earlier, unfinished run of the same job had written (kept, not fetched again).
        public var resumed: Int
        /// The manifest written.
        public var manifest: URL
    }

    /// Where the panoramas come from.
    public var source: any PanoramaSource
    /// Search radius, metres.
    public var radius: Double = 50
    /// The size the panoramas are fetched and written at (default: the largest the source has).
    public var resolution: PanoramaResolution = .full
    /// Output folder (created when missing).
    public var outputDirectory: URL
    /// Replace files of an earlier, finished run (an unfinished one's are kept and not fetched again).
    public var overwrite = false
    /// Panoramas fetched at once (their tiles share the HTTP client's limit).
    public var concurrentPanoramas = 2
    /// JPEG quality of the files written, 1–100 (default 92).
    public var jpegQuality = 92
    /// Receives download progress.
    public var progress: ProgressHandler?
    /// Receives a line per panorama that failed and per file skipped.
    public var warning: WarningHandler?

    /// An export of `source`'s panoramas into `outputDirectory`, every other setting at its default.
    public init(source: any PanoramaSource, outputDirectory: URL) {
        self.source = source
        self.outputDirectory = outputDirectory
    }

    /// Runs the job for `points`.
    /// - Throws: ``LapseError`` `.notFound` when no point has imagery within the radius ("no coverage"),
    ///   `.output` for an unwritable folder or existing files without `overwrite`, the source's errors.
    ///   A single panorama that fails to download is reported in ``Result/failed`` and warned about; when all
    ///   fail, the first failure is thrown.
    public func run(points: [RoutePoint]) async throws -> Result {
        guard !points.isEmpty else { throw LapseError(.invalidInput, nil, "the route has no points") }
        try checkManifest()
        let matches = try await PanoramaLookup.matches(for: points, in: source, radius: radius)
        let coverage = CoverageSummary(matches)
        guard coverage.withImagery > 0 else {
            throw LapseError(
                .notFound, "\(source.name)",
                "no coverage: no panorama within \(Self.format(radius)) m of any of the \(points.count) route points")
        }
        return try await write(matches: matches, coverage: coverage)
    }

    /// Runs the job for a list of panoramas taken as they are (a video without a track: every N-th frame),
    /// without a lookup: each is its own "route point".
    public func run(panoramas: [PanoramaMetadata]) async throws -> Result {
        guard !panoramas.isEmpty else { throw LapseError(.notFound, source.name, "no panoramas to write") }
        try checkManifest()
        let matches = panoramas.enumerated().map { i, p in
            PanoramaMatch(
                index: i, coordinate: p.coordinate, distanceAlongRoute: 0, routeHeading: p.heading,
                panorama: p, distance: 0, repeatsPrevious: false)
        }
        return try await write(matches: matches, coverage: CoverageSummary(matches))
    }

    /// The manifest beside the panoramas, named by its absolute path (as its messages and summary give it).
    var manifest: URL { outputDirectory.absoluteURL.appendingPathComponent("manifest.json", isDirectory: false) }

    /// A finished job's folder (it has a manifest) is not written again without `overwrite`: checked by the
    /// `run` methods before any lookup is sent (and by a caller before it plans the route). An unfinished one's
    /// (killed or interrupted before its manifest) is completed.
    /// - Throws: ``LapseError`` `.output` naming the manifest.
    public func checkManifest() throws {
        if FileManager.default.fileExists(atPath: manifest.path), !overwrite {
            throw LapseError(.output, manifest.path, "file exists (use `overwrite` to replace it)")
        }
    }

    private func write(matches: [PanoramaMatch], coverage: CoverageSummary) async throws -> Result {
        do {
            try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        } catch {
            throw LapseError(.output, outputDirectory, "cannot create the folder")
        }
        let journal = try Journal(
            folder: outputDirectory.filePath, job: "\(source.name)|\(resolution)|\(jpegQuality)", fresh: overwrite)
        // A run that finished while this one looked its panoramas up has left its manifest: kept, as at the start
        // (and the journal this run opened, which nobody else's is then, goes).
        do { try checkManifest() } catch {
            journal.finish()
            throw error
        }
        // Distinct panoramas in route order.
        var seen = Set<String>()
        var unique: [PanoramaMetadata] = []
        for m in matches { if let p = m.panorama, seen.insert("\(p.source)/\(p.id)").inserted { unique.append(p) } }

        var written: [Int: Written] = [:]
        var failed: [(Int, String, String)] = []
        var downloaded = 0
        var cached = 0
        var done = 0
        var resumed = 0
        let progress = self.progress
        progress?(ProgressEvent(stage: .panoramas, completed: 0, total: unique.count, unit: "panoramas"))
        try await withThrowingTaskGroup(of: (Int, Swift.Result<Fetched, LapseError>).self) { group in
            var next = 0
            func addNext() {
                guard next < unique.count else { return }
                let i = next
                let pano = unique[i]
                next += 1
                group.addTask { (i, await self.fetchAndWrite(pano, number: i, journal: journal)) }
            }
            for _ in 0..<max(1, concurrentPanoramas) { addNext() }
            for try await (i, outcome) in group {
                switch outcome {
                case .success(let f):
                    written[i] = f.written
                    downloaded += f.downloaded
                    cached += f.fromCache
                    if f.kept { resumed += 1 }
                case .failure(let error):
                    if error.code == .cancelled || error.code == .denied || error.code == .output { throw error }
                    failed.append((i, unique[i].id, error.description))
                    warning?(error.description)
                }
                done += 1
                progress?(ProgressEvent(stage: .panoramas, completed: done, total: unique.count, unit: "panoramas"))
                addNext()
            }
        }
        if written.isEmpty, let first = failed.min(by: { $0.0 < $1.0 }) {
            throw LapseError(.network, nil, "no panorama could be fetched; first failure: \(first.2)")
        }
        let writtenList = written.keys.sorted().compactMap { written[$0] }
        try writeManifest(matches: matches, coverage: coverage, written: writtenList, to: manifest)
        journal.finish()
        source.jobFinished()
        return Result(
            matches: matches, coverage: coverage, written: writtenList,
            failed: failed.sorted { $0.0 < $1.0 }.map { ($0.1, $0.2) },
            tilesDownloaded: downloaded, tilesFromCache: cached, resumed: resumed,
            manifest: manifest)
    }

    /// The file name of the `number`-th distinct panorama: `0001_<id>.jpg` with the id made safe, a photo's own
    /// extension left out (`0001_GSAG2002.jpg`, not `0001_GSAG2002.JPG.jpg`) and a video frame's time as
    /// `video-2.002s` (its id `video@2.002` would come out as `video%402.002`).
    public static func fileName(number: Int, id: String) -> String {
        let n = String(number + 1)
        var base = id
        if let dot = base.lastIndex(of: "."),
            ["jpg", "jpeg", "png", "webp", "tif", "tiff", "heic"].contains(base[base.index(after: dot)...].lowercased())
        {
            base = String(base[..<dot])
        }
        if base.hasPrefix("video@") { base = "video-" + base.dropFirst("video@".count) + "s" }
        return String(repeating: "0", count: max(0, 4 - n.count)) + n + "_" + CacheKey.sanitise(base) + ".jpg"
    }

    /// A date as the manifest gives it: ISO 8601; EXIF's `2020:05:09 14:16:30` (a local photo's) becomes
    /// `2020-05-09T14:16:30`, other forms (Street View's `2020-05`, Panoramax's ISO dates) are kept.
    static func manifestDate(_ date: String?) -> String? {
        guard let date, let m = date.wholeMatch(of: /(\d{4}):(\d{2}):(\d{2})[ T](\d{2}:\d{2}:\d{2})(.*)/) else {
            return date
        }
        return "\(m.1)-\(m.2)-\(m.3)T\(m.4)\(m.5)"
    }

    /// One panorama done: its record, its tiles downloaded and from the cache, whether an earlier run wrote it.
    private struct Fetched: Sendable {
        var written: Written
        var downloaded: Int, fromCache: Int
        var kept: Bool
    }

    private func fetchAndWrite(_ pano: PanoramaMetadata, number: Int, journal: Journal) async
        -> Swift.Result<Fetched, LapseError>
    {
        let name = Self.fileName(number: number, id: pano.id)
        // Written by an earlier run of this job that did not finish: kept.
        if let w = journal.reusable(name, for: pano, in: outputDirectory.filePath) {
            return .success(Fetched(written: w, downloaded: 0, fromCache: 0, kept: true))
        }
        do {
            var image = try await source.image(for: pano, resolution: resolution)
            if image.projection != .equirectangular {
                image.pixels = try image.equirectangularPixels()
                image.projection = .equirectangular
            }
            if !image.placeholderTiles.isEmpty {
                let tiles =
                    image.placeholderTiles.prefix(4).map(\.description).joined(separator: ", ")
                    + (image.placeholderTiles.count > 4 ? ", …" : "")
                warning?(
                    """
                    \(pano.source) pano \(pano.id): \(image.placeholderTiles.count) all-black placeholder tiles \
                    above zoom \(image.zoom ?? 0) (\(tiles)); used zoom \(image.zoom ?? 0)
                    """
                )
            } else if image.fellBack, let asked = image.requestedZoom, let used = image.zoom {
                warning?(
                    """
                    \(pano.source) pano \(pano.id): no imagery at zoom \(asked) (the service answered tile \
                    errors); used zoom \(used)
                    """
                )
            }
            let path = outputDirectory.appendingPathComponent(name, isDirectory: false).path
            let w = Written(
                panorama: image.metadata, file: name, width: image.pixels.width, height: image.pixels.height,
                zoom: image.zoom, placeholderTiles: image.placeholderTiles)
            // Recorded before the image is in place: an image of the folder without its line is not this job's.
            if !FileManager.default.fileExists(atPath: path) || overwrite { try journal.append(w) }
            try ImageWriter.write(
                image.pixels, to: URL(fileURLWithPath: path), format: .jpeg(quality: jpegQuality), overwrite: overwrite)
            return .success(
                Fetched(written: w, downloaded: image.tilesDownloaded, fromCache: image.tilesFromCache, kept: false))
        } catch let error as LapseError {
            return .failure(error)
        } catch {
            return .failure(LapseError(.other, pano.id, "\(error)"))
        }
    }

    /// The manifest: each route point with the pano id chosen, its distance, heading and date; the written files;
    /// the coverage summary.
    private func writeManifest(
        matches: [PanoramaMatch], coverage: CoverageSummary, written: [Written], to manifest: URL
    )
        throws
    {
        struct Point: Encodable {
            var index: Int, lat: Double, lng: Double, distanceAlongRoute: Double, routeHeading: Double
            var panoId: String?, distance: Double?, panoHeading: Double?, date: String?, file: String?,
                repeatsPrevious: Bool
        }
        struct Manifest: Encodable {
            var source: String, radius: Double, coverage: CoverageSummary, points: [Point], panoramas: [Written]
        }
        let fileOf = Dictionary(
            written.map { ("\($0.panorama.source)/\($0.panorama.id)", $0.file) }, uniquingKeysWith: { a, _ in a })
        let points = matches.map { m in
            Point(
                index: m.index, lat: m.coordinate.latitude, lng: m.coordinate.longitude,
                distanceAlongRoute: (m.distanceAlongRoute * 100).rounded() / 100,
                routeHeading: (m.routeHeading * 100).rounded() / 100,
                panoId: m.panorama?.id, distance: m.distance.map { ($0 * 100).rounded() / 100 },
                panoHeading: m.panorama?.heading, date: Self.manifestDate(m.panorama?.date),
                file: m.panorama.flatMap { fileOf["\($0.source)/\($0.id)"] }, repeatsPrevious: m.repeatsPrevious)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(
            Manifest(source: source.name, radius: radius, coverage: coverage, points: points, panoramas: written))
        let output = try AtomicOutput(url: manifest, overwrite: overwrite)
        do { try output.write(data) } catch {
            output.discard()
            throw LapseError(.output, manifest.path, "cannot write the manifest")
        }
        try output.commit()
    }

    static func format(_ v: Double) -> String { NumberText.compact(v) }
}
