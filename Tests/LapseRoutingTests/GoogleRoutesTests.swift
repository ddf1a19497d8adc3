// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseNet
import TestSupport
import Testing

@testable import LapseRouting

/// The Routes API against `Tests/Fixtures/directions_standin.py`, which answers as the Routes API reference
/// documents it (key header, required field mask, fields filtered by the mask, limits, error bodies).
@Suite struct GoogleRoutesTests {
    static let key = "AIzaROUTESKEY-abcdef0123456789"
    let toronto = try! Coordinate(latitude: 43.6533961, longitude: -79.3827986)
    let montreal = try! Coordinate(latitude: 45.5017123, longitude: -73.5672184)

    static let impatient: HTTPClient = {
        var c = HTTPClient.Configuration()
        c.maxAttempts = 4
        c.baseDelay = 0.01
        c.maxDelay = 0.05
        c.requestTimeout = 10
        return HTTPClient(configuration: c)
    }()

    struct Post: Decodable {
        var path: String
        var fieldMask: String?
        var hasKeyHeader: Bool
        var query: String
        enum CodingKeys: String, CodingKey {
            case path, query
            case fieldMask = "field_mask"
            case hasKeyHeader = "has_key_header"
        }
    }

    func posts(_ server: LocalServer) async throws -> ([Post], [[String: Any]]) {
        let data = try await HTTPClient.shared.get(URL(string: server.baseURL + "/_posts")!).body
        let bodies = (try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? []).map {
            $0["body"] as? [String: Any] ?? [:]
        }
        return (try JSONDecoder().decode([Post].self, from: data), bodies)
    }

    func routes(_ server: LocalServer, _ scenario: String) -> GoogleRoutes {
        GoogleRoutes(apiKey: Self.key, baseURL: URL(string: server.baseURL + "/" + scenario)!, client: Self.impatient)
    }

    /// The default `google` provider is the Routes API: one POST with the key in a header and a field mask, no
    /// request to the legacy API, pass-through intermediates, high-quality polylines; the geometry is the steps'.
    @Test func defaultGoogleProviderUsesTheRoutesAPI() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let via = try Coordinate(latitude: 44.2311717, longitude: -76.4859544)
        let configuration = DirectionsConfiguration(
            keyFile: nil,
            environment: [
                "GOOGLE_MAPS_API_KEY": Self.key, "LAPSE_GOOGLE_ROUTES_URL": server.baseURL + "/routes"
            ], client: Self.impatient)
        let result = try await RouteSource.directions(
            DirectionsRequest(origin: toronto, destination: montreal, waypoints: [via])
        )
        .load(configuration)
        #expect(result.provider == "google" && result.requestCount == 1)
        // origin → midpoint → Kingston → midpoint → Montreal, each at polyline precision 5.
        let expected = [
            toronto,
            Coordinate(
                uncheckedLatitude: (toronto.latitude + via.latitude) / 2,
                longitude: (toronto.longitude + via.longitude) / 2),
            via,
            Coordinate(
                uncheckedLatitude: (via.latitude + montreal.latitude) / 2,
                longitude: (via.longitude + montreal.longitude) / 2),
            montreal
        ]
        #expect(result.route.points.count == expected.count)
        for (p, e) in zip(result.route.points, expected) { #expect(p.coordinate.distance(to: e) < 1.5) }
        let (log, bodies) = try await posts(server)
        #expect(log.count == 1)
        #expect(log[0].path == "/routes/directions/v2:computeRoutes" && log[0].hasKeyHeader && log[0].query.isEmpty)
        #expect(log[0].fieldMask == GoogleRoutes.fieldMask)
        let body = bodies[0]
        #expect(body["travelMode"] as? String == "DRIVE" && body["polylineQuality"] as? String == "HIGH_QUALITY")
        let inter = try #require(body["intermediates"] as? [[String: Any]])
        #expect(inter.count == 1 && inter[0]["via"] as? Bool == true)
        let requests = try await HTTPClient.shared.getJSON(
            URL(string: server.baseURL + "/_requests")!, as: [String].self)
        #expect(!requests.contains { $0.contains("maps/api/directions") })
    }

    /// The real Toronto–Montreal geometry as the Routes API gives it: identical to the legacy API's steps.
    @Test func realGeometryEqualsTheLegacyAnswer() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let request = DirectionsRequest(origin: toronto, destination: montreal)
        let new = try await routes(server, "toronto_montreal").route(request)
        let legacy = try await GoogleDirections(
            apiKey: Self.key, baseURL: URL(string: server.baseURL + "/toronto_montreal")!
        )
        .route(request)
        #expect(new.route.points.map(\.coordinate) == legacy.route.points.map(\.coordinate))
        #expect(new.route.points.count > 100)
        #expect(new.reportedDistance == legacy.reportedDistance && new.reportedDistance > 500_000)
        #expect(new.warnings.isEmpty)
    }

    /// 30 pass-through points: two chained requests of at most 25 intermediates, joined without repeats.
    @Test func moreThan25IntermediatesAreChained() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let vias = (1...30).map { i in Coordinate(uncheckedLatitude: 45 + Double(i) * 0.01, longitude: 7) }
        let origin = Coordinate(uncheckedLatitude: 45, longitude: 7)
        let destination = Coordinate(uncheckedLatitude: 45.31, longitude: 7)
        let result = try await routes(server, "routes").route(
            DirectionsRequest(origin: origin, destination: destination, waypoints: vias))
        #expect(result.requestCount == 2)
        #expect(result.route.points.count == 2 * 31 + 1) // every point and every midpoint, each once
        let (_, bodies) = try await posts(server)
        let counts = bodies.map { ($0["intermediates"] as? [Any])?.count ?? 0 }.sorted()
        #expect(counts == [4, 25])
    }

    @Test func walkingAndCyclingModes() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let walking = try await routes(server, "routes").route(
            DirectionsRequest(origin: toronto, destination: montreal, mode: .walking))
        let cycling = try await routes(server, "routes").route(
            DirectionsRequest(origin: toronto, destination: montreal, mode: .cycling))
        // The service's warnings reach the user (the field mask asks for them; the stand-in drops what it omits).
        #expect(
            walking.warnings == [
                "Walking directions are in beta. Use caution - This route may be missing sidewalks or pedestrian paths."
            ])
        #expect(cycling.warnings.isEmpty)
        let (_, bodies) = try await posts(server)
        #expect(bodies.map { $0["travelMode"] as? String } == ["WALK", "BICYCLE"])
        #expect(bodies.allSatisfy { $0["routingPreference"] == nil })
    }

    @Test(arguments: [
        ("no_route", LapseError.Code.notFound, "no route between these points"),
        (
            "disabled", LapseError.Code.denied,
            "the Routes API is not enabled for this key's project: enable \"Routes API\""
        ),
        ("bad_key", LapseError.Code.denied, "the API key was refused")
    ])
    func errorsSayWhatToDoWithoutTheKey(scenario: String, code: LapseError.Code, reason: String) async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let error = await #expect(throws: LapseError.self) {
            try await routes(server, scenario).route(DirectionsRequest(origin: toronto, destination: montreal))
        }
        #expect(error?.code == code, "\(String(describing: error))")
        #expect(error?.reason.contains(reason) == true, "\(String(describing: error))")
        #expect(error?.description.contains(Self.key) == false)
        #expect(error?.subject?.hasPrefix("Google Routes API http://127.0.0.1:") == true)
    }

    /// 429 RESOURCE_EXHAUSTED twice: retried with backoff, then the route.
    @Test func quotaErrorsAreRetried() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let result = try await routes(server, "quota").route(DirectionsRequest(origin: toronto, destination: montreal))
        #expect(result.route.points.count == 3)
        #expect(try await posts(server).0.count == 3)
    }

    /// Without a field mask the API refuses the request: what our stand-in does, as documented.
    @Test func theStandInRequiresAFieldMask() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let body = try GoogleRoutes.body([toronto, montreal], mode: .driving)
        let response = try await HTTPClient.shared.post(
            URL(string: server.baseURL + "/routes/directions/v2:computeRoutes")!,
            json: body, headers: ["X-Goog-Api-Key": Self.key])
        #expect(response.status == 400 && response.text.contains("FieldMask is a required parameter"))
    }

    /// A new project's key on the legacy API: REQUEST_DENIED that points to the Routes API.
    @Test func legacyAPIOnANewProjectPointsToTheRoutesAPI() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let error = await #expect(throws: LapseError.self) {
            try await GoogleDirections(apiKey: Self.key, baseURL: URL(string: server.baseURL + "/new_project")!)
                .route(DirectionsRequest(origin: toronto, destination: montreal))
        }
        #expect(error?.code == .denied)
        #expect(
            error?.reason.contains("use `provider` google (the Routes API)") == true, "\(String(describing: error))")
    }

    /// Saved answers of both APIs read as route files, by their content (`.json`) or by the format named.
    @Test func savedAnswersReadAsRoutes() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let dir = TestData.scratchDirectory("saved-answers")
        defer { try? FileManager.default.removeItem(at: dir) }
        // The Routes API's answer as a user would save it (curl … > answer.json).
        let answer = try await HTTPClient.shared.post(
            URL(string: server.baseURL + "/toronto_montreal/directions/v2:computeRoutes")!,
            json: try GoogleRoutes.body([toronto, montreal], mode: .driving),
            headers: ["X-Goog-Api-Key": Self.key, "X-Goog-FieldMask": GoogleRoutes.fieldMask])
        let routesFile = dir.appendingPathComponent("routes-answer.json").path
        try answer.body.write(to: URL(fileURLWithPath: routesFile))
        let legacyFile = TestData.path(
            "streetview/googlemaps_openapi_spec/maps_http_directions_toronto_montreal_response.json")
        let legacy = try await GoogleDirections(
            apiKey: Self.key, baseURL: URL(string: server.baseURL + "/toronto_montreal")!
        )
        .route(DirectionsRequest(origin: toronto, destination: montreal))
        for (file, format) in [
            (routesFile, nil), (legacyFile, nil), (routesFile, RouteFileFormat.googleRoutes),
            (legacyFile, RouteFileFormat.googleDirections)
        ] {
            let route = try await RouteSource.file(URL(fileURLWithPath: file), format: format).load().route
            #expect(
                route.points.map(\.coordinate) == legacy.route.points.map(\.coordinate),
                "\(file) \(String(describing: format))")
        }
        // A saved answer without a route says so, naming the file.
        let zero = TestData.path("streetview/googlemaps_openapi_spec/maps_http_directions_zero_results_response.json")
        let error = #expect(throws: LapseError.self) { try RouteFile.read(URL(fileURLWithPath: zero)) }
        #expect(
            error?.subject == zero && error?.code == .notFound && error?.reason.contains("ZERO_RESULTS") == true,
            "\(String(describing: error))")
    }
}
