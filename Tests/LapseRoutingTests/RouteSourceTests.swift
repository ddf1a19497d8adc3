// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseNet
import LapseRouting
import TestSupport
import Testing

@Suite struct RouteSourceTests {
    @Test func fileSource() async throws {
        let loaded = try await RouteSource.file(URL(fileURLWithPath: TestData.path("geo/sf_30km_h.gpx"))).load()
        #expect(loaded.route.points.count == 49 && loaded.provider == "file" && loaded.requestCount == 0)
        #expect(loaded.reportedDistance == nil)
    }

    @Test func directionsSourceWithEnvironment() async throws {
        let server = try LocalServer(script: "directions_standin.py")
        let request = DirectionsRequest(
            origin: try Coordinate(latitude: 1, longitude: 2),
            destination: try Coordinate(latitude: 1.01, longitude: 2.01))
        // The default Google provider is the Routes API (LAPSE_GOOGLE_ROUTES_URL); the legacy one is asked for by name.
        let environment = [
            "GOOGLE_MAPS_API_KEY": "k-12345", "LAPSE_GOOGLE_ROUTES_URL": server.baseURL + "/routes",
            "LAPSE_GOOGLE_DIRECTIONS_URL": server.baseURL + "/synthetic"
        ]
        let g = try await RouteSource.directions(request).load(DirectionsConfiguration(environment: environment))
        #expect(g.provider == "google" && g.route.points.count == 3 && g.requestCount == 1)
        let legacy = try await RouteSource.directions(request).load(
            DirectionsConfiguration(service: .googleDirections, environment: environment))
        #expect(legacy.provider == "google-directions" && legacy.route.points.count == 3 && legacy.requestCount == 1)
        let log = try await HTTPClient.shared.getJSON(URL(string: server.baseURL + "/_requests")!, as: [String].self)
        #expect(
            log.count == 2 && log[0].hasPrefix("/routes/directions/v2:computeRoutes")
                && log[1].hasPrefix("/synthetic/maps/api/directions/json"))
        let osrm = DirectionsConfiguration(service: .osrm, environment: ["LAPSE_OSRM_URL": server.baseURL + "/osrm"])
        let o = try await RouteSource.directions(request).load(osrm)
        #expect(o.provider == "osrm" && o.route.points.count == 2)
        // An explicit URL wins over the environment.
        let explicit = DirectionsConfiguration(
            service: .osrm, osrmBaseURL: server.baseURL + "/osrm_noroute",
            environment: ["LAPSE_OSRM_URL": server.baseURL + "/osrm"])
        await #expect(throws: LapseError.self) { try await RouteSource.directions(request).load(explicit) }
    }

    @Test func configurationErrors() throws {
        let noKey = DirectionsConfiguration(environment: [:])
        #expect((#expect(throws: LapseError.self) { try noKey.provider() })?.code == .usage)
        let badURL = DirectionsConfiguration(service: .osrm, osrmBaseURL: "ftp://x", environment: [:])
        #expect((#expect(throws: LapseError.self) { try badURL.provider() })?.code == .usage)
        let dir = TestData.scratchDirectory("lapse-key")
        let keyFile = dir.appendingPathComponent("key").path
        try Data("  the-key-value \nsecond line\n".utf8).write(to: URL(fileURLWithPath: keyFile))
        #expect(
            try GoogleDirections.apiKey(
                keyFile: URL(fileURLWithPath: keyFile), environment: ["GOOGLE_MAPS_API_KEY": "env"])
                == "the-key-value")
        #expect(try GoogleDirections.apiKey(keyFile: nil, environment: ["GOOGLE_MAPS_API_KEY": " env\n"]) == "env")
        #expect(try GoogleDirections.apiKey(keyFile: nil, environment: [:]) == nil)
        try Data("\n".utf8).write(to: URL(fileURLWithPath: keyFile))
        let empty = #expect(throws: LapseError.self) {
            try GoogleDirections.apiKey(keyFile: URL(fileURLWithPath: keyFile), environment: [:])
        }
        #expect(empty?.description == "\(keyFile): the key file is empty")
    }
}
