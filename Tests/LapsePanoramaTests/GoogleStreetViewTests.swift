// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseMedia
import LapseNet
import Synchronization
import TestSupport
import Testing

@testable import LapsePanorama

@Suite struct GoogleStreetViewTests {
    /// The source image scaled as the stand-in scales it before cutting tiles: the stitched result must match it.
    static func reference(_ source: String, width: Int, height: Int) throws -> PixelBuffer {
        try ffmpegRaw(
            source, filters: "scale=\(width):\(height):flags=bicubic,format=yuv444p", width: width, height: height)
    }

    /// Both size families at every zoom that stays fast, plus one larger (zoom 4 of the older family, 13×7 tiles
    /// with padded edges).
    @Test(arguments: [
        (MapTilesWorld.newFamily, 0, 512, 256), (MapTilesWorld.newFamily, 1, 1024, 512),
        (MapTilesWorld.newFamily, 2, 2048, 1024), (MapTilesWorld.newFamily, 3, 4096, 2048),
        (MapTilesWorld.oldFamily, 0, 416, 208), (MapTilesWorld.oldFamily, 1, 832, 416),
        (MapTilesWorld.oldFamily, 2, 1664, 832), (MapTilesWorld.oldFamily, 3, 3328, 1664),
        (MapTilesWorld.oldFamily, 4, 6656, 3328)
    ])
    func stitchedPanoramaEqualsItsSource(id: String, zoom: Int, width: Int, height: Int) async throws {
        let server = try MapTilesWorld.server()
        let source = try MapTilesWorld.source(server)
        let metadata = try await source.metadata(id: id)
        let image = try await source.image(for: metadata, resolution: .zoom(zoom))
        #expect(image.zoom == zoom)
        #expect(image.pixels.width == width && image.pixels.height == height)
        #expect(image.placeholderTiles.isEmpty)
        let file = id == MapTilesWorld.newFamily ? MapTilesWorld.newSource : MapTilesWorld.oldSource
        let psnr = ImageMetrics.psnr(image.pixels, try Self.reference(file, width: width, height: height))
        #expect(psnr >= 40, "PSNR \(psnr) dB")
    }

    /// A route along which every third place also has a panorama of another capture run (another date, on the
    /// other side of the road, nearer the line than the run's own): the nearest is the other run's there, but the
    /// previous frame's run, found through its links, is kept (a link to a panorama that is gone is passed over);
    /// with `sameRunSlack` 0 the nearest is taken.
    @Test func theSameCaptureRunIsKept() async throws {
        let dir = TestData.scratchDirectory("same-run")
        defer { try? FileManager.default.removeItem(at: dir) }
        let world = try RouteWorld(arguments: ["--other-run", "3", "--gap", ""], in: dir)
        let runs = try RouteWorld.getJSON(world.baseURL + "/_world")["panoramas"] as? [[String: Any]] ?? []
        let other = Set(runs.filter { $0["run"] as? String == "other" }.compactMap { $0["id"] as? String })
        #expect(other.count == 10)
        let route = try RouteFile.read(URL(fileURLWithPath: world.routeFile))
        let points = try route.resampled(every: 10).map(\.coordinate)
        var source = try GoogleStreetViewSource(apiKey: RouteWorld.key, baseURL: URL(string: world.baseURL)!)
        let kept = try await source.nearest(to: points, radius: 50).compactMap { $0 }
        #expect(kept.count == points.count)
        #expect(kept.allSatisfy { !other.contains($0.id) && $0.date == "2025-06" })
        // Every panorama of the run, in order along the road.
        let order = kept.map(\.id).reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }
        #expect(order == world.panoramas.filter { !other.contains($0.id) }.map(\.id))
        source.sameRunSlack = 0
        let nearest = try await source.nearest(to: points, radius: 50).compactMap { $0 }
        #expect(Set(nearest.map(\.id)).intersection(other).count >= 8)
    }

    @Test func metadataCarriesPoseSizesAndAttribution() async throws {
        let server = try MapTilesWorld.server()
        let m = try await MapTilesWorld.source(server).metadata(id: MapTilesWorld.oldFamily)
        #expect(m.source == "google" && m.id == MapTilesWorld.oldFamily)
        #expect(m.width == 13312 && m.height == 6656 && m.tileWidth == 512 && m.tileHeight == 512)
        #expect(m.heading == 200 && abs(m.tilt - 1.5) < 1e-9 && m.roll == -0.5) // tilt 91.5 in the API = 1.5 up
        #expect(m.date == "2019-08" && m.copyright == "© Stand-in Imagery")
        #expect(m.coordinate.distance(to: MapTilesWorld.oldPosition) < 0.01)
    }

    @Test func autoZoomFollowsTheResolutionNeeded() async throws {
        let server = try MapTilesWorld.server()
        let source = try MapTilesWorld.source(server)
        let m = try await source.metadata(id: MapTilesWorld.oldFamily)
        #expect(GoogleStreetViewSource.zoom(for: .atLeast(width: 800), metadata: m) == 1)
        #expect(GoogleStreetViewSource.zoom(for: .atLeast(width: 1664), metadata: m) == 2)
        #expect(GoogleStreetViewSource.zoom(for: .full, metadata: m) == 5)
        let image = try await source.image(for: m, resolution: .atLeast(width: 800))
        #expect(image.zoom == 1 && image.pixels.width == 832 && image.pixels.height == 416)
    }

    @Test func nearestBatchesAHundredLocationsARequest() async throws {
        let server = try MapTilesWorld.server()
        let source = try MapTilesWorld.source(server)
        // 250 points: the first three sit on the three panoramas, the rest far away.
        var points = [
            MapTilesWorld.newPosition, MapTilesWorld.oldPosition.destination(bearing: 90, distance: 10),
            MapTilesWorld.darkPosition
        ]
        points += (0..<247).map { _ in Coordinate(uncheckedLatitude: 48.1, longitude: 11.5) }
        let found = try await source.nearest(to: points, radius: 30)
        #expect(found.count == 250)
        #expect(found[0]?.id == MapTilesWorld.newFamily)
        #expect(found[1]?.id == MapTilesWorld.oldFamily)
        #expect(found[2]?.id == MapTilesWorld.dark)
        #expect(found[3...].allSatisfy { $0 == nil })
        let stats = try await MapTilesWorld.stats(server)
        #expect(stats.byKind["panoIds"] == 3)
        #expect(stats.byKind["createSession"] == 1) // one session token, reused
        #expect(stats.byKind["metadata"] == 3) // once per distinct pano
    }

    @Test func blackPlaceholderTilesAreReportedNotUsed() async throws {
        let server = try MapTilesWorld.server()
        let source = try MapTilesWorld.source(server)
        let m = try await source.metadata(id: MapTilesWorld.dark)
        // Auto: zoom 2 turns out to be placeholders only; falls back to zoom 1 and reports them.
        let image = try await source.image(for: m, resolution: .atLeast(width: 1600))
        #expect(image.zoom == 1 && image.pixels.width == 832)
        #expect(image.placeholderTiles.count == 8)
        #expect(image.placeholderTiles.allSatisfy { $0.zoom == 2 })
        let psnr = ImageMetrics.psnr(image.pixels, try Self.reference(MapTilesWorld.oldSource, width: 832, height: 416))
        #expect(psnr >= 40)
        // A zoom given explicitly: placeholders are never passed off as imagery, and never abort the job either:
        // the next lower zoom that has imagery is used and what was met is reported.
        let explicit = try await source.image(for: m, resolution: .zoom(3))
        #expect(explicit.zoom == 1 && explicit.requestedZoom == 3 && explicit.fellBack)
        #expect(
            explicit.placeholderTiles.filter { $0.zoom == 3 }.count == 28
                && explicit.placeholderTiles.filter { $0.zoom == 2 }.count == 8)
    }

    /// The same panorama asked for as Y′CbCr: the same fallback (zoom 1, the zoom-2 placeholders reported) and the
    /// picture the RGBA stitch makes (SSIM ≥ 0.995, each channel's mean within 1 code value).
    @Test func blackPlaceholderTilesAreSpottedInYUVToo() async throws {
        let server = try MapTilesWorld.server()
        let source = try MapTilesWorld.source(server)
        let m = try await source.metadata(id: MapTilesWorld.dark)
        let image = try #require(try await source.yuvImage(for: m, resolution: .atLeast(width: 1600), region: nil))
        let yuv = try #require(image.yuv)
        #expect(image.zoom == 1 && yuv.width == 832)
        #expect(image.placeholderTiles.count == 8 && image.placeholderTiles.allSatisfy { $0.zoom == 2 })
        let rgba = try yuv.rgba()
        let stitched = try await source.image(for: m, resolution: .atLeast(width: 1600)).pixels
        let d = ImageMetrics.meanColour(rgba) - ImageMetrics.meanColour(stitched)
        #expect(ImageMetrics.ssim(rgba, stitched) >= 0.995)
        #expect(abs(d.x) <= 1 && abs(d.y) <= 1 && abs(d.z) <= 1, "\(d)")
    }

    /// A user photosphere (7680 × 3840): zoom 5 is its full resolution, zoom 0 is 240 × 120; the stitched image at
    /// every zoom equals the source scaled to that size, and no tile outside the documented grid is asked for.
    @Test(arguments: [(0, 240, 120), (1, 480, 240), (2, 960, 480), (3, 1920, 960)])
    func photosphereZoomsFollowTheDocumentedRule(zoom: Int, width: Int, height: Int) async throws {
        let server = try MapTilesWorld.server()
        let source = try MapTilesWorld.source(server)
        let m = try await source.metadata(id: MapTilesWorld.photosphere)
        #expect(m.width == 7680 && m.height == 3840)
        let image = try await source.image(for: m, resolution: .zoom(zoom))
        #expect(image.zoom == zoom && !image.fellBack)
        #expect(image.pixels.width == width && image.pixels.height == height)
        let psnr = ImageMetrics.psnr(
            image.pixels, try Self.reference(MapTilesWorld.newSource, width: width, height: height))
        #expect(psnr >= 40, "PSNR \(psnr) dB")
        let stats = try await MapTilesWorld.stats(server)
        #expect(stats.byKind["tile_errors"] == nil)
        #expect(stats.tiles == TileGrid(zoom: zoom, fullWidth: 7680, fullHeight: 3840).tileCount)
    }

    @Test func autoZoomOfAPhotosphereAsksForTheSizeNeeded() async throws {
        let server = try MapTilesWorld.server()
        let m = try await MapTilesWorld.source(server).metadata(id: MapTilesWorld.photosphere)
        // 1000 px needed: zoom 3 (1920 wide), not zoom 1 as a width-from-512 rule would give.
        #expect(GoogleStreetViewSource.zoom(for: .atLeast(width: 1000), metadata: m) == 3)
        #expect(GoogleStreetViewSource.zoom(for: .atLeast(width: 240), metadata: m) == 0)
        #expect(GoogleStreetViewSource.zoom(for: .full, metadata: m) == 5)
    }

    /// Tiles the API answers with NOT_FOUND (imagery missing at zoom 3 and up): the panorama comes from zoom 2,
    /// counted as a fallback, and nothing fails.
    @Test func aTileErrorFallsBackOneZoom() async throws {
        let server = try MapTilesWorld.server()
        let source = try MapTilesWorld.source(server)
        let m = try await source.metadata(id: MapTilesWorld.gapped)
        let image = try await source.image(for: m, resolution: .zoom(3))
        #expect(image.zoom == 2 && image.requestedZoom == 3 && image.fellBack && image.placeholderTiles.isEmpty)
        #expect(image.pixels.width == 2048 && image.pixels.height == 1024)
        let psnr = ImageMetrics.psnr(
            image.pixels, try Self.reference(MapTilesWorld.newSource, width: 2048, height: 1024))
        #expect(psnr >= 40, "PSNR \(psnr) dB")
        let stats = try await MapTilesWorld.stats(server)
        #expect((stats.byKind["tile_errors"] ?? 0) >= 1)
        let log = try await HTTPClient.shared.getJSON(URL(string: server.baseURL + "/_log")!, as: [String].self)
        #expect(log.filter { $0.hasSuffix(" 200") }.count == 8) // the 4 × 2 tiles of zoom 2
        #expect(log.allSatisfy { $0.contains(" 3/") ? $0.hasSuffix(" 404") : $0.hasSuffix(" 200") })
    }

    /// Quota and rate refusals as Google sends them (403 `rateLimitExceeded`, 429 `RESOURCE_EXHAUSTED`) are
    /// retried with backoff, not reported as a key problem.
    @Test func quotaErrorsAreRetried() async throws {
        let server = try MapTilesWorld.server(quotaErrors: 4)
        let source = try MapTilesWorld.source(server)
        let found = try await source.nearest(to: [MapTilesWorld.newPosition], radius: 20)
        let m = try #require(found[0])
        let image = try await source.image(for: m, resolution: .zoom(1))
        #expect(image.pixels.width == 1024)
        let stats = try await MapTilesWorld.stats(server)
        #expect(stats.byKind["quota_errors"] == 4)
        // After the last attempt it is a rate-limit error that says so, not REQUEST_DENIED.
        let limited = try MapTilesWorld.server(quotaErrors: 100)
        let once = try MapTilesWorld.source(limited, client: MapTilesWorld.client(attempts: 2))
        await #expect {
            _ = try await once.nearest(to: [MapTilesWorld.newPosition], radius: 20)
        } throws: { error in
            let e = error as? LapseError
            return e?.code == .rateLimited && !"\(error)".contains("REQUEST_DENIED")
                && !"\(error)".contains(MapTilesWorld.key)
        }
    }

    @Test func faultsDoNotChangeTheOutputAndTheLimitHolds() async throws {
        let clean = try MapTilesWorld.server()
        let faulty = try MapTilesWorld.server(faults: 0.2)
        let limit = 4
        let points = [MapTilesWorld.newPosition, MapTilesWorld.oldPosition]
        var images: [[PixelBuffer]] = []
        for server in [clean, faulty] {
            let source = try MapTilesWorld.source(server, client: MapTilesWorld.client(limit: limit, timeout: 2))
            let found = try await source.nearest(to: points, radius: 20)
            var row: [PixelBuffer] = []
            for m in found { row.append(try await source.image(for: try #require(m), resolution: .zoom(3)).pixels) }
            images.append(row)
        }
        #expect(images[0] == images[1])
        let stats = try await MapTilesWorld.stats(faulty)
        #expect(stats.faults >= 8) // ≈ 20% of 64 requests, each failing once or twice
        #expect(stats.maxInFlight <= limit)
        #expect(stats.tiles == 60) // 28 + 32 tiles answered once each; faulted attempts come on top
        #expect(stats.total >= 60 + stats.faults)
    }

    /// Tile bodies with whole JPEG markers around broken data (4 % of the tiles, once or three times each) are
    /// downloaded again like truncated ones: the same panoramas as from a clean server; a tile that never decodes
    /// fails its panorama with an error naming the tile.
    @Test func corruptTileBodiesAreFetchedAgain() async throws {
        let clean = try MapTilesWorld.server()
        let corrupt = try MapTilesWorld.server(corrupt: 0.04)
        let points = [MapTilesWorld.newPosition, MapTilesWorld.oldPosition]
        var images: [[PixelBuffer]] = []
        for server in [clean, corrupt] {
            let source = try MapTilesWorld.source(server)
            let found = try await source.nearest(to: points, radius: 20)
            var row: [PixelBuffer] = []
            for m in found { row.append(try await source.image(for: try #require(m), resolution: .zoom(3)).pixels) }
            images.append(row)
        }
        #expect(images[0] == images[1])
        let stats = try await MapTilesWorld.stats(corrupt)
        let broken = stats.byKind["corrupt_tiles"] ?? 0
        #expect(broken >= 1)
        #expect(stats.tiles == 60) // each tile answered whole once, after its broken answer(s)

        let hopeless = try MapTilesWorld.server(corrupt: 0.04, corruptAttempts: 99)
        let source = try MapTilesWorld.source(hopeless)
        let found = try #require(try await source.nearest(to: points, radius: 20).first ?? nil)
        let error = try await #require(throws: LapseError.self) {
            try await source.image(for: found, resolution: .zoom(3))
        }
        #expect(error.code == .invalidInput)
        #expect(error.description.contains("the tile does not decode after 3 downloads"), "\(error)")
        #expect((try await MapTilesWorld.stats(hopeless).byKind["corrupt_tiles"] ?? 0) % 3 == 0)
    }

    @Test func secondRunComesFromTheCacheAndACorruptEntryIsRefetched() async throws {
        let server = try MapTilesWorld.server()
        let dir = TestData.scratchDirectory("pano-cache")
        defer { try? FileManager.default.removeItem(at: dir) }
        let cache = try DiskCache(directory: dir)
        let first = try MapTilesWorld.source(server, cache: cache)
        let m = try await first.metadata(id: MapTilesWorld.oldFamily)
        let a = try await first.image(for: m, resolution: .zoom(2))
        #expect(a.tilesDownloaded == 8 && a.tilesFromCache == 0)
        let afterFirst = try await MapTilesWorld.stats(server)
        #expect(afterFirst.tiles == 8)

        let second = try MapTilesWorld.source(server, cache: cache)
        let m2 = try await second.metadata(id: MapTilesWorld.oldFamily)
        let b = try await second.image(for: m2, resolution: .zoom(2))
        #expect(b.tilesDownloaded == 0 && b.tilesFromCache == 8)
        #expect(b.pixels == a.pixels)
        let afterSecond = try await MapTilesWorld.stats(server)
        #expect(afterSecond.tiles == 8) // no tile requests
        #expect(afterSecond.byKind["metadata"] == 1) // metadata cached too

        // Cut one cached tile short (as an interrupted write by another tool would): it is fetched again.
        let tileFile = cache.fileURL(for: CacheKey("google", MapTilesWorld.oldFamily, "z2", "3_1.jpg"))
        let bytes = try Data(contentsOf: tileFile)
        try bytes.prefix(bytes.count / 2).write(to: tileFile)
        let c = try await second.image(for: m2, resolution: .zoom(2))
        #expect(c.tilesDownloaded == 1 && c.tilesFromCache == 7)
        #expect(c.pixels == a.pixels)
        #expect(try await MapTilesWorld.stats(server).tiles == 9)
        // Cache paths never contain the key.
        let paths = FileManager.default.subpaths(atPath: dir.path) ?? []
        #expect(!paths.isEmpty && !paths.contains { $0.contains(MapTilesWorld.key) })
    }

    @Test func rerunAfterAFailedRunFetchesOnlyWhatIsMissing() async throws {
        let faulty = try MapTilesWorld.server(faults: 0.3)
        let dir = TestData.scratchDirectory("pano-cache")
        defer { try? FileManager.default.removeItem(at: dir) }
        let cache = try DiskCache(directory: dir)
        // One attempt only, so the first fault ends the run (as an interruption would) with part of the tiles cached.
        var once = HTTPClient.Configuration()
        once.maxAttempts = 1
        once.requestTimeout = 2
        let broken = try MapTilesWorld.source(faulty, client: HTTPClient(configuration: once), cache: cache)
        let m = try await MapTilesWorld.source(faulty, cache: cache).metadata(id: MapTilesWorld.newFamily)
        func cached() -> Int {
            (FileManager.default.subpaths(atPath: dir.path) ?? []).filter { $0.hasSuffix(".jpg") }.count
        }
        // The first fault can come before any tile is in (the requests run at once, and which answers first is
        // the machine's timing): then another broken run, which the faulted requests' next attempts take further.
        for _ in 0..<4 where cached() == 0 {
            await #expect(throws: LapseError.self) { _ = try await broken.image(for: m, resolution: .zoom(3)) }
        }
        let cachedTiles = cached()
        #expect(cachedTiles > 0 && cachedTiles < 32)
        let clean = try MapTilesWorld.server()
        let rerun = try await MapTilesWorld.source(clean, cache: cache).image(for: m, resolution: .zoom(3))
        #expect(rerun.tilesFromCache == cachedTiles && rerun.tilesDownloaded == 32 - cachedTiles)
        #expect(try await MapTilesWorld.stats(clean).tiles == 32 - cachedTiles)
        let reference = try Self.reference(MapTilesWorld.newSource, width: 4096, height: 2048)
        #expect(ImageMetrics.psnr(rerun.pixels, reference) >= 40)
    }

    /// A clock tests move forward.
    final class TestClock: Sendable {
        private let offset = Mutex<Double>(0)
        func advance(_ seconds: Double) { offset.withLock { $0 += seconds } }
        var now: @Sendable () -> Date { { Date().addingTimeInterval(self.offset.withLock { $0 }) } }
    }

    /// `Cache-Control: private, max-age=600` and an ETag: within the max-age a second run reads the cache (no
    /// request); after it, every entry is revalidated with If-None-Match and the 304s reuse the bytes.
    @Test func cacheFollowsCacheControlAndRevalidates() async throws {
        let server = try MapTilesWorld.server(cacheControl: "private, max-age=600")
        let dir = TestData.scratchDirectory("pano-cache")
        defer { try? FileManager.default.removeItem(at: dir) }
        let clock = TestClock()
        func run() async throws -> PanoramaImage {
            let source = try GoogleStreetViewSource(
                apiKey: MapTilesWorld.key, baseURL: URL(string: server.baseURL)!,
                client: MapTilesWorld.client(),
                httpCache: HTTPCache(cache: try DiskCache(directory: dir), now: clock.now))
            return try await source.image(
                for: try await source.metadata(id: MapTilesWorld.newFamily), resolution: .zoom(1))
        }
        let first = try await run()
        #expect(first.tilesDownloaded == 2 && first.tilesFromCache == 0)
        clock.advance(300)
        let second = try await run()
        #expect(second.tilesDownloaded == 0 && second.tilesFromCache == 2 && second.pixels == first.pixels)
        var stats = try await MapTilesWorld.stats(server)
        #expect(stats.tiles == 2 && stats.byKind["metadata"] == 1 && stats.byKind["not_modified"] == nil)
        clock.advance(400) // 700 s after the first run: stale
        let third = try await run()
        #expect(third.tilesDownloaded == 0 && third.tilesFromCache == 2 && third.pixels == first.pixels)
        stats = try await MapTilesWorld.stats(server)
        #expect(stats.tiles == 2 && stats.byKind["metadata"] == 1 && stats.byKind["not_modified"] == 3)
        // Revalidated entries are fresh again for another max-age.
        clock.advance(300)
        _ = try await run()
        #expect(try await MapTilesWorld.stats(server).byKind["not_modified"] == 3)
    }

    /// Answers with no lifetime (no `Cache-Control`): kept only for the job. A rerun after a crash resumes from what
    /// the first run kept; once the job has finished it is gone and the next job downloads again. (`no-store`: never
    /// on disk, `HTTPCacheDirectiveTests`.)
    @Test func contentWithoutALifetimeLivesOnlyForTheJob() async throws {
        let server = try MapTilesWorld.server(cacheControl: "")
        let dir = TestData.scratchDirectory("pano-cache")
        defer { try? FileManager.default.removeItem(at: dir) }
        func source() throws -> GoogleStreetViewSource {
            try GoogleStreetViewSource(
                apiKey: MapTilesWorld.key, baseURL: URL(string: server.baseURL)!,
                client: MapTilesWorld.client(), cache: try DiskCache(directory: dir))
        }
        let crashed = try source()
        let first = try await crashed.image(
            for: try await crashed.metadata(id: MapTilesWorld.newFamily), resolution: .zoom(1))
        #expect(first.tilesDownloaded == 2)
        let files = {
            (FileManager.default.subpaths(atPath: dir.path) ?? []).filter {
                $0.hasSuffix(".jpg") || $0.hasSuffix("metadata.json")
            }
        }
        #expect(files().count == 3 && files().allSatisfy { $0.hasPrefix("transient/") }, "\(files())")
        // The rerun (the first never finished): from what it kept.
        let rerun = try source()
        let second = try await rerun.image(
            for: try await rerun.metadata(id: MapTilesWorld.newFamily), resolution: .zoom(1))
        #expect(second.tilesFromCache == 2 && second.tilesDownloaded == 0 && second.pixels == first.pixels)
        #expect(try await MapTilesWorld.stats(server).tiles == 2)
        rerun.jobFinished()
        // Nothing left: neither the bytes nor their records.
        let regular = {
            (FileManager.default.subpaths(atPath: dir.path) ?? []).filter { path in
                guard !path.hasPrefix(".locks") else { return false } // entry locks: empty, hold no answer
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(
                    atPath: dir.appendingPathComponent(path).path, isDirectory: &isDirectory) && !isDirectory.boolValue
            }
        }
        #expect(regular().isEmpty, "\(regular())")
        let next = try source()
        let third = try await next.image(
            for: try await next.metadata(id: MapTilesWorld.newFamily), resolution: .zoom(1))
        #expect(third.tilesDownloaded == 2)
        let stats = try await MapTilesWorld.stats(server)
        #expect(stats.tiles == 4 && stats.byKind["metadata"] == 2)
        // A killed run's leftovers (the job never finished) are removed by the next run once an hour old.
        #expect(!regular().isEmpty)
        let old = Date().addingTimeInterval(-2 * HTTPCache.transientLifetime)
        for path in regular() {
            try FileManager.default.setAttributes(
                [.modificationDate: old], ofItemAtPath: dir.appendingPathComponent(path).path)
        }
        _ = HTTPCache(cache: try DiskCache(directory: dir))
        #expect(regular().isEmpty, "\(regular())")
    }

    @Test func anExpiredSessionIsRenewedOnce() async throws {
        // Each session token works for 6 requests: the metadata and 5 of the 8 zoom-2 tiles.
        let server = try MapTilesWorld.server(sessionRequests: 6)
        let dir = TestData.scratchDirectory("pano-cache")
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = try MapTilesWorld.source(
            server, client: MapTilesWorld.client(limit: 1), cache: try DiskCache(directory: dir))
        let m = try await source.metadata(id: MapTilesWorld.oldFamily)
        let image = try await source.image(for: m, resolution: .zoom(2))
        #expect(image.pixels.width == 1664)
        let stats = try await MapTilesWorld.stats(server)
        #expect(stats.byKind["createSession"] == 2)
        #expect(stats.tiles == 8)
        let reference = try Self.reference(MapTilesWorld.oldSource, width: 1664, height: 832)
        #expect(ImageMetrics.psnr(image.pixels, reference) >= 40)
    }

    /// A session that expires during the lookups (panoIds, metadata) is renewed too, once per request.
    @Test func anExpiredSessionIsRenewedDuringLookups() async throws {
        let server = try MapTilesWorld.server(sessionRequests: 2)
        let source = try MapTilesWorld.source(server, client: MapTilesWorld.client(limit: 1))
        let found = try await source.nearest(
            to: [MapTilesWorld.newPosition, MapTilesWorld.oldPosition, MapTilesWorld.darkPosition],
            radius: 20)
        #expect(found.map { $0?.id } == [MapTilesWorld.newFamily, MapTilesWorld.oldFamily, MapTilesWorld.dark])
        let stats = try await MapTilesWorld.stats(server)
        #expect((stats.byKind["createSession"] ?? 0) >= 2)
        #expect(stats.byKind["panoIds"] == 1)
    }

    @Test func badKeyGivesRequestDeniedWithoutTheKey() async throws {
        let server = try MapTilesWorld.server()
        let badKey = "AIzaSyWRONG-key-9876543210"
        let source = try MapTilesWorld.source(server, key: badKey)
        await #expect {
            _ = try await source.nearest(to: [MapTilesWorld.newPosition], radius: 50)
        } throws: { error in
            let e = error as? LapseError
            let text = "\(error)"
            return e?.code == .denied && text.contains("the API key was refused") && text.contains("API key not valid")
                && !text.contains(badKey)
        }
    }

    @Test func emptyKeyIsAUsageError() {
        #expect(throws: LapseError.usage("the Google source needs an API key in GOOGLE_MAPS_API_KEY")) {
            _ = try GoogleStreetViewSource(apiKey: "  ", baseURL: URL(string: "http://127.0.0.1:1")!)
        }
    }

    @Test func routeWithoutCoverageSaysSo() async throws {
        let server = try MapTilesWorld.server()
        let export = PanoramaExport(
            source: try MapTilesWorld.source(server),
            outputDirectory: URL(fileURLWithPath: TestData.scratchDirectory("pano-out").path))
        let far = routePoints(from: Coordinate(uncheckedLatitude: 48.1, longitude: 11.5), count: 5, spacing: 20)
        await #expect {
            _ = try await export.run(points: far)
        } throws: { error in
            let e = error as? LapseError
            return e?.code == .notFound && e!.reason.contains("no coverage") && e!.reason.contains("5 route points")
        }
    }

    @Test func exportWritesImagesManifestAndCoverage() async throws {
        let server = try MapTilesWorld.server()
        let out = TestData.scratchDirectory("pano-out")
        defer { try? FileManager.default.removeItem(at: out) }
        var export = PanoramaExport(source: try MapTilesWorld.source(server), outputDirectory: out)
        export.resolution = .zoom(1)
        export.radius = 20
        // 10 m apart north from the first pano: 0, 10 → new; 40, 50, 60 → old; 90 … 110 → dark; 140, 150 → none.
        let points = routePoints(from: MapTilesWorld.newPosition, count: 16, spacing: 10)
        let result = try await export.run(points: points)
        let ids = result.matches.map { $0.panorama?.id }
        #expect(ids[0] == MapTilesWorld.newFamily && ids[1] == MapTilesWorld.newFamily)
        #expect(ids[5] == MapTilesWorld.oldFamily && ids[11] == MapTilesWorld.dark && ids[15] == nil)
        let c = result.coverage
        #expect(c.points == 16 && c.uniquePanoramas == 3)
        #expect(c.withImagery + c.withoutImagery == 16 && c.withoutImagery > 0)
        #expect(c.consecutiveDuplicates == c.withImagery - 3)
        #expect(
            result.written.map(\.file) == [
                "0001_CAoSNewFamily_pano-1.jpg", "0002_CAoSOldFamily_pano-2.jpg",
                "0003_CAoSDark_pano-3.jpg"
            ])
        #expect(result.written.allSatisfy { $0.width == ($0.panorama.width == 16384 ? 1024 : 832) })
        let manifest =
            try JSONSerialization.jsonObject(with: Data(contentsOf: result.manifest))
            as? [String: Any]
        let mpoints = try #require(manifest?["points"] as? [[String: Any]])
        #expect(mpoints.count == 16)
        #expect(mpoints[5]["panoId"] as? String == MapTilesWorld.oldFamily)
        #expect((mpoints[5]["distance"] as? Double).map { abs($0 - 5.6) < 1 } == true)
        #expect(mpoints[5]["panoHeading"] as? Double == 200)
        #expect(mpoints[5]["date"] as? String == "2019-08")
        let decoded = try DecodedImage(
            url: out.appendingPathComponent("0002_CAoSOldFamily_pano-2.jpg"))
        #expect(decoded.displayWidth == 832 && decoded.displayHeight == 416)
        // Without --overwrite a second run refuses to replace the manifest.
        await #expect(throws: LapseError.self) { _ = try await export.run(points: points) }
    }
}
