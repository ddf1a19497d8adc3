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

/// The Panoramax stand-in (Tests/Fixtures/panoramax_standin.py) and the world it serves.
enum PanoramaxWorld {
    static func id(_ n: Int) -> String { "6b1c7e52-0f1a-4c55-9a59-1a2b3c4d5e0\(n)" }
    static let first = Coordinate(uncheckedLatitude: 45.76000, longitude: 4.83000)
    static let corner = Coordinate(uncheckedLatitude: 45.76040, longitude: 4.83000)
    /// The stand-in's flat-earth step (so positions here are exactly the stand-in's).
    static func offset(_ c: Coordinate, north: Double = 0, east: Double = 0) -> Coordinate {
        Coordinate(
            uncheckedLatitude: c.latitude + north / 111_320,
            longitude: c.longitude + east / (111_320 * cos(c.latitude * .pi / 180)))
    }
    static let cropped = offset(corner, east: 45) // picture 4
    static let unplaceable = offset(corner, east: 90) // picture 5
    static let noAzimuth = offset(corner, east: 140) // picture 7
    static let tilted = offset(corner, east: 185) // picture 8
    static let crowdSpot = Coordinate(uncheckedLatitude: 45.77000, longitude: 4.83000)
    static let crowd360 = "6b1c7e52-0f1a-4c55-9a59-200000000001"
    static let runsStart = Coordinate(uncheckedLatitude: 45.78000, longitude: 4.83000)
    static func run(_ south: Bool, _ i: Int) -> String { "6b1c7e52-0f1a-4c55-9a59-300\(south ? 1 : 0)0000000\(i)" }

    /// The stand-in's folder under the temporary directory (the pictures it makes, made once).
    static let workdir = "lapse-panoramax-standin-v2"

    static func server(faults: Double = 0, nextLinks: Bool = true) throws -> LocalServer {
        try LocalServer.panoramax(
            workdir: workdir,
            arguments: ["--faults", String(faults), "--retry-after", "1"] + (nextLinks ? [] : ["--no-next-links"]))
    }

    static func source(
        _ server: LocalServer, cache: DiskCache? = nil, timeout: Double = 20,
        warning: WarningHandler? = nil
    ) -> PanoramaxSource {
        PanoramaxSource(
            baseURL: URL(string: server.baseURL + "/api")!, client: MapTilesWorld.client(timeout: timeout),
            cache: cache, warning: warning)
    }

    struct Log: Decodable {
        /// The pictures served, `<id>/<asset>` in order.
        var served: [String]
        /// The query of each search request.
        var searches: [[String: String]]
    }

    static func log(_ server: LocalServer) async throws -> Log {
        try await HTTPClient.shared.getJSON(URL(string: server.baseURL + "/_log")!, as: Log.self)
    }
}

/// Messages collected from a handler called on any thread.
final class Collected: Sendable {
    private let list = Mutex<[String]>([])
    func add(_ message: String) { list.withLock { $0.append(message) } }
    var items: [String] { list.withLock { $0 } }
}

/// Rows `range` of `p`.
func rows(_ p: PixelBuffer, _ range: Range<Int>) -> PixelBuffer {
    PixelBuffer(
        width: p.width, height: range.count,
        bytes: Array(p.bytes[(range.lowerBound * p.width * 4)..<(range.upperBound * p.width * 4)]))
}

/// Whether every pixel of rows `range` of `p` is opaque black.
func allBlack(_ p: PixelBuffer, _ range: Range<Int>) -> Bool {
    rows(p, range).bytes.enumerated().allSatisfy { $0.offset % 4 == 3 ? $0.element == 255 : $0.element == 0 }
}

@Suite struct PanoramaxSourceTests {
    typealias World = PanoramaxWorld

    /// The nearest 360° picture of each point, flat ones never; the search asks for a ring around the point with the
    /// smallest field-of-view tolerance (flat pictures out); the `hd` asset for the full size, equal to the picture.
    @Test func findsNearest360PicturesOnlyWithAttribution() async throws {
        let server = try World.server()
        let source = World.source(server)
        let points = [
            World.first, World.first.destination(bearing: 0, distance: 40),
            World.first.destination(bearing: 180, distance: 500)
        ]
        let found = try await source.nearest(to: points, radius: 15)
        // The flat picture 1 m away is ignored for the 360° one on the spot.
        #expect(found[0]?.id == World.id(1))
        #expect(found[1]?.id == World.id(2))
        #expect(found[2] == nil)
        let m = try #require(found[0])
        #expect(
            m.heading == 123.5 && m.headingSource == "view:azimuth" && m.license == "CC-BY-SA-4.0"
                && m.author == "Alice Example")
        #expect(m.date == "2020-05-09T10:11:12+00:00" && m.width == 4096 && m.height == 2048)
        #expect(m.tilt == 0 && m.roll == 0 && m.crop == nil && m.collection == "seq-a")
        let log = try await World.log(server)
        #expect(log.searches.count == 3)
        let q = try #require(log.searches.first { $0["place_position"] == "4.8300000,45.7600000" })
        #expect(
            q == [
                "place_position": "4.8300000,45.7600000", "place_distance": "0-15", "place_fov_tolerance": "2",
                "limit": "100"
            ])

        let image = try await source.image(for: m, resolution: .full)
        #expect(image.pixels.width == 4096 && image.pixels.height == 2048)
        let reference = try ffmpegRaw(
            TestData.path("pano360/trekview_360/GSAG2002.JPG"),
            filters: "scale=4096:2048:flags=bicubic,format=yuv444p", width: 4096, height: 2048)
        #expect(ImageMetrics.psnr(image.pixels, reference) >= 40)
        #expect(try await World.log(server).served == [World.id(1) + "/hd"])
    }

    @Test func faultsAreRetriedAndTheImageIsCached() async throws {
        let server = try World.server(faults: 0.5)
        let dir = TestData.scratchDirectory("pmx-cache")
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = World.source(server, cache: try DiskCache(directory: dir), timeout: 2)
        let points = (0..<12).map { World.first.destination(bearing: 0, distance: Double($0) * 4) }
        let found = try await source.nearest(to: points, radius: 25)
        #expect(found.compactMap { $0?.id }.count == 12)
        let a = try await source.image(for: try #require(found[0]), resolution: .atLeast(width: 1024))
        let b = try await source.image(for: try #require(found[0]), resolution: .atLeast(width: 1024))
        #expect(a.pixels == b.pixels && a.pixels.width == 1024)
        #expect(a.tilesDownloaded == 1 && b.tilesFromCache == 1)
        let stats = try await MapTilesWorld.stats(server)
        #expect(stats.byKind["images"] == 1 && stats.faults > 0)
        #expect(try await World.log(server).served == [World.id(1) + "/sd"])
    }

    /// A cropped 360° picture (2048 × 736: the rows 160…895 of its 2048 × 1024 frame, `visible_area` [0, 160, 0, 128])
    /// comes placed in its full frame: its rows where they belong, equal to the picture's, black above and below —
    /// from the `hd` asset at full size, from the `sd` one at half size, and for motion analysis.
    @Test func croppedPictureIsPlacedInItsFullFrame() async throws {
        let server = try World.server()
        let source = World.source(server)
        let m = try #require(try await source.nearest(to: [World.cropped], radius: 5)[0])
        #expect(m.id == World.id(4))
        #expect(
            m.crop == (try PanoramaCrop(fullWidth: 2048, fullHeight: 1024, left: 0, top: 160, width: 2048, height: 736))
        )
        #expect(m.width == 2048 && m.height == 1024)
        let croppedRows = "scale=2048:1024:flags=bicubic,format=yuv444p,crop=2048:736:0:160"
        let gsag = TestData.path("pano360/trekview_360/GSAG2002.JPG")

        let full = try await source.image(for: m, resolution: .full)
        #expect(full.pixels.width == 2048 && full.pixels.height == 1024)
        #expect(full.metadata.width == 2048 && full.metadata.height == 1024)
        let reference = try ffmpegRaw(gsag, filters: croppedRows, width: 2048, height: 736)
        let psnr = ImageMetrics.psnr(rows(full.pixels, 160..<896), reference)
        #expect(psnr >= 40, "\(psnr) dB")
        #expect(allBlack(full.pixels, 0..<160) && allBlack(full.pixels, 896..<1024))
        // One row off is clearly worse: the placement is exact.
        #expect(ImageMetrics.psnr(rows(full.pixels, 161..<897), reference) < psnr - 10)

        let half = try await source.image(for: m, resolution: .atLeast(width: 1024))
        #expect(half.pixels.width == 1024 && half.pixels.height == 512)
        let halfReference = try ffmpegRaw(
            gsag, filters: croppedRows + ",scale=1024:368:flags=area", width: 1024, height: 368)
        #expect(ImageMetrics.psnr(rows(half.pixels, 80..<448), halfReference) >= 35)
        #expect(allBlack(half.pixels, 0..<80) && allBlack(half.pixels, 448..<512))

        let small = try await source.analysisImage(for: m, width: 512)
        #expect(small.pixels.width == 512 && small.pixels.height == 256)
        #expect(allBlack(small.pixels, 0..<40) && allBlack(small.pixels, 224..<256) && !allBlack(small.pixels, 40..<41))
        #expect(try await World.log(server).served == [World.id(4) + "/hd", World.id(4) + "/sd", World.id(4) + "/sd"])
    }

    /// A 360° picture of 2000 × 700 without `visible_area` cannot be placed: skipped with one warning, however often
    /// it is met, and the next candidate (6 m farther) taken.
    @Test func unplaceable360IsSkippedWithAWarningAndTheNextCandidateUsed() async throws {
        let server = try World.server()
        let warnings = Collected()
        let source = World.source(server, warning: { warnings.add($0) })
        let found = try await source.nearest(
            to: [World.unplaceable, World.offset(World.unplaceable, east: 1)], radius: 10)
        #expect(found.map { $0?.id } == [World.id(6), World.id(6)])
        #expect(try await source.nearest(to: [World.unplaceable], radius: 10)[0]?.id == World.id(6))
        #expect(
            warnings.items == [
                """
                Panoramax picture \(World.id(5)): a 360° picture of 2000×700 is not 2:1 and has no visible_area \
                to place it by; skipped
                """
            ])
    }

    /// A picture without `view:azimuth` has an unknown heading (source `none`, a placeholder 0, not north); one with
    /// `pers:pitch` 4.5 and `pers:roll` −2 has that tilt and roll.
    @Test func headingPitchAndRollAsTheItemSays() async throws {
        let server = try World.server()
        let found = try await World.source(server).nearest(to: [World.noAzimuth, World.tilted], radius: 5)
        let none = try #require(found[0])
        let tilted = try #require(found[1])
        #expect(none.id == World.id(7) && none.headingSource == "none" && none.heading == 0)
        #expect(none.tilt == 0 && none.roll == 0 && none.collection == "seq-c")
        #expect(tilted.id == World.id(8) && tilted.headingSource == "view:azimuth" && tilted.heading == 272)
        #expect(tilted.tilt == 4.5 && tilted.roll == -2)
    }

    /// 120 flat pictures lie nearer the spot than its only 360° picture (9.5 m east): the first page (100) holds
    /// flat ones only, and the second brings the 360° one — through the answer's `next` link, or, from a server
    /// without paging links (as GeoVisio's search), the same search from 4 m out (the nearest a later picture can
    /// be). With one page allowed, nothing.
    @Test(arguments: [true, false])
    func pagingFindsThe360PictureBehindAPageOfFlatOnes(nextLinks: Bool) async throws {
        let server = try World.server(nextLinks: nextLinks)
        var source = World.source(server)
        let found = try #require(try await source.nearest(to: [World.crowdSpot], radius: 15)[0])
        #expect(found.id == World.crowd360)
        #expect(abs(found.coordinate.distance(to: World.crowdSpot) - 9.5) < 0.05)
        let searches = try await World.log(server).searches
        #expect(searches.count == 2)
        let common = ["place_position": "4.8300000,45.7700000", "place_fov_tolerance": "2", "limit": "100"]
        #expect(searches.first == common.merging(["place_distance": "0-15"]) { a, _ in a })
        #expect(
            searches.last
                == common.merging(nextLinks ? ["place_distance": "0-15", "token": "100"] : ["place_distance": "4-15"]) {
                    a, _ in a
                })

        source.maxPages = 1
        #expect(try await source.nearest(to: [World.crowdSpot], radius: 15) == [nil])
        #expect(try await World.log(server).searches.count == 3)
    }

    /// The `sd` asset when the panorama wanted is at most 2048 pixels wide, else `hd` (a 4096-wide picture), each
    /// cached under its own key.
    @Test func sdOrHdByTheWidthNeeded() async throws {
        let server = try World.server()
        let dir = TestData.scratchDirectory("pmx-assets")
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = World.source(server, cache: try DiskCache(directory: dir))
        let m = try #require(try await source.nearest(to: [World.first], radius: 5)[0])
        let sizes: [(PanoramaResolution, Int, Int)] = [
            (.atLeast(width: 2048), 2048, 0), (.atLeast(width: 3000), 3000, 0),
            (.zoom(2), 2048, 1), (.zoom(3), 4096, 1), (.full, 4096, 1)
        ]
        for (resolution, width, fromCache) in sizes {
            let image = try await source.image(for: m, resolution: resolution)
            #expect(image.pixels.width == width && image.pixels.height == width / 2, "\(resolution)")
            #expect(image.tilesFromCache == fromCache, "\(resolution)")
        }
        #expect(try await World.log(server).served == [World.id(1) + "/sd", World.id(1) + "/hd"])
        #expect(PanoramaxSource.asset(for: m, resolution: .atLeast(width: 2048)) == .sd)
        #expect(PanoramaxSource.asset(for: m, resolution: .atLeast(width: 2049)) == .hd)
    }

    /// Two capture runs along both sides of a street, run S's pictures 4 m further along than run N's: points every
    /// 5 m along the middle alternate between the runs when the nearest is taken, and stay with run N when a picture
    /// of the previous point's run may be up to 3 m farther.
    @Test func consecutivePointsPreferThePreviousCaptureRun() async throws {
        let server = try World.server()
        var source = World.source(server)
        let points = (0..<10).map { World.offset(World.runsStart, east: 1 + 5 * Double($0)) }
        let sameRun = try await source.nearest(to: points, radius: 8)
        #expect(sameRun.map { $0?.id } == [0, 1, 1, 2, 2, 3, 3, 4, 4, 5].map { World.run(false, $0) })
        source.sameRunSlack = 0
        let nearest = try await source.nearest(to: points, radius: 8)
        #expect(
            nearest.map { $0?.id }
                == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4].enumerated().map { World.run($0.offset % 2 == 1, $0.element) })
    }
}

@Suite struct PanoramaCropTests {
    @Test func fromVisibleAreaAndPlaced() throws {
        // The web viewer's own test case: a 15872 × 7936 frame with 2538 rows cut above and 2792 below.
        let crop = try PanoramaCrop(sensorArrayDimensions: [15872, 7936], visibleArea: [0, 2538, 0, 2792])
        #expect(crop.width == 15872 && crop.height == 2606 && crop.top == 2538 && !crop.isWhole)
        #expect(crop.rectangle(inFrameOfWidth: 2048) == (0, 327, 2048, 337))
        #expect(try PanoramaCrop(sensorArrayDimensions: [4000, 2000], visibleArea: [0, 0, 0, 0]).isWhole)
        #expect(throws: LapseError.self) {
            try PanoramaCrop(sensorArrayDimensions: [4000, 1500], visibleArea: [0, 100, 0, 100])
        }
        #expect(throws: LapseError.self) {
            try PanoramaCrop(sensorArrayDimensions: [4000, 2000], visibleArea: [0, 1500, 0, 600])
        }
        // A 4 × 1 picture placed in rows 1 of an 8 × 4 frame.
        let small = try PanoramaCrop(fullWidth: 8, fullHeight: 4, left: 2, top: 1, width: 4, height: 1)
        let picture = PixelBuffer(width: 4, height: 1, fill: RGBA(200, 100, 50))
        let frame = small.frame(width: 8, placing: picture)
        #expect(frame.width == 8 && frame.height == 4)
        #expect(
            (0..<8).map { frame[$0, 1] } == [RGBA(0, 0, 0), RGBA(0, 0, 0)]
                + Array(repeating: RGBA(200, 100, 50), count: 4) + [RGBA(0, 0, 0), RGBA(0, 0, 0)])
        #expect(allBlack(frame, 0..<1) && allBlack(frame, 2..<4))
    }
}
