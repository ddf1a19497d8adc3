// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseNet

/// How the route is travelled; each service maps it to its own name (Google `mode`, OSRM profile).
public enum TravelMode: String, Sendable, CaseIterable {
    case driving, walking, cycling
}

/// What to ask a directions service: from `origin` through each of `waypoints` (in the given order, as stops)
/// to `destination`.
public struct DirectionsRequest: Sendable, Equatable {
    /// Where the route starts.
    public var origin: Coordinate
    /// Where the route ends.
    public var destination: Coordinate
    /// Intermediate points, in travel order. The Routes API passes through them (`via: true`: no stop, no U-turn
    /// there); the legacy Directions API and OSRM make each a stop. Any number: services with a per-request limit
    /// split the request, and each split point is a stop (where one request ends and the next begins).
    public var waypoints: [Coordinate]
    /// How the route is travelled (default driving).
    public var mode: TravelMode

    /// A request from `origin` to `destination` through `waypoints`, by `mode`.
    public init(origin: Coordinate, destination: Coordinate, waypoints: [Coordinate] = [], mode: TravelMode = .driving)
    {
        self.origin = origin
        self.destination = destination
        self.waypoints = waypoints
        self.mode = mode
    }

    /// Origin, waypoints and destination in order.
    public var allPoints: [Coordinate] { [origin] + waypoints + [destination] }
}

/// A route found by a directions service.
public struct DirectionsResult: Sendable, Equatable {
    /// The road geometry, from origin to destination, without repeated points where requests or steps meet.
    public var route: Route
    /// The route's length in metres as the service reports it (sum of its legs), for comparison with
    /// `route.length` (the geometry's own haversine length).
    public var reportedDistance: Double
    /// The service's name ("google", "google-directions", "osrm").
    public var provider: String
    /// How many HTTP requests were made (more than one when waypoints were split into chunks).
    public var requestCount: Int
    /// Things the user should know (e.g. the service's own warnings, or that a smoothed overview was used).
    public var warnings: [String]

    /// A result with the given values (see the properties).
    public init(route: Route, reportedDistance: Double, provider: String, requestCount: Int, warnings: [String] = []) {
        self.route = route
        self.reportedDistance = reportedDistance
        self.provider = provider
        self.requestCount = requestCount
        self.warnings = warnings
    }
}

/// A directions service that turns points into a road geometry.
public protocol DirectionsProvider: Sendable {
    /// Short lower-case name, as shown to users ("google", "osrm").
    var name: String { get }
    /// Asks the service for a route.
    /// - Throws: ``LapseError``: `.notFound` when no route exists, `.rateLimited` for quota errors, `.denied` for
    ///   refused credentials, `.invalidInput` for requests the service rejects, `.network` for transport failures.
    ///   Messages never contain an API key.
    func route(_ request: DirectionsRequest) async throws -> DirectionsResult
}

/// Asks for `points` in chained requests of at most `maxIntermediate` intermediate points (see
/// ``waypointChunks(_:maxIntermediate:)``), concurrently, and joins the answers in order: geometry without the
/// repeated join points, lengths summed, warnings once each.
func chainedRoute(
    _ points: [Coordinate], maxIntermediate: Int, provider: String,
    fetch: @escaping @Sendable ([Coordinate]) async throws -> GoogleRouteResponse.Parsed
) async throws -> DirectionsResult {
    let pieces = waypointChunks(points, maxIntermediate: maxIntermediate)
    let results = try await withThrowingTaskGroup(of: (Int, GoogleRouteResponse.Parsed).self) { group in
        for (i, piece) in pieces.enumerated() { group.addTask { (i, try await fetch(piece)) } }
        var out = [GoogleRouteResponse.Parsed?](repeating: nil, count: pieces.count)
        for try await (i, piece) in group { out[i] = piece }
        return out.map { $0! }
    }
    var warnings: [String] = []
    for r in results { for w in r.warnings where !warnings.contains(w) { warnings.append(w) } }
    var route = Route(coordinates: GoogleRouteResponse.joinedWithoutRepeats(results.map(\.coordinates)))
    route.copyright = Route.googleCopyright
    return DirectionsResult(
        route: route,
        reportedDistance: results.reduce(0) { $0 + $1.distance }, provider: provider,
        requestCount: pieces.count, warnings: warnings)
}

/// Splits `points` (origin, waypoints…, destination) into consecutive runs with at most `maxIntermediate` points
/// between their ends, for services with a per-request limit; each run starts where the previous one ended.
func waypointChunks(_ points: [Coordinate], maxIntermediate: Int) -> [[Coordinate]] {
    precondition(maxIntermediate >= 0 && points.count >= 2)
    var result: [[Coordinate]] = []
    var start = 0
    while start < points.count - 1 {
        let end = min(start + maxIntermediate + 1, points.count - 1)
        result.append(Array(points[start...end]))
        start = end
    }
    return result
}

extension HTTPClient {
    /// GET for a directions service: the response whatever its status (HTTPClient already retried 429/5xx).
    /// Errors name the service before the URL and never contain `secret`.
    func directionsGet(
        _ url: URL, service: String, hiding secret: String?,
        temporaryRefusal: (@Sendable (HTTPResponse) -> String?)? = nil
    ) async throws -> HTTPResponse {
        do { return try await get(url, temporaryRefusal: temporaryRefusal) } catch var error as LapseError {
            let secrets = secret.map { [$0] } ?? []
            error.reason = Redaction.message(error.reason, hiding: secrets)
            error.subject =
                service + " " + Redaction.message(error.subject ?? Redaction.url(url.absoluteString), hiding: secrets)
            throw error
        }
    }
}
