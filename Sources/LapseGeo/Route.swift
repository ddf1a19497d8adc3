// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// One recorded or planned point of a route: where, and optionally at what height and when.
public struct TrackPoint: Hashable, Sendable, Codable {
    /// Where the point is.
    public var coordinate: Coordinate
    /// Metres above mean sea level (GPX `ele`, GeoJSON/KML third value), when known.
    public var elevation: Double?
    /// When the point was recorded (GPX `time`), when known.
    public var time: Date?
    /// Direction of travel, degrees clockwise from true north in [0, 360), when known (a resampled route's
    /// smoothed heading, written with the route: GPX `gpxtpx:course`, GeoJSON `properties.headings`).
    public var heading: Double?

    /// A point at `coordinate`, with its elevation (metres), time and heading (degrees clockwise from north)
    /// where known.
    public init(_ coordinate: Coordinate, elevation: Double? = nil, time: Date? = nil, heading: Double? = nil) {
        self.coordinate = coordinate
        self.elevation = elevation
        self.time = time
        self.heading = heading
    }
}

/// A route as a path of points in travel order, as read from a file or returned by a directions service.
///
/// Segments between consecutive points are great-circle arcs. Repeated points are allowed (they have zero
/// length). Use ``resampled(every:smoothing:)`` to get evenly spaced ``RoutePoint``s with headings.
public struct Route: Hashable, Sendable, Codable {
    /// The path's points in travel order (possibly empty; readers never return an empty route).
    public var points: [TrackPoint]
    /// A name from the source (GPX `name`, GeoJSON `properties.name`, KML `Placemark/name`), if any.
    public var name: String?
    /// When the route was asked of a directions service, and what its terms say about keeping it: written by
    /// ``RouteFile/write(_:to:format:overwrite:)`` (GPX `metadata/time` and `metadata/desc`, GeoJSON
    /// `properties.retrieved` and `properties.notice`, and read back from them).
    public var retrieved: Date?
    /// What the directions service's terms say about keeping the route (see ``retrieved``); nil for a route from
    /// a file.
    public var notice: String?
    /// Who holds the rights in the route's data, when a service's terms name one: ``googleCopyright`` for a route
    /// from Google's Routes or Directions API (its terms then say how it may be shown: on a Google map or on none).
    /// Written and read back as GPX `metadata/copyright/@author` and GeoJSON `properties.copyright`.
    public var copyright: String?

    /// ``copyright`` of a route planned by Google Maps Platform.
    public static let googleCopyright = "Google"

    /// Whether the route came from Google Maps Platform (``copyright`` is ``googleCopyright``).
    public var isGoogles: Bool { copyright == Self.googleCopyright }

    /// A route through `points`, named `name` where the file named it.
    public init(points: [TrackPoint], name: String? = nil) {
        self.points = points
        self.name = name
    }

    /// A route through `coordinates` (no elevations, times or headings), named `name`.
    public init(coordinates: [Coordinate], name: String? = nil) {
        self.init(points: coordinates.map { TrackPoint($0) }, name: name)
    }

    /// The points' coordinates, in order.
    public var coordinates: [Coordinate] { points.map(\.coordinate) }

    /// True when the route has no points.
    public var isEmpty: Bool { points.isEmpty }

    /// Length of the path in metres: the sum of the haversine distances between consecutive points.
    public var length: Double {
        var total = 0.0
        var previous: Coordinate?
        for p in points {
            if let previous { total += previous.distance(to: p.coordinate) }
            previous = p.coordinate
        }
        return total
    }

    /// Appends `other`, leaving out its first point when it equals this route's last point (a shared seam).
    public mutating func append(_ other: Route) {
        var rest = other.points[...]
        if let last = points.last, let first = rest.first, last.coordinate == first.coordinate {
            rest = rest.dropFirst()
        }
        points += rest
    }
}
