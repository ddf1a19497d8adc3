// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

/// Reading and writing route files.
///
/// Every error is a ``LapseError`` whose subject is the file's path and whose reason names the problem
/// (and the line or point where it was found), e.g. `track.gpx: XML ends early (truncated?) at line 812`.
public enum RouteFile {
    /// The formats read, as messages list them.
    static let formats =
        "route files are GPX, GeoJSON, KML, a saved Google Routes or Directions answer, lat,lng lines or an encoded "
        + "polyline"

    /// Reads a route from a file.
    /// - Parameters:
    ///   - url: the file.
    ///   - format: the format; `nil` picks it from the extension, or failing that from the content.
    /// - Returns: a route with at least one point.
    /// - Throws: ``LapseError`` `.invalidInput` (subject the file's path) when the file cannot be read, is
    ///   malformed, holds a coordinate out of range, or holds no points.
    public static func read(_ url: URL, format: RouteFileFormat? = nil) throws -> Route {
        let path = url.filePath
        guard FileManager.default.isReadableFile(atPath: path) else {
            let exists = FileManager.default.fileExists(atPath: path)
            throw LapseError(.invalidInput, path, exists ? "file is not readable" : "no such file")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
        if size == 0 { throw LapseError(.invalidInput, path, "the file is empty") }
        let resolved: RouteFileFormat
        if let format {
            resolved = format
        } else if let byName = RouteFileFormat(file: url) {
            resolved = byName
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw LapseError(.invalidInput, path, "cannot open")
            }
            let head = (try? handle.read(upToCount: 4096)) ?? Data()
            try? handle.close()
            guard let sniffed = RouteFileFormat(sniffing: head) else {
                throw LapseError(
                    .invalidInput, path,
                    head.isEmpty
                        ? "the file is empty"
                        : "not a route file (GPX, GeoJSON, KML, lat,lng lines or an encoded polyline)")
            }
            resolved = sniffed
        }
        let route: Route
        do {
            switch resolved {
            case .gpx: route = try GPXReader.read(path: path)
            case .kml: route = try KMLReader.read(path: path)
            case .geojson:
                // A `.json` file may be a saved Google answer rather than GeoJSON: recognised by its content.
                let data = try contents(path)
                let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
                if let root, GoogleRouteResponse.kind(of: root) != nil {
                    route = Route(coordinates: try GoogleRouteResponse.parse(root).coordinates)
                } else if let root, !(root["type"] is String) {
                    // JSON, but neither GeoJSON nor a route answer: say what it is not, and what would do.
                    if let error = root["error"] as? [String: Any] {
                        let said = [error["status"], error["message"]].compactMap { $0 as? String }
                        throw LapseError(
                            .invalidInput, nil,
                            "a saved error answer (\(said.joined(separator: ": ").prefix(200))), not a route; "
                                + Self.formats)
                    }
                    throw LapseError(
                        .invalidInput, nil, "JSON that is not a route (no GeoJSON \"type\"); " + Self.formats)
                } else {
                    route = try GeoJSONReader.read(data: data)
                }
            case .googleDirections, .googleRoutes:
                let data = try contents(path)
                guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                    throw LapseError(.invalidInput, nil, "not a JSON object")
                }
                let parsed =
                    resolved == .googleDirections
                    ? try GoogleRouteResponse.parseDirectionsAnswer(root)
                    : try GoogleRouteResponse.parseRoutes(root)
                route = Route(coordinates: parsed.coordinates)
            case .lines: route = try LinesReader.read(text: String(decoding: try contents(path), as: UTF8.self))
            case .polyline, .polyline6:
                let text = String(decoding: try contents(path), as: UTF8.self)
                route = Route(coordinates: try EncodedPolyline.decode(text, precision: resolved == .polyline6 ? 6 : 5))
            }
        } catch var error as LapseError {
            if error.subject == nil { error.subject = path }
            throw error
        }
        guard !route.points.isEmpty else {
            throw LapseError(.invalidInput, path, "no route points in this \(resolved.rawValue) file")
        }
        return route
    }

    /// Writes a route as GPX 1.1 (one track, one segment, with `ele`/`time` when known) or as a GeoJSON Feature
    /// (a LineString; `properties.name`, and `properties.coordTimes` when every point has a time).
    /// Coordinates are written with 7 decimals (about 1 cm), elevations with 2. The file is written to a
    /// temporary path and moved into place only when complete.
    /// - Parameters:
    ///   - route: the route to write.
    ///   - url: the file to write.
    ///   - format: `.gpx` or `.geojson`; `nil` picks it from the extension.
    ///   - overwrite: replace an existing file.
    /// - Throws: ``LapseError`` `.usage` for a format Lapse cannot write; `.output` when the file cannot be written.
    public static func write(_ route: Route, to url: URL, format: RouteFileFormat? = nil, overwrite: Bool = false)
        throws
    {
        let path = url.filePath
        guard let format = format ?? RouteFileFormat(file: url), format.isWritable else {
            throw LapseError(.usage, path, "route files are written as .gpx or .geojson")
        }
        let output = try AtomicOutput(url: url, overwrite: overwrite)
        do {
            try output.write(Data())
            guard let handle = try? FileHandle(forWritingTo: output.temporaryURL) else {
                throw LapseError(.output, path, "cannot create the file")
            }
            var writer = ChunkedWriter(handle: handle, path: path)
            switch format {
            case .gpx: try RouteWriter.gpx(route, into: &writer)
            default: try RouteWriter.geojson(route, into: &writer)
            }
            try writer.finish()
            try output.commit()
        } catch {
            output.discard()
            throw error
        }
    }

    private static func contents(_ path: String) throws -> Data {
        do { return try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw LapseError(.invalidInput, path, "cannot read: \(error.localizedDescription)")
        }
    }
}

extension Route {
    /// A route through resampled points (keeping their elevation and time).
    public init(_ resampled: [RoutePoint], name: String? = nil) {
        self.init(
            points: resampled.map {
                TrackPoint($0.coordinate, elevation: $0.elevation, time: $0.time, heading: $0.heading)
            },
            name: name)
    }
}

/// Buffers text and writes it to a file handle in 64 KiB chunks.
struct ChunkedWriter {
    let handle: FileHandle
    let path: String
    private var buffer: [UInt8] = []

    init(handle: FileHandle, path: String) {
        self.handle = handle
        self.path = path
        buffer.reserveCapacity(1 << 16)
    }

    mutating func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { try flush() }
    }

    mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        do { try handle.write(contentsOf: buffer) } catch {
            throw LapseError(.output, path, "cannot write: \(error.localizedDescription)")
        }
        buffer.removeAll(keepingCapacity: true)
    }

    mutating func finish() throws {
        try flush()
        do {
            try handle.synchronize()
            try handle.close()
        } catch {
            throw LapseError(.output, path, "cannot finish writing: \(error.localizedDescription)")
        }
    }
}
