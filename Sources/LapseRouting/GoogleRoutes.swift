// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseNet

/// The Google Routes API (`POST {base}/directions/v2:computeRoutes`), the default `--provider google`.
///
/// Protocol (Routes API reference, "Method: computeRoutes"): a JSON body with `origin`, `destination` and
/// `intermediates` as `{"location": {"latLng": {"latitude", "longitude"}}}` waypoints, `travelMode` (`DRIVE`, `WALK`,
/// `BICYCLE`), `polylineQuality: HIGH_QUALITY`, `polylineEncoding: ENCODED_POLYLINE`; the key in the
/// `X-Goog-Api-Key` header (never in the URL) and the response fields in `X-Goog-FieldMask`, which the API requires.
/// - Intermediate points are pass-through (`via: true`): the route goes through them without a stop, so no U-turn or
///   leg is made there. At most ``maxIntermediates`` go into one request; longer lists become chained requests whose
///   ends are shared, joined without repeating the shared point.
/// - The geometry is every step's polyline (see ``GoogleRouteResponse``); an answer `{}` means no route.
/// - Errors come from the HTTP status and `error.status` / `error.details[].reason` (``GoogleAPIError``): quota and
///   rate refusals are retried with backoff, then `.rateLimited`; a refused key or an API not enabled `.denied`
///   with what to do; `INVALID_ARGUMENT` `.invalidInput`. The key never appears in a message.
public struct GoogleRoutes: DirectionsProvider {
    /// The Routes API's root.
    public static let defaultBaseURL = URL(string: "https://routes.googleapis.com")!
    /// The Routes API's limit of intermediate waypoints per request.
    public static let maxIntermediates = 25
    /// The response fields asked for: length, duration, the polylines of the route and of every step, warnings.
    public static let fieldMask = [
        "routes.distanceMeters", "routes.duration", "routes.polyline.encodedPolyline",
        "routes.legs.steps.polyline.encodedPolyline", "routes.warnings"
    ].joined(separator: ",")

    /// `google`.
    public let name = "google"
    private let apiKey: String
    private let baseURL: URL
    private let client: HTTPClient

    /// - Parameters:
    ///   - apiKey: a Google Maps Platform key whose project has the Routes API enabled.
    ///   - baseURL: scheme, host and optional path prefix, for a stand-in server (default ``defaultBaseURL``).
    ///   - client: the HTTP client (default: the process's shared one).
    public init(apiKey: String, baseURL: URL = defaultBaseURL, client: HTTPClient = .shared) {
        self.apiKey = apiKey
        self.baseURL = baseURL
        self.client = client
    }

    /// The endpoint: `{base}/directions/v2:computeRoutes`.
    public var endpoint: URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        components.path = components.path.trimmingSuffix("/") + "/directions/v2:computeRoutes"
        return components.url!
    }

    /// The route of `request` (one request; the Routes API passes through its waypoints).
    /// - Throws: as the type's documentation says (`.network`, `.invalidInput`, `.notFound`).
    public func route(_ request: DirectionsRequest) async throws -> DirectionsResult {
        try await chainedRoute(request.allPoints, maxIntermediate: Self.maxIntermediates, provider: name) { piece in
            try await self.fetch(piece, mode: request.mode)
        }
    }

    // MARK: - Request

    struct Body: Encodable {
        struct LatLng: Encodable {
            var latitude: Double
            var longitude: Double
        }
        struct Location: Encodable { var latLng: LatLng }
        struct Waypoint: Encodable {
            var location: Location
            var via: Bool?
            init(_ c: Coordinate, via: Bool? = nil) {
                location = Location(latLng: LatLng(latitude: c.latitude, longitude: c.longitude))
                self.via = via
            }
        }
        var origin: Waypoint
        var destination: Waypoint
        var intermediates: [Waypoint]?
        var travelMode: String
        var polylineQuality = "HIGH_QUALITY"
        var polylineEncoding = "ENCODED_POLYLINE"
        var computeAlternativeRoutes = false
    }

    /// The `travelMode` of a mode.
    static func travelMode(_ mode: TravelMode) -> String {
        switch mode {
        case .driving: "DRIVE"
        case .walking: "WALK"
        case .cycling: "BICYCLE"
        }
    }

    /// The JSON body for `points` (origin, pass-through points…, destination).
    static func body(_ points: [Coordinate], mode: TravelMode) throws -> Data {
        let inner = points.dropFirst().dropLast().map { Body.Waypoint($0, via: true) }
        let body = Body(
            origin: .init(points[0]), destination: .init(points[points.count - 1]),
            intermediates: inner.isEmpty ? nil : Array(inner), travelMode: travelMode(mode))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(body)
    }

    private func fetch(_ points: [Coordinate], mode: TravelMode) async throws -> GoogleRouteResponse.Parsed {
        let url = endpoint
        let subject = "Google Routes API " + client.subject(url)
        let response: HTTPResponse
        do {
            response = try await client.post(
                url, json: try Self.body(points, mode: mode),
                headers: ["X-Goog-Api-Key": apiKey, "X-Goog-FieldMask": Self.fieldMask],
                temporaryRefusal: GoogleAPIError.temporaryRefusal, maxBodyBytes: 16 << 20)
        } catch var error as LapseError {
            error.subject = subject
            error.reason = Redaction.message(error.reason, hiding: [apiKey])
            throw error
        }
        guard response.isSuccess else { throw Self.error(response, subject: subject, hiding: apiKey) }
        guard let json = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any] else {
            throw LapseError(.invalidInput, subject, "the answer is not a JSON object")
        }
        do { return try GoogleRouteResponse.parseRoutes(json) } catch var error as LapseError {
            error.subject = subject
            throw error
        }
    }

    /// The error of a non-2xx answer, with what the user can do about it.
    static func error(_ response: HTTPResponse, subject: String, hiding key: String) -> LapseError {
        let google = GoogleAPIError(response)
        let summary = Redaction.message(google?.summary ?? "HTTP \(response.status)", hiding: [key])
        if google?.isQuotaOrRate == true || response.status == 429 {
            return LapseError(
                .rateLimited, subject, "\(summary); the project's Routes API quota or rate limit was reached")
        }
        if let google,
            google.reasons.contains("SERVICE_DISABLED")
                || (google.message ?? "").contains("has not been used in project")
                || (google.message ?? "").contains("is disabled")
        {
            return LapseError(
                .denied, subject,
                """
                the Routes API is not enabled for this key's project: enable \"Routes API\" in the Google Cloud \
                console (APIs & Services → Library) (\(summary))
                """
            )
        }
        if google?.isKeyOrPermission == true || response.status == 401 || response.status == 403 {
            return LapseError(
                .denied, subject,
                """
                the API key was refused: check it, its restrictions and that the project has the Routes API \
                enabled (\(summary))
                """
            )
        }
        if response.status == 404 { return LapseError(.notFound, subject, summary) }
        if response.status == 400 {
            return LapseError(.invalidInput, subject, "the service rejected the request (\(summary))")
        }
        return LapseError(.network, subject, summary)
    }
}
