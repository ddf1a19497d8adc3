// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

/// Reads the line geometries of a GeoJSON document (RFC 7946), joined in document order:
/// LineString and MultiLineString, directly or inside Feature, FeatureCollection and GeometryCollection.
/// Point geometries are not part of a path and are skipped. Positions are `[longitude, latitude, elevation?]`.
/// A Feature's `properties.coordTimes` (ISO 8601 strings, one per position, as togeojson writes them) gives times.
/// Errors have no subject (``RouteFile`` adds the path).
enum GeoJSONReader {
    static func read(data: Data) throws -> Route {
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: data) } catch {
            throw LapseError(.invalidInput, nil, "not valid JSON" + jsonErrorDetail(error))
        }
        guard let root = object as? [String: Any] else {
            throw LapseError(.invalidInput, nil, "GeoJSON must be a JSON object")
        }
        guard root["type"] is String else { throw LapseError(.invalidInput, nil, "GeoJSON object without \"type\"") }
        var reader = Walker()
        try reader.visit(root, times: nil)
        guard reader.sawLine else {
            throw LapseError(.invalidInput, nil, "no LineString or MultiLineString coordinates in the GeoJSON")
        }
        var route = Route(points: reader.points, name: reader.name)
        route.notice = reader.notice
        route.retrieved = reader.retrieved
        route.copyright = reader.copyright
        return route
    }

    private static func jsonErrorDetail(_ error: any Error) -> String {
        let ns = error as NSError
        if let d = ns.userInfo["NSDebugDescription"] as? String { return ": " + d }
        return ""
    }

    private struct Walker {
        var points: [TrackPoint] = []
        var name: String?
        /// The first Feature's `properties.notice`, `retrieved` and `copyright` (as ``RouteFile`` writes them).
        var notice: String?
        var retrieved: Date?
        var copyright: String?
        var sawLine = false
        var lineIndex = 0

        mutating func visit(_ object: [String: Any], times: [Any]?) throws {
            guard let type = object["type"] as? String else {
                throw LapseError(.invalidInput, nil, "GeoJSON object without \"type\"")
            }
            switch type {
            case "FeatureCollection":
                guard let features = object["features"] as? [Any] else {
                    throw LapseError(.invalidInput, nil, "FeatureCollection without a \"features\" array")
                }
                for f in features {
                    guard let f = f as? [String: Any] else {
                        throw LapseError(.invalidInput, nil, "a feature is not an object")
                    }
                    try visit(f, times: nil)
                }
            case "Feature":
                let properties = object["properties"] as? [String: Any]
                if name == nil, let n = properties?["name"] as? String { name = n }
                if notice == nil, let n = properties?["notice"] as? String { notice = n }
                if retrieved == nil, let r = properties?["retrieved"] as? String { retrieved = ISO8601.parse(r) }
                if copyright == nil, let c = properties?["copyright"] as? String, !c.isEmpty { copyright = c }
                if let geometry = object["geometry"] as? [String: Any] {
                    try visit(geometry, times: properties?["coordTimes"] as? [Any])
                } else if !(object["geometry"] is NSNull) && object["geometry"] != nil {
                    throw LapseError(.invalidInput, nil, "Feature geometry is not an object")
                }
            case "GeometryCollection":
                guard let geometries = object["geometries"] as? [Any] else {
                    throw LapseError(.invalidInput, nil, "GeometryCollection without a \"geometries\" array")
                }
                for g in geometries {
                    guard let g = g as? [String: Any] else {
                        throw LapseError(.invalidInput, nil, "a geometry is not an object")
                    }
                    try visit(g, times: nil)
                }
            case "LineString":
                guard let coordinates = object["coordinates"] as? [Any] else {
                    throw LapseError(.invalidInput, nil, "LineString without coordinates")
                }
                try addLine(coordinates, times: times)
            case "MultiLineString":
                guard let lines = object["coordinates"] as? [Any] else {
                    throw LapseError(.invalidInput, nil, "MultiLineString without coordinates")
                }
                for (k, line) in lines.enumerated() {
                    guard let line = line as? [Any] else {
                        throw LapseError(
                            .invalidInput, nil, "MultiLineString line \(k + 1) is not an array of positions")
                    }
                    try addLine(line, times: (times?[safe: k]) as? [Any])
                }
            case "Point", "MultiPoint", "Polygon", "MultiPolygon":
                break
            default:
                throw LapseError(.invalidInput, nil, "unknown GeoJSON type \"\(type)\"")
            }
        }

        mutating func addLine(_ positions: [Any], times: [Any]?) throws {
            lineIndex += 1
            guard !positions.isEmpty else {
                throw LapseError(.invalidInput, nil, "line \(lineIndex) has no coordinates")
            }
            sawLine = true
            let useTimes = times?.count == positions.count ? times : nil
            for (k, p) in positions.enumerated() {
                guard let values = p as? [Any], values.count >= 2,
                    let lon = (values[0] as? NSNumber)?.doubleValue, let lat = (values[1] as? NSNumber)?.doubleValue
                else {
                    throw LapseError(
                        .invalidInput, nil, "position \(k + 1) of line \(lineIndex) is not [longitude, latitude]")
                }
                let coordinate: Coordinate
                do { coordinate = try Coordinate(latitude: lat, longitude: lon) } catch let e as LapseError {
                    throw LapseError(.invalidInput, nil, "position \(k + 1) of line \(lineIndex): \(e.reason)")
                }
                let elevation = values.count >= 3 ? (values[2] as? NSNumber)?.doubleValue : nil
                let time = (useTimes?[k] as? String).flatMap(ISO8601.parse)
                points.append(TrackPoint(coordinate, elevation: elevation, time: time))
            }
        }
    }
}

extension Array {
    fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}

/// Plain text routes: one `latitude,longitude[,elevation]` per line.
enum LinesReader {
    static func read(text: String) throws -> Route {
        var points: [TrackPoint] = []
        var lineNumber = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = raw.trimmedASCII
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmedASCII }
            guard parts.count == 2 || parts.count == 3, let lat = NumberText.decimal(parts[0]),
                let lng = NumberText.decimal(parts[1])
            else {
                throw LapseError(
                    .invalidInput, nil, "line \(lineNumber) is '\(line.prefix(60))', not latitude,longitude")
            }
            do {
                points.append(
                    TrackPoint(
                        try Coordinate(latitude: lat, longitude: lng),
                        elevation: parts.count == 3 ? NumberText.decimal(parts[2]) : nil))
            } catch let e as LapseError {
                throw LapseError(.invalidInput, nil, "line \(lineNumber): \(e.reason)")
            }
        }
        return Route(points: points)
    }
}
