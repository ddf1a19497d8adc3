// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseNet

/// An OSRM server's route service (OSRM HTTP API v5:
/// `GET {base}/route/v1/{profile}/{lon},{lat};{lon},{lat}…?overview=full&geometries=polyline6`).
///
/// Coordinates go in **longitude,latitude** order; the geometry comes back as an encoded polyline at precision 6.
/// Any OSRM server works (`baseURL` may include a path prefix, e.g. `https://routing.openstreetmap.de/routed-car`).
public struct OSRMDirections: DirectionsProvider {
    /// The OSRM project's public demo server (driving only, fair use).
    public static let defaultBaseURL = URL(string: "https://router.project-osrm.org")!

    /// `osrm`.
    public let name = "osrm"
    private let baseURL: URL
    private let profile: String?
    private let client: HTTPClient

    /// - Parameters:
    ///   - baseURL: the server (default ``defaultBaseURL``).
    ///   - profile: the profile path component; `nil` uses the request's mode (`driving`, `walking`, `cycling`).
    ///   - client: the HTTP client (default: the process's shared one, which retries 429 and 5xx with backoff).
    public init(baseURL: URL = defaultBaseURL, profile: String? = nil, client: HTTPClient = .shared) {
        self.baseURL = baseURL
        self.profile = profile
        self.client = client
    }

    func url(for request: DirectionsRequest) -> URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        let points = request.allPoints.map { "\(Self.number($0.longitude)),\(Self.number($0.latitude))" }.joined(
            separator: ";")
        components.percentEncodedPath =
            components.percentEncodedPath.trimmingSuffix("/")
            + "/route/v1/\(profile ?? request.mode.rawValue)/" + points
        components.percentEncodedQuery = "overview=full&geometries=polyline6&steps=false"
        return components.url!
    }

    /// The route of `request` from the OSRM server's `route` service.
    /// - Throws: `.network`, `.notFound` (no route), `.invalidInput` (an answer that does not parse).
    public func route(_ request: DirectionsRequest) async throws -> DirectionsResult {
        if profile == nil, request.mode != .driving, baseURL.host == Self.defaultBaseURL.host {
            // The demo server would answer with a car route whatever the profile asked for.
            throw LapseError.usage(
                """
                the OSRM demo server has only a car profile: for \(request.mode.rawValue) give your own OSRM \
                server with `osrmBaseURL`, or use `provider` google
                """
            )
        }
        let url = url(for: request)
        let subject = "OSRM " + Redaction.url(url.absoluteString)
        let response = try await client.directionsGet(url, service: "OSRM", hiding: nil)
        let data = response.body
        let status = response.status
        guard let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let code = json["code"] as? String
        else {
            switch status {
            case 200: throw LapseError(.network, subject, "the response is not OSRM JSON")
            case 429: throw LapseError(.rateLimited, subject, "HTTP 429 too many requests")
            default: throw LapseError(.network, subject, "HTTP \(status)")
            }
        }
        let message = json["message"] as? String
        guard code == "Ok" else {
            let suffix = message.map { ": \($0)" } ?? ""
            switch code {
            case "NoRoute": throw LapseError(.notFound, subject, "no route between these points (NoRoute)" + suffix)
            case "NoSegment":
                throw LapseError(.notFound, subject, "a point is too far from any road (NoSegment)" + suffix)
            case "TooBig": throw LapseError(.invalidInput, subject, "too many points for this server (TooBig)" + suffix)
            case "InvalidUrl", "InvalidService", "InvalidVersion", "InvalidOptions", "InvalidQuery", "InvalidValue",
                "NoMatch":
                throw LapseError(.invalidInput, subject, "the server rejected the request (\(code))" + suffix)
            default:
                throw LapseError(status == 429 ? .rateLimited : .other, subject, "the server answered \(code)" + suffix)
            }
        }
        guard let routes = json["routes"] as? [[String: Any]], let route = routes.first,
            let geometry = route["geometry"] as? String
        else {
            throw LapseError(.notFound, subject, "code Ok but no route geometry in the response")
        }
        let coordinates: [Coordinate]
        do { coordinates = try EncodedPolyline.decode(geometry, precision: 6) } catch let e as LapseError {
            throw LapseError(.invalidInput, subject, "route geometry: \(e.reason)")
        }
        guard !coordinates.isEmpty else { throw LapseError(.notFound, subject, "the route geometry is empty") }
        let distance = (route["distance"] as? NSNumber)?.doubleValue ?? 0
        return DirectionsResult(
            route: Route(coordinates: coordinates), reportedDistance: distance,
            provider: name, requestCount: 1)
    }

    /// Degrees with up to 7 decimals and no exponent.
    static func number(_ v: Double) -> String {
        var s = String(format: "%.7f", v)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }
}
