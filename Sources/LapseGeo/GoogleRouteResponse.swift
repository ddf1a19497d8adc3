// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

/// The road geometry of a Google directions answer: what the services send, and what users save to a file.
///
/// Two formats (detected by ``kind(of:)``):
/// - the legacy **Directions API** (`GET /maps/api/directions/json`): `{"status": "OK", "routes": [{"legs":
///   [{"distance": {"value": m}, "steps": [{"polyline": {"points": "…"}}]}], "overview_polyline": {"points"}}]}`;
/// - the **Routes API** (`POST /directions/v2:computeRoutes`): `{"routes": [{"distanceMeters": m, "polyline":
///   {"encodedPolyline": "…"}, "legs": [{"steps": [{"polyline": {"encodedPolyline": "…"}}]}]}]}`; `{}` when there is
///   no route.
///
/// The geometry is every step's polyline joined (exact, precision 5), not the route's overview polyline (smoothed
/// and simplified in the legacy API, coarser than the steps in the Routes API); only when the answer has no step
/// polylines is the overview used, with a warning. The first route is read; alternatives are ignored.
/// Errors are ``LapseError`` `.invalidInput` or `.notFound` without a subject (the caller names the file or URL).
public enum GoogleRouteResponse {
    /// Which API's JSON an answer is.
    public enum Kind: String, Sendable {
        /// The legacy Directions API's JSON.
        case directions
        /// The Routes API's JSON.
        case routes
    }

    /// A route read from an answer.
    public struct Parsed: Sendable, Equatable {
        /// The route's points (degrees), from its steps' polylines (the overview's when it has none).
        public var coordinates: [Coordinate]
        /// The route's length as the answer states it, in metres (0 when it states none).
        public var distance: Double
        /// The service's warnings, and ours (an overview used for want of steps).
        public var warnings: [String]
    }

    /// Which format `root` (a parsed JSON object) is: legacy when it has a `status` or `overview_polyline`/`legs`
    /// with `points`, Routes when it has `routes` with `distanceMeters`/`encodedPolyline`, or is `{}`; `nil` for
    /// anything else (e.g. GeoJSON).
    public static func kind(of root: [String: Any]) -> Kind? {
        if root["type"] != nil { return nil }
        if root["status"] is String || root["geocoded_waypoints"] != nil { return .directions }
        guard let routes = root["routes"] as? [[String: Any]] else { return root.isEmpty ? .routes : nil }
        guard let first = routes.first else { return root["status"] == nil ? .routes : .directions }
        if first["overview_polyline"] != nil || first["bounds"] != nil || first["summary"] != nil { return .directions }
        if first["distanceMeters"] != nil || first["polyline"] != nil || first["duration"] is String { return .routes }
        let step = ((first["legs"] as? [[String: Any]])?.first?["steps"] as? [[String: Any]])?.first
        if let polyline = step?["polyline"] as? [String: Any] {
            return polyline["encodedPolyline"] != nil ? .routes : .directions
        }
        return nil
    }

    /// Reads either format. A legacy answer whose `status` is not OK is an error naming the status.
    /// - Throws: ``LapseError`` `.notFound` (no route), `.invalidInput` (malformed polylines, not an answer).
    public static func parse(_ root: [String: Any]) throws -> Parsed {
        switch kind(of: root) {
        case .directions: return try parseDirectionsAnswer(root)
        case .routes: return try parseRoutes(root)
        case nil: throw LapseError(.invalidInput, nil, "not a Google Directions or Routes API answer")
        }
    }

    /// A legacy Directions answer whatever its status: an error naming the status unless it is OK.
    public static func parseDirectionsAnswer(_ root: [String: Any]) throws -> Parsed {
        let status = root["status"] as? String ?? "OK"
        guard status == "OK" else {
            let message = (root["error_message"] as? String).map { ": " + $0 } ?? ""
            throw LapseError(
                status == "ZERO_RESULTS" || status == "NOT_FOUND" ? .notFound : .invalidInput, nil,
                "the Directions answer has status \(status), no route\(message)")
        }
        return try parseDirections(root)
    }

    /// The first route of a legacy Directions answer with status OK.
    public static func parseDirections(_ root: [String: Any]) throws -> Parsed {
        guard let routes = root["routes"] as? [[String: Any]], let route = routes.first else {
            throw LapseError(.notFound, nil, "status OK but no routes in the answer")
        }
        var distance = 0.0
        var steps: [String?] = []
        let legs = route["legs"] as? [[String: Any]] ?? []
        for leg in legs {
            distance += ((leg["distance"] as? [String: Any])?["value"] as? NSNumber)?.doubleValue ?? 0
            let legSteps = leg["steps"] as? [[String: Any]] ?? []
            steps +=
                legSteps.isEmpty ? [nil] : legSteps.map { ($0["polyline"] as? [String: Any])?["points"] as? String }
        }
        if legs.isEmpty { steps = [nil] }
        let overview = (route["overview_polyline"] as? [String: Any])?["points"] as? String
        return try assemble(
            steps: steps, overview: overview, distance: distance,
            warnings: route["warnings"] as? [String] ?? [])
    }

    /// The first route of a Routes API answer.
    public static func parseRoutes(_ root: [String: Any]) throws -> Parsed {
        guard let routes = root["routes"] as? [[String: Any]], let route = routes.first else {
            throw LapseError(.notFound, nil, "no route between these points (the Routes API answered no routes)")
        }
        var steps: [String?] = []
        let legs = route["legs"] as? [[String: Any]] ?? []
        for leg in legs {
            let legSteps = leg["steps"] as? [[String: Any]] ?? []
            // A step without a polyline is a zero-length manoeuvre; a leg without steps leaves only the overview.
            if legSteps.isEmpty { steps.append(nil) }
            for step in legSteps {
                if let encoded = (step["polyline"] as? [String: Any])?["encodedPolyline"] as? String {
                    steps.append(encoded)
                }
            }
        }
        if legs.isEmpty || steps.isEmpty { steps = [nil] }
        let overview = (route["polyline"] as? [String: Any])?["encodedPolyline"] as? String
        let distance = (route["distanceMeters"] as? NSNumber)?.doubleValue ?? 0
        let warnings = route["warnings"] as? [String] ?? []
        return try assemble(steps: steps, overview: overview, distance: distance, warnings: warnings)
    }

    /// Joins the step polylines, or falls back to the overview when any step has none.
    private static func assemble(steps: [String?], overview: String?, distance: Double, warnings: [String]) throws
        -> Parsed
    {
        var warnings = warnings
        if steps.contains(where: { $0 == nil }) {
            guard let overview else {
                throw LapseError(.invalidInput, nil, "the route has neither step polylines nor an overview polyline")
            }
            do {
                let coordinates = try EncodedPolyline.decode(overview, precision: 5)
                warnings.append("the answer has no step polylines; using the route's overview polyline (smoothed)")
                return Parsed(coordinates: coordinates, distance: distance, warnings: warnings)
            } catch let e as LapseError {
                throw LapseError(.invalidInput, nil, "overview polyline: \(e.reason)")
            }
        }
        var pieces: [[Coordinate]] = []
        for (s, encoded) in steps.enumerated() {
            do { pieces.append(try EncodedPolyline.decode(encoded!, precision: 5)) } catch let e as LapseError {
                throw LapseError(.invalidInput, nil, "step \(s + 1): \(e.reason)")
            }
        }
        return Parsed(coordinates: joinedWithoutRepeats(pieces), distance: distance, warnings: warnings)
    }

    /// Joins pieces, dropping a piece's first point when it repeats the previous piece's last point.
    public static func joinedWithoutRepeats(_ pieces: [[Coordinate]]) -> [Coordinate] {
        var result: [Coordinate] = []
        for piece in pieces {
            var rest = piece[...]
            if let last = result.last, let first = rest.first, last == first { rest = rest.dropFirst() }
            result += rest
        }
        return result
    }
}
