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

/// The Mapillary stand-in's world (``MapillaryStandIn``) as the source tests use it.
enum MapillaryWorld {
    static let token = MapillaryStandIn.token
    static func walk(_ n: Int) -> String { MapillaryStandIn.walk(n) }
    static func drive(_ n: Int) -> String { MapillaryStandIn.drive(n) }
    static let notTwoToOne = "6000000000000002"
    static let walkEXIF = MapillaryStandIn.walkEXIF
    /// The stand-in's flat-earth step.
    static func offset(_ lat: Double, _ lng: Double, north: Double = 0, east: Double = 0) -> Coordinate {
        Coordinate(
            uncheckedLatitude: lat + north / 111_320, longitude: lng + east / (111_320 * cos(lat * .pi / 180)))
    }
    /// Where SfM placed walk photo `n` (`computed_geometry`: 0.3 m north, 0.2 m west of its GPS).
    static func walkComputed(_ n: Int) -> Coordinate {
        let (lat, lng, _) = walkEXIF[n - 1]
        return offset(lat, lng, north: 0.3, east: -0.2)
    }
    static func server(_ arguments: [String] = []) throws -> LocalServer {
        try MapillaryStandIn.server(arguments)
    }

    static func source(
        _ server: LocalServer, token: String = token, cache: DiskCache? = nil, warning: WarningHandler? = nil
    ) throws -> MapillarySource {
        var c = HTTPClient.Configuration()
        c.requestTimeout = 20
        c.baseDelay = 0.1
        c.maxDelay = 0.5
        c.secrets = [token]
        return try MapillarySource(
            token: token, baseURL: URL(string: server.baseURL)!, client: HTTPClient(configuration: c), cache: cache,
            warning: warning)
    }

    struct Log: Decodable {
        struct Entry: Decodable {
            var time: Double
            var path: String
            var auth: Bool
            var queryToken: Bool
            enum CodingKeys: String, CodingKey {
                case time, path, auth
                case queryToken = "query_token"
            }
        }
        var log: [Entry]
    }

    static func log(_ server: LocalServer) async throws -> [Log.Entry] {
        try await HTTPClient.shared.getJSON(URL(string: server.baseURL + "/_log")!, as: Log.self).log
    }

    static func stats(_ server: LocalServer) async throws -> [String: Int] {
        struct Stats: Decodable {
            var byKind: [String: Int]
            enum CodingKeys: String, CodingKey { case byKind = "by_kind" }
        }
        return try await HTTPClient.shared.getJSON(URL(string: server.baseURL + "/_stats")!, as: Stats.self).byKind
    }

    /// The route: the walk photos' GPS positions.
    static var walkRoute: [Coordinate] {
        walkEXIF.map { Coordinate(uncheckedLatitude: $0.latitude, longitude: $0.longitude) }
    }
}

@Suite struct MapillarySourceTests {
    final class Collected: Sendable {
        private let list = Mutex<[String]>([])
        func add(_ message: String) { list.withLock { $0.append(message) } }
        var items: [String] { list.withLock { $0 } }
    }

    /// `computed_rotation` is OpenSfM's angle-axis world-to-camera rotation: a level camera facing north is a quarter
    /// turn about east, [π/2, 0, 0]; the others (made by the stand-in from heading, tilt and roll) come back as made.
    @Test func computedRotationGivesHeadingTiltAndRoll() throws {
        let cases: [(SIMD3<Double>, Double, Double, Double)] = [
            (SIMD3(.pi / 2, 0, 0), 0, 0, 0),
            // Level, facing east: the rows of R are right = south (0, −1, 0), down (0, 0, −1), forward = east
            // (1, 0, 0); by hand, a turn of 120° about (1, −1, 1)/√3.
            (SIMD3(1, -1, 1) * (2 * .pi / 3 / 3.squareRoot()), 90, 0, 0),
            (SIMD3(1.509995315634, 0.320959412429, -0.305023196369), 337, 2, -1),
            (SIMD3(0.515870953987, 2.148757166040, -2.011905440356), 200, -5, 7),
            (SIMD3(0.991932160702, -0.694558376316, 1.718076899998), 90, 30, -20)
        ]
        for (r, heading, tilt, roll) in cases {
            let pose = try #require(MapillarySource.pose(fromComputedRotation: r))
            #expect(abs(pose.heading - heading) < 1e-6, "\(r): \(pose)")
            #expect(abs(pose.tilt - tilt) < 1e-6 && abs(pose.roll - roll) < 1e-6, "\(r): \(pose)")
        }
        // Straight up: no heading.
        #expect(MapillarySource.pose(fromComputedRotation: SIMD3(0, 0, 0)) == nil)
    }

    /// Boxes along a 3 km route stay within the documented limits (under 0.01 square degrees) and hold every point
    /// with the radius around it.
    @Test func searchBoxesStayWithinTheDocumentedLimits() {
        let route = (0..<301).map { Coordinate(uncheckedLatitude: 59.9 + Double($0) * 0.0001, longitude: 10.7) }
        let boxes = MapillarySource.boxes(along: route, radius: 50, maxSide: 400)
        #expect(Set(boxes.flatMap(\.points)) == Set(route.indices) && boxes.flatMap(\.points).count == route.count)
        #expect(boxes.count >= 8 && boxes.count <= 12, "\(boxes.count)")
        for box in boxes {
            #expect((box.east - box.west) * (box.north - box.south) < 0.01)
            #expect((box.north - box.south) * 111_320 <= 400.001)
            for i in box.points {
                let c = route[i]
                #expect(box.contains(Coordinate(uncheckedLatitude: c.latitude + 50 / 111_320, longitude: c.longitude)))
                #expect(box.contains(Coordinate(uncheckedLatitude: c.latitude - 50 / 111_320, longitude: c.longitude)))
            }
        }
    }

    func candidate(_ id: String, _ sequence: String, _ distance: Double, at t: Double) -> MapillarySource.Candidate {
        .init(
            distance: distance,
            panorama: PanoramaMetadata(
                source: "mapillary", id: id, coordinate: MapillaryWorld.walkRoute[0], heading: 0, width: 2048,
                height: 1024, collection: sequence),
            capturedAt: t)
    }

    /// The nearest image, or one of the previous choice's sequence up to the slack farther; never one that goes back
    /// along that sequence once its direction is known (a GPS fix that lags puts an earlier image nearest).
    @Test func choiceKeepsToOneSequenceAndNeverGoesBack() {
        let lists: [[MapillarySource.Candidate]] = [
            [candidate("a1", "A", 1, at: 10), candidate("b1", "B", 2, at: 500)],
            // B nearer by 3 m: A's is kept (within 5 m).
            [candidate("b2", "B", 0.5, at: 501), candidate("a2", "A", 3.5, at: 20)],
            // A's earlier image a1 is nearest (the fix lags): not taken, a3 is.
            [candidate("a1", "A", 0.8, at: 10), candidate("a3", "A", 2.0, at: 30)],
            // Only A's earlier images and B: B.
            [candidate("a2", "A", 1.0, at: 20), candidate("b4", "B", 4, at: 503)],
            // B's own order from here: b5 after b4 sets it...
            [candidate("b5", "B", 0.3, at: 504), candidate("b3", "B", 1, at: 502)],
            // ...so b4, behind, is passed over for b6.
            [candidate("b4", "B", 0.2, at: 503), candidate("b6", "B", 1, at: 505)],
            []
        ]
        let chosen = MapillarySource.choose(lists, sameSequenceSlack: 5).map { $0?.id }
        #expect(chosen == ["a1", "a2", "a3", "b4", "b5", "b6", nil])
        // With no slack the nearest is taken, still never going back once a sequence's direction is known (B's
        // from b2 to b5: b4 is behind).
        #expect(
            MapillarySource.choose(lists, sameSequenceSlack: 0).map { $0?.id }
                == ["a1", "b2", "a1", "a2", "b5", "b6", nil])
        // Where the route turns back, the way is forgotten: a route out along A and back picks A's earlier images
        // on the way back; an image without a capture time is never "behind".
        let outAndBack: [[MapillarySource.Candidate]] = [
            [candidate("a1", "A", 0.5, at: 10)], [candidate("a2", "A", 0.5, at: 20)],
            [candidate("a1", "A", 0.5, at: 10), candidate("b1", "B", 3, at: 600)],
            [candidate("a0", "A", 0.5, at: 0)]
        ]
        #expect(
            MapillarySource.choose(outAndBack, bearings: [nil, 0, 180, 180], sameSequenceSlack: 5).map { $0?.id }
                == ["a1", "a2", "a1", "a0"])
        #expect(
            MapillarySource.choose(outAndBack, bearings: [nil, 0, 0, 0], sameSequenceSlack: 5).map { $0?.id }
                == ["a1", "a2", "b1", nil])
        var timeless = candidate("a9", "A", 0.5, at: 0)
        timeless.capturedAt = nil
        #expect(
            MapillarySource.choose(Array(outAndBack.prefix(2)) + [[timeless]], sameSequenceSlack: 5).map { $0?.id }
                == ["a1", "a2", "a9"])
    }

    /// Along the walk: every route point gets the walk photo taken there (the refined `computed_geometry`), in
    /// sequence order, posed by `computed_rotation` (heading 12° less than the camera's compass, 2° up, 1° of roll)
    /// or, where there is none, `computed_compass_angle`; the flat image is never chosen, the one that is not 2:1
    /// is skipped with one warning; the token goes in the `Authorization` header, never in a URL.
    @Test func lookupFollowsTheWalkWithRefinedPoses() async throws {
        let server = try MapillaryWorld.server()
        let warnings = Collected()
        let source = try MapillaryWorld.source(server, warning: { warnings.add($0) })
        let found = try await source.nearest(to: MapillaryWorld.walkRoute, radius: 4)
        #expect(found.map { $0?.id } == (1...5).map(MapillaryWorld.walk))
        for (n, p) in found.enumerated() {
            let pano = try #require(p)
            let exif = MapillaryWorld.walkEXIF[n]
            #expect(pano.coordinate.distance(to: MapillaryWorld.walkComputed(n + 1)) < 0.01, "\(pano.coordinate)")
            #expect(abs(angleDifference(from: exif.heading - 12, to: pano.heading)) < 1e-6, "\(n): \(pano.heading)")
            if n == 2 {
                #expect(pano.headingSource == "computed_compass_angle" && pano.tilt == 0 && pano.roll == 0)
            } else {
                #expect(pano.headingSource == "computed_rotation")
                #expect(abs(pano.tilt - 2) < 1e-6 && abs(pano.roll + 1) < 1e-6, "\(pano.tilt) \(pano.roll)")
            }
            #expect(pano.author == "ada_walks" && pano.license == "CC BY-SA 4.0" && pano.collection == "seq-walk")
            #expect(pano.width == 5760 && pano.height == 2880)
            #expect(pano.date == "2021-07-29T11:16:\(42 + 2 * n)Z", "\(pano.date ?? "no date")")
        }
        #expect(
            warnings.items == [
                "Mapillary image \(MapillaryWorld.notTwoToOne): a 360° image of 5760×2000 is not 2:1 (cropped); skipped"
            ])
        let log = try await MapillaryWorld.log(server)
        let api = log.filter { !$0.path.hasPrefix("/_") }
        #expect(!api.isEmpty && api.allSatisfy { $0.auth && !$0.queryToken }, "\(log)")
    }

    /// Two captures of one street: while the walk covers the route its photos are kept, though the drive's images
    /// lie nearer at some points; beyond the walk's end (and the slack) the drive's images follow, in its capture
    /// order. The drive's images have only the camera's `compass_angle`.
    @Test func framesStayInOneSequenceWhereItCoversTheRoute() async throws {
        let server = try MapillaryWorld.server()
        let source = try MapillaryWorld.source(server)
        let (lat, lng, _) = MapillaryWorld.walkEXIF[4]
        let beyond = (1...3).map { MapillaryWorld.offset(lat, lng, north: 3.0 * Double($0), east: 0.4) }
        // From the first photo on, points where the drive's image beside each walk photo is nearer than the photo.
        let besides = MapillaryWorld.walkEXIF.dropFirst().map {
            MapillaryWorld.offset($0.latitude, $0.longitude, north: 0.5, east: 0.9)
        }
        // And a point 100 m on, where there is no image: a gap.
        let nowhere = MapillaryWorld.offset(lat, lng, north: 100)
        let found = try await source.nearest(
            to: [MapillaryWorld.walkRoute[0]] + besides + beyond + [nowhere], radius: 4)
        // 3 m past the walk's last photo, the drive's image 0.4 m away, that photo is still within the slack.
        #expect(
            found.map { $0?.id }
                == (1...5).map(MapillaryWorld.walk) + [MapillaryWorld.walk(5)] + (7...8).map(MapillaryWorld.drive)
                + [nil])
        let drive = try #require(found[6])
        #expect(drive.headingSource == "compass_angle" && drive.heading == 95 && drive.author == "bo_drives")
    }

    /// A search whose answer fills the limit holds only some of the box's images: the box is cut in four and each
    /// quarter searched, so the walk is found whole with a limit of 4 images an answer.
    @Test func aFullAnswerIsSearchedAgainInQuarters() async throws {
        let server = try MapillaryWorld.server()
        var source = try MapillaryWorld.source(server)
        source.searchLimit = 4
        let found = try await source.nearest(to: MapillaryWorld.walkRoute, radius: 4)
        #expect(found.map { $0?.id } == (1...5).map(MapillaryWorld.walk))
        let searches = try await MapillaryWorld.log(server).filter { $0.path == "/images" }
        #expect(searches.count >= 5, "\(searches.count)")
    }

    /// A radius of kilometres: the boxes grow with it (one search, not one a point), and a box larger than the API
    /// takes (0.01 square degrees; the stand-in refuses one) is searched in quarters.
    @Test func largeRadiiStayWithinTheLimits() async throws {
        let route = (0..<101).map { Coordinate(uncheckedLatitude: 59.9 + Double($0) * 0.00009, longitude: 10.7) }
        #expect(MapillarySource.boxes(along: route, radius: 250, maxSide: 400 + 2.02 * 250).count == 3)
        let server = try MapillaryWorld.server()
        let source = try MapillaryWorld.source(server)
        let found = try await source.nearest(to: [MapillaryWorld.walkRoute[0]], radius: 6000)
        #expect(found.map { $0?.id } == [MapillaryWorld.walk(1)])
        #expect(try await MapillaryWorld.log(server).filter { $0.path == "/images" }.count == 4)
    }

    /// One image the answer gets wrong (its width a string) is left out with a warning naming it and the field,
    /// the rest are used; an image whose creator has no username is credited to "Mapillary contributor" and its
    /// id.
    @Test func aMalformedImageIsLeftOutAlone() async throws {
        let server = try MapillaryWorld.server(["--malformed"])
        let warnings = Collected()
        let source = try MapillaryWorld.source(server, warning: { warnings.add($0) })
        let (lat, lng, _) = MapillaryWorld.walkEXIF[0]
        let south = MapillaryWorld.offset(lat, lng, north: -30)
        let found = try await source.nearest(to: [MapillaryWorld.walkRoute[0], south], radius: 4)
        #expect(found.map { $0?.id } == [MapillaryWorld.walk(1), "7000000000000002"])
        #expect(found[1]?.author == "Mapillary contributor 1000000000000099")
        #expect(
            warnings.items.contains("Mapillary: image 7000000000000001: field width is not as documented; skipped"),
            "\(warnings.items)")
    }

    /// The Graph API's rate-limit answer (code 4) as HTTP 400 without `Retry-After` is retried with backoff; an
    /// error of another code with type OAuthException (Graph's "(#100) Invalid parameter") is not taken for a
    /// refused token.
    @Test func graphErrorsAreToldApart() async throws {
        let limited = try MapillaryWorld.server(["--rate-limit-code", "2"])
        let found = try await MapillaryWorld.source(limited).nearest(to: [MapillaryWorld.walkRoute[0]], radius: 4)
        #expect(found.map { $0?.id } == [MapillaryWorld.walk(1)])
        #expect(try await MapillaryWorld.log(limited).filter { $0.path == "/images" }.count == 3)

        let failing = try MapillaryWorld.server(["--search-error", "100"])
        do {
            _ = try await MapillaryWorld.source(failing).nearest(to: [MapillaryWorld.walkRoute[0]], radius: 4)
            Issue.record("a failed search was taken")
        } catch let error as LapseError {
            #expect(error.code == .network, "\(error)")
            #expect(!error.description.contains("MAPILLARY_ACCESS_TOKEN"), "\(error)")
            #expect(error.description.contains("(#100) Invalid parameter"), "\(error)")
        }
    }

    /// The thumbnail a frame needs: 2048 pixels wide up to 2048, the original beyond; both decode 2:1 at their sizes.
    @Test func thumbnailsByTheWidthNeeded() async throws {
        let server = try MapillaryWorld.server()
        let source = try MapillaryWorld.source(server)
        let pano = try #require(try await source.nearest(to: [MapillaryWorld.walkRoute[0]], radius: 4)[0])
        let small = try await source.image(for: pano, resolution: .atLeast(width: 1500))
        #expect(small.pixels.width == 1500 && small.pixels.height == 750)
        let large = try await source.image(for: pano, resolution: .atLeast(width: 4000))
        #expect(large.pixels.width == 4000 && large.pixels.height == 2000)
        #expect(try await MapillaryWorld.stats(server)["2048"] == 1)
        #expect(try await MapillaryWorld.stats(server)["original"] == 1)
        // The CDN is never sent the token.
        let cdn = try await MapillaryWorld.log(server).filter { $0.path.hasPrefix("/cdn/") }
        #expect(cdn.count == 2 && cdn.allSatisfy { !$0.auth && !$0.queryToken })
    }

    /// An expired thumbnail URL (403) is looked up again once by the image's id, and the fresh one fetched; a URL
    /// still refused after that fails in one line.
    @Test func anExpiredThumbnailURLIsLookedUpAgainOnce() async throws {
        let server = try MapillaryWorld.server(["--expired-search-urls"])
        let source = try MapillaryWorld.source(server)
        let panos = try await source.nearest(to: Array(MapillaryWorld.walkRoute.prefix(2)), radius: 4)
        for pano in panos {
            let image = try await source.image(for: try #require(pano), resolution: .atLeast(width: 1024))
            #expect(image.pixels.width == 1024)
        }
        let stats = try await MapillaryWorld.stats(server)
        #expect(stats["expired"] == 2 && stats["entity"] == 2 && stats["images"] == 2, "\(stats)")

        let always = try MapillaryWorld.server(["--always-expired"])
        let stale = try MapillaryWorld.source(always)
        let pano = try #require(try await stale.nearest(to: [MapillaryWorld.walkRoute[0]], radius: 4)[0])
        do {
            _ = try await stale.image(for: pano, resolution: .atLeast(width: 1024))
            Issue.record("an always-expired URL was fetched")
        } catch let error as LapseError {
            #expect(error.code == .denied && error.description.contains("expired"), "\(error)")
        }
        let again = try await MapillaryWorld.stats(always)
        #expect(again["expired"] == 2 && again["entity"] == 1, "\(again)")
    }

    /// A token the API refuses: one `.denied` error saying how to get one, without the token.
    @Test func aBadTokenIsOneLineWithoutTheToken() async throws {
        let server = try MapillaryWorld.server()
        let bad = "MLY|1111111111|this-is-not-a-valid-token-zz9"
        let source = try MapillaryWorld.source(server, token: bad)
        do {
            _ = try await source.nearest(to: MapillaryWorld.walkRoute, radius: 4)
            Issue.record("a bad token was taken")
        } catch let error as LapseError {
            #expect(error.code == .denied)
            #expect(!error.description.contains(bad) && !error.description.contains("\n"), "\(error)")
            #expect(error.description.contains("MAPILLARY_ACCESS_TOKEN"), "\(error)")
            #expect(error.description.contains("Invalid OAuth access token"), "\(error)")
        }
        #expect(throws: LapseError.self) { try MapillarySource(token: "  ", baseURL: URL(string: server.baseURL)!) }
    }

    /// HTTP 429 with `Retry-After: 1`: the search is asked again no sooner than a second later, and succeeds.
    @Test func rateLimitsAreWaitedOut() async throws {
        let server = try MapillaryWorld.server(["--rate-limit", "2"])
        let source = try MapillaryWorld.source(server)
        let found = try await source.nearest(to: Array(MapillaryWorld.walkRoute.prefix(1)), radius: 4)
        #expect(found.map { $0?.id } == [MapillaryWorld.walk(1)])
        let searches = try await MapillaryWorld.log(server).filter { $0.path == "/images" }
        #expect(searches.count == 3)
        for k in 1..<searches.count {
            #expect(searches[k].time - searches[k - 1].time >= 0.95, "\(searches)")
        }
    }
}
