// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseNet

/// The directions services Lapse can ask.
public enum DirectionsService: String, Sendable, CaseIterable, Codable {
    /// The Google Routes API (``GoogleRoutes``): what a Google Cloud project can enable today.
    case google
    /// The legacy Google Directions API (``GoogleDirections``), for keys of projects that still have it.
    case googleDirections = "google-directions"
    /// An OSRM server (``OSRMDirections``); the default is the OSRM demo server (car profile only).
    case osrm
}

/// How to reach the directions services: which one, its key and base URLs.
///
/// Environment variables fill in what is not given: `GOOGLE_MAPS_API_KEY`, `LAPSE_GOOGLE_ROUTES_URL` (Routes API),
/// `LAPSE_GOOGLE_DIRECTIONS_URL` (legacy Directions API), `LAPSE_OSRM_URL`.
public struct DirectionsConfiguration: Sendable {
    /// Which directions service plans routes.
    public var service: DirectionsService
    /// A file whose first line is the Google Maps API key (else `GOOGLE_MAPS_API_KEY`).
    public var keyFile: URL?
    /// The base URL of the Google service used: the Routes API (else `LAPSE_GOOGLE_ROUTES_URL`, else
    /// ``GoogleRoutes/defaultBaseURL``) or, for `.googleDirections`, the legacy Directions API (else
    /// `LAPSE_GOOGLE_DIRECTIONS_URL`, else ``GoogleDirections/defaultBaseURL``).
    public var googleBaseURL: String?
    /// OSRM server (else `LAPSE_OSRM_URL`, else ``OSRMDirections/defaultBaseURL``).
    public var osrmBaseURL: String?
    /// Where keys and base URLs not set here are read (`GOOGLE_MAPS_API_KEY`, `LAPSE_*_URL`); empty by default.
    public var environment: [String: String]
    /// The HTTP client the requests go through.
    public var client: HTTPClient

    /// A configuration of `service` with the given key file, base URLs, environment and client (see the properties).
    public init(
        service: DirectionsService = .google, keyFile: URL? = nil, googleBaseURL: String? = nil,
        osrmBaseURL: String? = nil, environment: [String: String] = [:],
        client: HTTPClient = .shared
    ) {
        self.service = service
        self.keyFile = keyFile
        self.googleBaseURL = googleBaseURL
        self.osrmBaseURL = osrmBaseURL
        self.environment = environment
        self.client = client
    }

    /// The configured provider.
    /// - Throws: ``LapseError`` `.usage` when a base URL is not an http(s) URL or Google has no key;
    ///   `.invalidInput` when the key file cannot be read.
    public func provider() throws -> any DirectionsProvider {
        switch service {
        case .osrm:
            let url = try Self.serviceURL(osrmBaseURL ?? environment["LAPSE_OSRM_URL"], option: "`osrmBaseURL`")
            return OSRMDirections(baseURL: url ?? OSRMDirections.defaultBaseURL, client: client)
        case .google, .googleDirections:
            let legacy = service == .googleDirections
            let variable = legacy ? "LAPSE_GOOGLE_DIRECTIONS_URL" : "LAPSE_GOOGLE_ROUTES_URL"
            let url = try Self.serviceURL(googleBaseURL ?? environment[variable], option: "`googleBaseURL`")
            guard let key = try GoogleDirections.apiKey(keyFile: keyFile, environment: environment) else {
                throw LapseError.usage(
                    """
                    no Google Maps API key: set \(GoogleDirections.keyEnvironmentVariable), give `keyFile` FILE, \
                    or use `provider` osrm
                    """
                )
            }
            if legacy {
                return GoogleDirections(apiKey: key, baseURL: url ?? GoogleDirections.defaultBaseURL, client: client)
            }
            return GoogleRoutes(apiKey: key, baseURL: url ?? GoogleRoutes.defaultBaseURL, client: client)
        }
    }

    /// `text` as a base URL: http or https with a host.
    /// - Throws: ``LapseError`` `.usage` naming `option` otherwise.
    public static func serviceURL(_ text: String?, option: String) throws -> URL? {
        guard let text, !text.isEmpty else { return nil }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else {
            throw LapseError.usage(
                "\(option) takes an http(s) URL such as http://localhost:5000, not '\(Redaction.url(text))'")
        }
        return url
    }
}

/// Where a route comes from: a file, or a directions service asked for a request.
public enum RouteSource: Sendable {
    /// A route file; `format` `nil` means detect it (see ``RouteFile/read(_:format:)``).
    case file(URL, format: RouteFileFormat? = nil)
    /// A directions request.
    case directions(DirectionsRequest)

    /// A route with where it came from.
    public struct Loaded: Sendable {
        /// The route read or planned.
        public var route: Route
        /// `"file"` or the service's name.
        public var provider: String
        /// HTTP requests made (0 for files).
        public var requestCount: Int
        /// The route's length as the service reported it, in metres (`nil` for files).
        public var reportedDistance: Double?
        /// Things to tell the user.
        public var warnings: [String]
    }

    /// Reads the file or asks the service.
    /// - Throws: ``LapseError`` from ``RouteFile/read(_:format:)``, ``DirectionsConfiguration/provider()`` or the
    ///   provider's ``DirectionsProvider/route(_:)``.
    public func load(_ configuration: DirectionsConfiguration = DirectionsConfiguration()) async throws -> Loaded {
        switch self {
        case .file(let path, let format):
            return Loaded(
                route: try RouteFile.read(path, format: format), provider: "file", requestCount: 0,
                reportedDistance: nil, warnings: [])
        case .directions(let request):
            let result = try await configuration.provider().route(request)
            return Loaded(
                route: result.route, provider: result.provider, requestCount: result.requestCount,
                reportedDistance: result.reportedDistance, warnings: result.warnings)
        }
    }
}
