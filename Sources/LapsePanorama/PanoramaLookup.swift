// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo

/// The panorama chosen for one route point.
public struct PanoramaMatch: Sendable, Codable, Equatable {
    /// Index of the route point (0-based).
    public var index: Int
    /// The route point.
    public var coordinate: Coordinate
    /// Metres from the start of the route.
    public var distanceAlongRoute: Double
    /// Direction of travel at the point, degrees clockwise from north.
    public var routeHeading: Double
    /// The nearest panorama within the radius, or `nil` (no imagery here).
    public var panorama: PanoramaMetadata?
    /// Metres from the route point to the panorama.
    public var distance: Double?
    /// True when the previous point chose the same panorama (a consecutive duplicate: not a new frame source).
    public var repeatsPrevious: Bool

    /// A match of a route point with its nearest panorama (see the properties).
    public init(
        index: Int, coordinate: Coordinate, distanceAlongRoute: Double, routeHeading: Double,
        panorama: PanoramaMetadata?, distance: Double?, repeatsPrevious: Bool
    ) {
        self.index = index
        self.coordinate = coordinate
        self.distanceAlongRoute = distanceAlongRoute
        self.routeHeading = routeHeading
        self.panorama = panorama
        self.distance = distance
        self.repeatsPrevious = repeatsPrevious
    }
}

/// How much of a route has imagery.
public struct CoverageSummary: Sendable, Codable, Equatable {
    /// Route points looked up.
    public var points: Int
    /// Points with a panorama within the radius.
    public var withImagery: Int
    /// Points without one.
    public var withoutImagery: Int
    /// Distinct panoramas chosen.
    public var uniquePanoramas: Int
    /// Points that chose the same panorama as the point before (dropped as frame sources).
    public var consecutiveDuplicates: Int

    /// The coverage of `matches`, counted.
    public init(_ matches: [PanoramaMatch]) {
        points = matches.count
        withImagery = matches.filter { $0.panorama != nil }.count
        withoutImagery = points - withImagery
        uniquePanoramas = Set(matches.compactMap { $0.panorama.map { "\($0.source)/\($0.id)" } }).count
        consecutiveDuplicates = matches.filter(\.repeatsPrevious).count
    }
}

/// Finds the panorama of each route point.
public enum PanoramaLookup {
    /// Looks up every point (sources batch the requests).
    /// - Parameters:
    ///   - points: resampled route points.
    ///   - source: where to look.
    ///   - radius: metres, > 0.
    /// - Returns: one match per point, in order, with consecutive duplicates marked.
    /// - Throws: ``LapseError`` `.usage` for a bad radius; the source's errors. No coverage is not an error here.
    public static func matches(
        for points: [RoutePoint], in source: any PanoramaSource,
        radius: Double
    ) async throws -> [PanoramaMatch] {
        guard radius.isFinite, radius > 0 else {
            throw LapseError.usage("the radius must be a positive number of metres")
        }
        let found = try await source.nearest(to: points.map(\.coordinate), radius: radius)
        var result: [PanoramaMatch] = []
        var previous: String?
        for (i, (point, pano)) in zip(points, found).enumerated() {
            let key = pano.map { "\($0.source)/\($0.id)" }
            result.append(
                PanoramaMatch(
                    index: i, coordinate: point.coordinate, distanceAlongRoute: point.distanceAlongRoute,
                    routeHeading: point.heading, panorama: pano,
                    distance: pano.map { point.coordinate.distance(to: $0.coordinate) },
                    repeatsPrevious: key != nil && key == previous))
            previous = key
        }
        return result
    }
}
