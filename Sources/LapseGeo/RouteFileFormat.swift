// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

/// The route file formats Lapse reads (and, for GPX and GeoJSON, writes).
public enum RouteFileFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    /// GPX 1.0 or 1.1: `trk`/`trkseg`/`trkpt` (all segments of all tracks, joined) or, when there is no track,
    /// `rte`/`rtept`. Elevation (`ele`) and `time` are kept.
    case gpx
    /// GeoJSON (RFC 7946): LineString, MultiLineString, Feature, FeatureCollection, GeometryCollection;
    /// positions `[longitude, latitude, elevation?]`; times from `properties.coordTimes` when present.
    case geojson
    /// KML 2.2: the `coordinates` (`lon,lat[,alt]` tuples) of every `LineString`, in document order.
    case kml
    /// Plain text: one `latitude,longitude[,elevation]` per line; blank lines and lines starting with `#` skipped.
    case lines
    /// One encoded polyline string at precision 5 (Google).
    case polyline
    /// One encoded polyline string at precision 6 (OSRM, Valhalla).
    case polyline6
    /// A saved answer of the legacy Google Directions API (JSON; see ``GoogleRouteResponse``). A `.json` file
    /// holding one is recognised by its content.
    case googleDirections = "google-directions"
    /// A saved answer of the Google Routes API `computeRoutes` (JSON; see ``GoogleRouteResponse``). A `.json` file
    /// holding one is recognised by its content.
    case googleRoutes = "google-routes"

    /// The format's name, as `--input-format` takes it.
    public var description: String { rawValue }

    /// Whether Lapse can write this format.
    public var isWritable: Bool { self == .gpx || self == .geojson }

    /// The format a file's extension names: `.gpx`, `.geojson`/`.json`, `.kml`, `.txt`/`.csv`,
    /// `.polyline`/`.polyline5`, `.polyline6`; `nil` for anything else.
    public init?(file url: URL) {
        switch url.pathExtension.lowercased() {
        case "gpx": self = .gpx
        case "geojson", "json": self = .geojson
        case "kml": self = .kml
        case "txt", "csv": self = .lines
        case "polyline", "polyline5": self = .polyline
        case "polyline6": self = .polyline6
        default: return nil
        }
    }

    /// Guesses the format from the first bytes of a file: XML with a `gpx` or `kml` root, a JSON object,
    /// text starting with a number (lines), or otherwise an encoded polyline (precision 5).
    public init?(sniffing head: Data) {
        let text = String(decoding: head.prefix(4096), as: UTF8.self)
        let trimmed = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
        guard let first = trimmed.first else { return nil }
        switch first {
        case "<":
            if text.range(of: "<gpx", options: .caseInsensitive) != nil {
                self = .gpx
            } else if text.range(of: "<kml", options: .caseInsensitive) != nil {
                self = .kml
            } else {
                return nil
            }
        case "{": self = .geojson
        case "0"..."9", "-", "+", ".", "#": self = .lines
        default:
            guard let ascii = first.asciiValue, (63...126).contains(ascii) else { return nil }
            self = .polyline
        }
    }
}
