// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseNet

/// The `status` values of the Google Directions API (Directions API documentation, "DirectionsStatus").
public enum GoogleDirectionsStatus: String, Sendable, CaseIterable {
    case ok = "OK"
    case notFound = "NOT_FOUND"
    case zeroResults = "ZERO_RESULTS"
    case maxWaypointsExceeded = "MAX_WAYPOINTS_EXCEEDED"
    case maxRouteLengthExceeded = "MAX_ROUTE_LENGTH_EXCEEDED"
    case invalidRequest = "INVALID_REQUEST"
    case overDailyLimit = "OVER_DAILY_LIMIT"
    case overQueryLimit = "OVER_QUERY_LIMIT"
    case requestDenied = "REQUEST_DENIED"
    case unknownError = "UNKNOWN_ERROR"

    /// The error a status other than OK becomes: its own code and a reason naming the status.
    func error(subject: String, serviceMessage: String?) -> LapseError {
        let (code, reason): (LapseError.Code, String) =
            switch self {
            case .ok: (.other, "OK")
            case .notFound: (.notFound, "an origin, destination or waypoint could not be found (NOT_FOUND)")
            case .zeroResults: (.notFound, "no route between these points (ZERO_RESULTS)")
            case .maxWaypointsExceeded: (.invalidInput, "too many waypoints in one request (MAX_WAYPOINTS_EXCEEDED)")
            case .maxRouteLengthExceeded:
                (
                    .invalidInput,
                    "the route is too long for the service; add `via` points or split it (MAX_ROUTE_LENGTH_EXCEEDED)"
                )
            case .invalidRequest: (.invalidInput, "the service rejected the request as invalid (INVALID_REQUEST)")
            case .overDailyLimit:
                (
                    .rateLimited,
                    "the API key is invalid, billing is not enabled or a usage cap was reached (OVER_DAILY_LIMIT)"
                )
            case .overQueryLimit:
                (.rateLimited, "too many requests: the service's rate limit or quota was hit (OVER_QUERY_LIMIT)")
            case .requestDenied:
                (
                    .denied,
                    """
                    the service refused the request (REQUEST_DENIED); the Directions API is a legacy API that new \
                    Google Cloud projects cannot enable: use `provider` google (the Routes API) instead, or check \
                    the key
                    """
                )
            case .unknownError: (.network, "the service had an internal error; try again (UNKNOWN_ERROR)")
            }
        let detail = serviceMessage.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap {
            $0.isEmpty ? nil : $0
        }
        return LapseError(code, subject, reason + (detail.map { ": \($0)" } ?? ""))
    }
}

/// The legacy Google Directions API (`GET {base}/maps/api/directions/json`), `--provider google-directions`.
///
/// Legacy since 1 March 2025: projects created since cannot enable it and get `REQUEST_DENIED`; ``GoogleRoutes``
/// (the Routes API) is the default Google provider. Kept for keys of older projects.
/// - The geometry is the concatenation of every step's `polyline` (exact), not the route's `overview_polyline`
///   (smoothed and simplified); see ``GoogleRouteResponse``. Only when a response has no step polylines is the
///   overview used, with a warning.
/// - `OVER_QUERY_LIMIT` (in an HTTP 200) is retried with backoff like HTTP 429.
/// - At most ``maxIntermediateWaypoints`` intermediate waypoints go into one request; longer lists are split into
///   requests whose end points are shared (the last point of one is the first of the next), and the pieces are
///   joined without repeating the shared point.
/// - Every status other than OK becomes its own ``LapseError`` (see ``GoogleDirectionsStatus``).
/// - The key is sent as the `key` query parameter and never appears in errors: URLs are shown without their query
///   and the service's messages are scrubbed of it.
public struct GoogleDirections: DirectionsProvider {
    /// The legacy Directions API's root.
    public static let defaultBaseURL = URL(string: "https://maps.googleapis.com")!
    /// Google's limit of intermediate waypoints per request (Directions API usage limits).
    public static let maxIntermediateWaypoints = 25

    /// `google-directions`.
    public let name = "google-directions"
    private let apiKey: String
    private let baseURL: URL
    private let client: HTTPClient

    /// - Parameters:
    ///   - apiKey: a Google Maps Platform key with the Directions API enabled.
    ///   - baseURL: scheme, host and optional path prefix, for a stand-in server (default ``defaultBaseURL``).
    ///   - client: the HTTP client (default: the process's shared one, which retries 429 and 5xx with backoff).
    public init(apiKey: String, baseURL: URL = defaultBaseURL, client: HTTPClient = .shared) {
        self.apiKey = apiKey
        self.baseURL = baseURL
        self.client = client
    }

    /// Splits `points` (origin, waypoints…, destination) into consecutive runs with at most `maxIntermediate`
    /// points between their ends; each run starts where the previous one ended.
    public static func chunks(_ points: [Coordinate], maxIntermediate: Int = maxIntermediateWaypoints) -> [[Coordinate]]
    {
        waypointChunks(points, maxIntermediate: maxIntermediate)
    }

    /// The route of `request`, split into requests of at most ``maxIntermediateWaypoints`` waypoints.
    /// - Throws: as the type's documentation says (`.network`, `.invalidInput`, `.notFound`).
    public func route(_ request: DirectionsRequest) async throws -> DirectionsResult {
        try await chainedRoute(request.allPoints, maxIntermediate: Self.maxIntermediateWaypoints, provider: name) {
            piece in
            try await self.fetch(piece, mode: request.mode)
        }
    }

    func url(for points: [Coordinate], mode: TravelMode) -> URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        components.path = components.path.trimmingSuffix("/") + "/maps/api/directions/json"
        var items = [
            URLQueryItem(name: "origin", value: points[0].description),
            URLQueryItem(name: "destination", value: points[points.count - 1].description)
        ]
        if points.count > 2 {
            items.append(
                URLQueryItem(
                    name: "waypoints", value: points[1..<points.count - 1].map(\.description).joined(separator: "|")))
        }
        let googleMode = mode == .cycling ? "bicycling" : mode.rawValue
        items.append(URLQueryItem(name: "mode", value: googleMode))
        items.append(URLQueryItem(name: "key", value: apiKey))
        components.queryItems = items
        // '|' must be percent-encoded for some servers; URLComponents leaves it as is.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "|", with: "%7C")
        return components.url!
    }

    private func fetch(_ points: [Coordinate], mode: TravelMode) async throws -> GoogleRouteResponse.Parsed {
        let url = url(for: points, mode: mode)
        let subject = "Google Directions " + Redaction.url(url.absoluteString)
        let response = try await client.directionsGet(
            url, service: "Google Directions", hiding: apiKey,
            temporaryRefusal: Self.overQueryLimit)
        let data = response.body
        let status = response.status
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        guard let json = object else {
            if status != 200 { throw httpError(status, subject) }
            throw LapseError(.network, subject, "the response is not JSON")
        }
        let statusText = json["status"] as? String ?? ""
        let message = (json["error_message"] as? String).map { Redaction.message($0, hiding: [apiKey]) }
        guard let directionsStatus = GoogleDirectionsStatus(rawValue: statusText) else {
            if status != 200 { throw httpError(status, subject) }
            throw LapseError(.other, subject, "unexpected status '\(statusText)'" + (message.map { ": \($0)" } ?? ""))
        }
        guard directionsStatus == .ok else { throw directionsStatus.error(subject: subject, serviceMessage: message) }
        return try Self.parse(json, subject: subject)
    }

    private func httpError(_ status: Int, _ subject: String) -> LapseError {
        switch status {
        case 429: LapseError(.rateLimited, subject, "HTTP 429 too many requests")
        case 401, 403: LapseError(.denied, subject, "HTTP \(status) access denied")
        default: LapseError(.network, subject, "HTTP \(status)")
        }
    }

    /// The geometry and length of the first route of an OK response.
    static func parse(_ json: [String: Any], subject: String) throws -> GoogleRouteResponse.Parsed {
        do {
            return try GoogleRouteResponse.parseDirections(json)
        } catch var error as LapseError {
            error.subject = subject
            throw error
        }
    }

    /// `OVER_QUERY_LIMIT` in an answer (HTTP 200): a rate refusal to retry.
    @Sendable static func overQueryLimit(_ response: HTTPResponse) -> String? {
        guard response.status == 200, response.body.count < 4096,
            let json = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
            json["status"] as? String == GoogleDirectionsStatus.overQueryLimit.rawValue
        else { return nil }
        let message = (json["error_message"] as? String).map { ": " + $0 } ?? ""
        return "too many requests: the service's rate limit or quota was hit (OVER_QUERY_LIMIT)" + message
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        var s = self
        while s.hasSuffix(suffix) { s.removeLast(suffix.count) }
        return s
    }
}

extension GoogleDirections {
    /// The environment variable holding the key: `GOOGLE_MAPS_API_KEY`.
    public static let keyEnvironmentVariable = "GOOGLE_MAPS_API_KEY"

    /// The API key from `keyFile` (its first line, trimmed) when given, else from `GOOGLE_MAPS_API_KEY`.
    /// - Returns: `nil` when neither is set.
    /// - Throws: ``LapseError`` `.invalidInput` (subject: the key file) when the file is missing, unreadable or empty.
    public static func apiKey(keyFile url: URL?, environment: [String: String]) throws -> String? {
        if let url {
            let keyFile = url.filePath
            guard FileManager.default.fileExists(atPath: keyFile) else {
                throw LapseError(.invalidInput, keyFile, "no such key file")
            }
            guard let data = FileManager.default.contents(atPath: keyFile) else {
                throw LapseError(.invalidInput, keyFile, "the key file is not readable")
            }
            let key =
                String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first
                .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard !key.isEmpty else { throw LapseError(.invalidInput, keyFile, "the key file is empty") }
            return key
        }
        let key = environment[keyEnvironmentVariable]?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return key.isEmpty ? nil : key
    }
}
