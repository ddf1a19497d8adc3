// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseNet
import LapseRouting
import TestSupport
import Testing

/// Directions against `Tests/Fixtures/directions_standin.py`, which serves Google's real recorded responses
/// (../shared/data/streetview) and computes synthetic Google/OSRM answers from the request.
@Suite struct DirectionsTests {
    static let key = "AIzaTESTKEY-1234567890abcdef"
    let toronto = try! Coordinate(latitude: 43.6533961, longitude: -79.3827986)
    let montreal = try! Coordinate(latitude: 45.5017123, longitude: -73.5672184)

    /// A client that gives up quickly, for the failure cases (the shared one backs off for seconds).
    static let impatient: HTTPClient = {
        var c = HTTPClient.Configuration()
        c.maxAttempts = 2
        c.baseDelay = 0.01
        c.requestTimeout = 10
        return HTTPClient(configuration: c)
    }()

    func google(_ server: LocalServer, _ scenario: String, key: String = key) -> GoogleDirections {
        GoogleDirections(apiKey: key, baseURL: URL(string: server.baseURL + "/" + scenario)!, client: Self.impatient)
    }

    func requestLog(_ server: LocalServer) async throws -> [String] {
        try await HTTPClient.shared.getJSON(URL(string: server.baseURL + "/_requests")!, as: [String].self)
    }

    @Test func torontoMontrealIsTheConcatenationOfItsStepPolylines() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let result = try await google(server, "toronto_montreal").route(
            DirectionsRequest(origin: toronto, destination: montreal))
        // Expected: straight from the recorded file, each step's polyline in order, the shared seam points once.
        let file = TestData.path(
            "streetview/googlemaps_openapi_spec/maps_http_directions_toronto_montreal_response.json")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        let route = try #require((json["routes"] as? [[String: Any]])?.first)
        let legs = try #require(route["legs"] as? [[String: Any]])
        var expected: [Coordinate] = []
        var stepCount = 0
        var rawPointCount = 0
        for leg in legs {
            for step in leg["steps"] as! [[String: Any]] {
                let points = try EncodedPolyline.decode((step["polyline"] as! [String: Any])["points"] as! String)
                stepCount += 1
                rawPointCount += points.count
                if let last = expected.last, last == points.first {
                    expected += points.dropFirst()
                } else {
                    expected += points
                }
            }
        }
        #expect(stepCount == 17)
        #expect(result.route.coordinates == expected)
        #expect(rawPointCount - result.route.points.count == 16) // every step starts where the previous one ended
        // Not the (smoothed, simplified) overview.
        let overview = try EncodedPolyline.decode((route["overview_polyline"] as! [String: Any])["points"] as! String)
        #expect(overview.count < result.route.points.count)
        // Length: the legs say 540 543 m; the geometry must agree within 1 %.
        #expect(result.reportedDistance == 540_543)
        let length = result.route.length
        #expect(abs(length - 540_543) / 540_543 < 0.01, "geometry length \(length) m")
        #expect(result.route.points.first!.coordinate.distance(to: toronto) < 5)
        #expect(result.route.points.last!.coordinate.distance(to: montreal) < 5)
        #expect(result.requestCount == 1 && result.provider == "google-directions")
        for (a, b) in zip(result.route.points, result.route.points.dropFirst()) { #expect(a != b) }
        // The request carried the points and the key.
        let log = try await requestLog(server)
        #expect(log.count == 1)
        #expect(
            log[0].contains("origin=43.6533961,-79.3827986") && log[0].contains("destination=45.5017123,-73.5672184"))
        #expect(log[0].contains("key=\(Self.key)") && log[0].contains("mode=driving"))
    }

    @Test(arguments: [
        ("zero_results", LapseError.Code.notFound, "no route between these points (ZERO_RESULTS)"),
        (
            "invalid", LapseError.Code.invalidInput,
            "(INVALID_REQUEST): Invalid request. Missing the 'origin' parameter."
        ),
        ("over_query_limit", LapseError.Code.rateLimited, "(OVER_QUERY_LIMIT): Please wait. (after 2 attempts)")
    ])
    func realErrorResponses(scenario: String, code: LapseError.Code, reason: String) async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let error = await #expect(throws: LapseError.self) {
            try await google(server, scenario).route(DirectionsRequest(origin: toronto, destination: montreal))
        }
        #expect(error?.code == code)
        #expect(error?.reason.hasSuffix(reason) == true, "\(String(describing: error))")
        #expect(error?.description.contains(Self.key) == false)
        #expect(error?.subject?.hasPrefix("Google Directions http://127.0.0.1:") == true)
        #expect(error?.subject?.hasSuffix("/maps/api/directions/json?…") == true)
    }

    /// Every status is its own error; the key (echoed back by the stand-in inside error_message) never shows.
    @Test func everyStatusIsADistinctErrorWithoutTheKey() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let expectedCodes: [GoogleDirectionsStatus: LapseError.Code] = [
            .notFound: .notFound, .zeroResults: .notFound, .maxWaypointsExceeded: .invalidInput,
            .maxRouteLengthExceeded: .invalidInput, .invalidRequest: .invalidInput, .overDailyLimit: .rateLimited,
            .overQueryLimit: .rateLimited, .requestDenied: .denied, .unknownError: .network
        ]
        var reasons = Set<String>()
        for status in GoogleDirectionsStatus.allCases where status != .ok {
            let error = await #expect(throws: LapseError.self) {
                try await google(server, "status_" + status.rawValue).route(
                    DirectionsRequest(origin: toronto, destination: montreal))
            }
            #expect(error?.code == expectedCodes[status], "\(status)")
            #expect(error?.reason.contains("(\(status.rawValue))") == true)
            #expect(error?.description.contains(Self.key) == false, "\(String(describing: error))")
            #expect(error?.description.contains("key=[redacted]") == true)
            reasons.insert(error?.reason.components(separatedBy: " (").first ?? "")
        }
        #expect(reasons.count == 9)
        let unknown = await #expect(throws: LapseError.self) {
            try await google(server, "status_SOMETHING_NEW").route(
                DirectionsRequest(origin: toronto, destination: montreal))
        }
        #expect(unknown?.reason.contains("unexpected status 'SOMETHING_NEW'") == true)
    }

    @Test func sixtyWaypointsAreSplitIntoChunksSharingTheirEnds() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        // 62 points on the 1e-5° grid, zig-zagging north-east from Ottawa.
        let points = try (0..<62).map { i in
            try Coordinate(
                latitude: 45.42153 + Double(i) * 0.00731,
                longitude: -75.69719 + Double(i % 3) * 0.00417 + Double(i) * 0.0021)
        }
        let request = DirectionsRequest(origin: points[0], destination: points[61], waypoints: Array(points[1...60]))
        let result = try await google(server, "synthetic").route(request)
        #expect(result.requestCount == 3)
        // The requests the server saw: ≤ 25 intermediate waypoints each, each starting where the previous ended.
        let log = try await requestLog(server)
        #expect(log.count == 3)
        var chunks: [(origin: String, destination: String, waypoints: [String])] = []
        for path in log {
            let items = URLComponents(string: path)!.queryItems!
            let value = { (name: String) in items.first { $0.name == name }?.value }
            chunks.append(
                (
                    value("origin")!, value("destination")!,
                    value("waypoints")?.split(separator: "|").map(String.init) ?? []
                ))
        }
        chunks.sort { (try! Coordinate.parse($0.origin)).latitude < (try! Coordinate.parse($1.origin)).latitude }
        #expect(chunks.map(\.waypoints.count) == [25, 25, 8])
        #expect(chunks[0].origin == points[0].description && chunks[2].destination == points[61].description)
        #expect(chunks[0].destination == chunks[1].origin && chunks[1].destination == chunks[2].origin)
        #expect(chunks[0].destination == points[26].description && chunks[1].destination == points[52].description)
        let sent = chunks.flatMap { [$0.origin] + $0.waypoints } + [chunks[2].destination]
        #expect(sent == points.map(\.description)) // every point once, in order
        // Joined geometry: each leg is two steps (a → midpoint → b); no point repeated at step, leg or chunk seams.
        let coordinates = result.route.coordinates
        #expect(coordinates.count == 62 + 61)
        for (a, b) in zip(coordinates, coordinates.dropFirst()) { #expect(a != b) }
        for (i, p) in points.enumerated() { // the stops themselves, at 1e-5° precision
            #expect(
                abs(coordinates[2 * i].latitude - p.latitude) < 1e-9
                    && abs(coordinates[2 * i].longitude - p.longitude) < 1e-9)
        }
        #expect(Set(coordinates).count == coordinates.count)
    }

    @Test func chunkingRule() throws {
        let p = try (0..<100).map { try Coordinate(latitude: Double($0) / 10, longitude: 0) }
        #expect(GoogleDirections.chunks(Array(p[0..<2])).map(\.count) == [2])
        #expect(GoogleDirections.chunks(Array(p[0..<27])).map(\.count) == [27]) // 25 intermediate: one request
        #expect(GoogleDirections.chunks(Array(p[0..<28])).map(\.count) == [27, 2])
        #expect(GoogleDirections.chunks(Array(p[0..<62])).map { $0.count - 2 } == [25, 25, 8])
        let c = GoogleDirections.chunks(p)
        for (a, b) in zip(c, c.dropFirst()) { #expect(a.last == b.first) }
        #expect(c.allSatisfy { $0.count - 2 <= 25 })
        #expect(c.flatMap { $0 }.count == p.count + c.count - 1)
    }

    @Test func overviewOnlyResponseUsesTheOverviewWithAWarning() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let sydney = try Coordinate(latitude: -33.8688, longitude: 151.2093)
        let melbourne = try Coordinate(latitude: -37.8136, longitude: 144.9631)
        let result = try await google(server, "overview_only").route(
            DirectionsRequest(origin: sydney, destination: melbourne))
        #expect(result.warnings.contains { $0.contains("overview") })
        #expect(result.route.points.count > 10)
        #expect(result.route.points.first!.coordinate.distance(to: sydney) < 2000)
        #expect(result.route.points.last!.coordinate.distance(to: melbourne) < 2000)
    }

    @Test func httpFailuresAndRefusedConnections() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let error = await #expect(throws: LapseError.self) {
            try await GoogleDirections(
                apiKey: Self.key, baseURL: URL(string: server.baseURL + "/http_500")!, client: Self.impatient
            )
            .route(DirectionsRequest(origin: toronto, destination: montreal))
        }
        #expect(
            error?.code == .network && error?.reason == "HTTP 500 (after 2 attempts)", "\(String(describing: error))")
        #expect(try await requestLog(server).count == 2) // retried once
        // A port nobody listens on.
        let port = server.port
        server.stop()
        let refused = await #expect(throws: LapseError.self) {
            try await GoogleDirections(
                apiKey: Self.key, baseURL: URL(string: "http://127.0.0.1:\(port)")!, client: Self.impatient
            )
            .route(DirectionsRequest(origin: toronto, destination: montreal))
        }
        #expect(refused?.code == .network)
        // Nothing listens any more on a server that answered this client before: retried (a restart mid-job);
        // a server never reached fails at once (HTTPClientTests.unreachableServersAreNotRetried).
        #expect(
            refused?.description
                == """
                Google Directions http://127.0.0.1:\(port)/maps/api/directions/json?…: connection refused (is the \
                server running and the URL right?) (after 2 attempts)
                """
        )
        #expect(refused?.description.contains(Self.key) == false, "\(String(describing: refused))")
    }

    /// The OSRM demo server has only a car profile: walking or cycling there is refused before any request.
    @Test func osrmDemoServerRefusesWalkingAndCycling() async throws {
        for mode in [TravelMode.walking, .cycling] {
            let error = await #expect(throws: LapseError.self) {
                try await OSRMDirections(client: Self.impatient).route(
                    DirectionsRequest(origin: toronto, destination: montreal, mode: mode))
            }
            #expect(
                error?.code == .usage && error?.reason.contains("only a car profile") == true,
                "\(String(describing: error))")
        }
    }

    @Test func osrmUsesLonLatOrderAndPolyline6() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let via = try Coordinate(latitude: 44.2311717, longitude: -76.4859544) // Kingston
        let osrm = OSRMDirections(baseURL: URL(string: server.baseURL + "/osrm/")!)
        let result = try await osrm.route(DirectionsRequest(origin: toronto, destination: montreal, waypoints: [via]))
        let log = try await requestLog(server)
        #expect(
            log == [
                "/osrm/route/v1/driving/-79.3827986,43.6533961;-76.4859544,44.2311717;-73.5672184,45.5017123"
                    + "?overview=full&geometries=polyline6&steps=false"
            ])
        // polyline6 keeps 6 decimals: within 0.5e-6° of the points sent.
        #expect(result.route.points.count == 3)
        for (p, q) in zip(result.route.coordinates, [toronto, via, montreal]) {
            #expect(abs(p.latitude - q.latitude) <= 5e-7 && abs(p.longitude - q.longitude) <= 5e-7)
        }
        #expect(abs(result.reportedDistance - result.route.length) < 1)
        #expect(result.provider == "osrm")
        let walking = try await OSRMDirections(baseURL: URL(string: server.baseURL + "/osrm")!)
            .route(DirectionsRequest(origin: toronto, destination: montreal, mode: .walking))
        #expect(walking.route.points.count == 2)
        #expect(try await requestLog(server).last!.hasPrefix("/osrm/route/v1/walking/"))
    }

    @Test func osrmErrors() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let error = await #expect(throws: LapseError.self) {
            try await OSRMDirections(baseURL: URL(string: server.baseURL + "/osrm_noroute")!)
                .route(DirectionsRequest(origin: toronto, destination: montreal))
        }
        #expect(error?.code == .notFound)
        #expect(error?.reason == "no route between these points (NoRoute): Impossible route between points")
    }
}
