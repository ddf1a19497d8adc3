// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseNet
import TestSupport
import Testing

@testable import LapsePanorama

/// The HTTP cache against the Map Tiles stand-in, directive by directive, as Google's Map Tiles policies ask
/// (honour `max-age`, `stale-while-revalidate`, `must-revalidate`, `private`, `no-store` and the ETag; RFC 9111 and
/// RFC 5861). Each job reads one panorama's metadata and its two zoom-1 tiles: three answers.
@Suite struct HTTPCacheDirectiveTests {
    typealias TestClock = GoogleStreetViewTests.TestClock

    /// A job: a new source and HTTP cache on `dir`, as a new run of `lapse` would make.
    struct Job {
        let source: GoogleStreetViewSource
        let cache: HTTPCache

        init(_ server: LocalServer, dir: URL, shared: Bool = false, clock: TestClock = TestClock()) throws {
            cache = HTTPCache(cache: try DiskCache(directory: dir, shared: shared), now: clock.now)
            source = try GoogleStreetViewSource(
                apiKey: MapTilesWorld.key, baseURL: URL(string: server.baseURL)!, client: MapTilesWorld.client(),
                httpCache: cache)
        }

        func image() async throws -> PanoramaImage {
            try await source.image(for: try await source.metadata(id: MapTilesWorld.newFamily), resolution: .zoom(1))
        }
    }

    /// The regular files in the cache folder (its `.partial` folder is empty between writes) but its entry locks
    /// (`.locks/N.lock`: empty files, named by a number, that hold nothing of any answer).
    static func files(_ dir: URL) -> [String] {
        (FileManager.default.subpaths(atPath: dir.path) ?? []).filter { path in
            guard !path.hasPrefix(".locks") else { return false }
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(
                atPath: dir.appendingPathComponent(path).path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }.sorted()
    }

    /// `no-store`: nothing is ever written to disk, not even for the job; the job itself reuses the answers (held in
    /// memory), and a rerun after a crash downloads them again.
    @Test func noStoreLeavesNothingOnDisk() async throws {
        let server = try MapTilesWorld.server(cacheControl: "no-store")
        let dir = TestData.scratchDirectory("cache-no-store")
        defer { try? FileManager.default.removeItem(at: dir) }
        let job = try Job(server, dir: dir)
        let first = try await job.image()
        #expect(first.tilesDownloaded == 2)
        #expect(Self.files(dir).isEmpty, "\(Self.files(dir))")
        let again = try await job.image()
        #expect(again.tilesFromCache == 2 && again.pixels == first.pixels)
        var stats = try await MapTilesWorld.stats(server)
        #expect(stats.tiles == 2 && stats.byKind["metadata"] == 1)
        // The job crashed (never finished): its rerun finds nothing and downloads again.
        let rerun = try await Job(server, dir: dir).image()
        #expect(rerun.tilesDownloaded == 2 && rerun.pixels == first.pixels)
        stats = try await MapTilesWorld.stats(server)
        #expect(stats.tiles == 4 && stats.byKind["metadata"] == 2)
        job.source.jobFinished()
        #expect(Self.files(dir).isEmpty)
    }

    /// `private`: kept by the user's own cache, never written to one marked shared (`--shared-cache`), where it
    /// lives in memory for the job; a public answer is written to the shared cache as to any.
    @Test func privateIsNotWrittenToASharedCache() async throws {
        let server = try MapTilesWorld.server(cacheControl: "private, max-age=600")
        let shared = TestData.scratchDirectory("cache-shared")
        let own = TestData.scratchDirectory("cache-own")
        defer { for d in [shared, own] { try? FileManager.default.removeItem(at: d) } }
        let job = try Job(server, dir: shared, shared: true)
        _ = try await job.image()
        #expect(Self.files(shared).isEmpty, "\(Self.files(shared))")
        #expect(try await job.image().tilesFromCache == 2)
        #expect(try await MapTilesWorld.stats(server).tiles == 2)
        job.source.jobFinished()
        _ = try await Job(server, dir: own).image()
        #expect(Self.files(own).filter { !$0.hasSuffix(".http-cache.json") }.count == 3, "\(Self.files(own))")
        // A private entry a private use of the folder left is not served from it once it is shared.
        let reused = try await Job(server, dir: own, shared: true).image()
        #expect(reused.tilesDownloaded == 2)
        #expect(Self.files(own).isEmpty, "\(Self.files(own))")
        #expect(try await MapTilesWorld.stats(server).tiles == 6)

        let publicServer = try MapTilesWorld.server(cacheControl: "public, max-age=600")
        let publicDir = TestData.scratchDirectory("cache-shared-public")
        defer { try? FileManager.default.removeItem(at: publicDir) }
        _ = try await Job(publicServer, dir: publicDir, shared: true).image()
        #expect(Self.files(publicDir).filter { !$0.hasSuffix(".http-cache.json") }.count == 3)
        #expect(try await Job(publicServer, dir: publicDir, shared: true).image().tilesFromCache == 2)
        #expect(try await MapTilesWorld.stats(publicServer).tiles == 2)
    }

    /// `s-maxage` is the lifetime in a shared cache (`max-age` in the user's own).
    @Test func sharedMaxAgeRulesASharedCache() async throws {
        let server = try MapTilesWorld.server(cacheControl: "max-age=600, s-maxage=60")
        let shared = TestData.scratchDirectory("cache-s-maxage")
        let own = TestData.scratchDirectory("cache-maxage")
        defer { for d in [shared, own] { try? FileManager.default.removeItem(at: d) } }
        let clock = TestClock()
        _ = try await Job(server, dir: shared, shared: true, clock: clock).image()
        _ = try await Job(server, dir: own, clock: clock).image()
        clock.advance(100)
        #expect(try await Job(server, dir: own, clock: clock).image().tilesFromCache == 2)
        #expect(try await MapTilesWorld.stats(server).byKind["not_modified"] == nil)
        #expect(try await Job(server, dir: shared, shared: true, clock: clock).image().tilesFromCache == 2)
        #expect(try await MapTilesWorld.stats(server).byKind["not_modified"] == 3)
    }

    /// `stale-while-revalidate=300` after `max-age=600`: at 700 s the stale answers are used at once and revalidated
    /// in the background (three 304s, which make them fresh again); at 2100 s, past the window, they are revalidated
    /// before use.
    @Test func aStaleAnswerWithinStaleWhileRevalidateIsUsedAndRevalidated() async throws {
        let server = try MapTilesWorld.server(cacheControl: "max-age=600, stale-while-revalidate=300")
        let dir = TestData.scratchDirectory("cache-swr")
        defer { try? FileManager.default.removeItem(at: dir) }
        let clock = TestClock()
        let first = try await Job(server, dir: dir, clock: clock).image()
        clock.advance(700)
        let job = try Job(server, dir: dir, clock: clock)
        let second = try await job.image()
        #expect(second.tilesFromCache == 2 && second.tilesDownloaded == 0 && second.pixels == first.pixels)
        await job.cache.finishRevalidations()
        var stats = try await MapTilesWorld.stats(server)
        #expect(stats.tiles == 2 && stats.byKind["metadata"] == 1 && stats.byKind["not_modified"] == 3)
        clock.advance(500) // 1200 s: fresh since the revalidation at 700 s
        _ = try await Job(server, dir: dir, clock: clock).image()
        #expect(try await MapTilesWorld.stats(server).byKind["not_modified"] == 3)
        clock.advance(900) // 2100 s: past 700 + 600 + 300
        let late = try Job(server, dir: dir, clock: clock)
        let third = try await late.image()
        #expect(third.tilesFromCache == 2 && third.pixels == first.pixels)
        stats = try await MapTilesWorld.stats(server) // before any background work could be waited for
        #expect(stats.tiles == 2 && stats.byKind["not_modified"] == 6)
    }

    /// `must-revalidate` overrides `stale-while-revalidate`: a stale answer is revalidated (a conditional request,
    /// answered 304) before it is used; the 304 reuses the stored bytes.
    @Test func mustRevalidateForcesAConditionalRequest() async throws {
        let server = try MapTilesWorld.server(
            cacheControl: "max-age=600, stale-while-revalidate=300, must-revalidate")
        let dir = TestData.scratchDirectory("cache-must-revalidate")
        defer { try? FileManager.default.removeItem(at: dir) }
        let clock = TestClock()
        let first = try await Job(server, dir: dir, clock: clock).image()
        clock.advance(700)
        let second = try await Job(server, dir: dir, clock: clock).image()
        let stats = try await MapTilesWorld.stats(server)
        #expect(stats.tiles == 2 && stats.byKind["metadata"] == 1 && stats.byKind["not_modified"] == 3)
        #expect(second.tilesFromCache == 2 && second.pixels == first.pixels)
    }
}
